"""Writing the item columns of ``columns/`` (their layout: ``engine.index.columns``): appended in place batch by
batch by the writer before its commit, written whole for a remove (through the journal) or a rebuild, and built
from ``items.jsonl`` for a gallery that has none (made before they were kept) when it is opened."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from engine.index.columns import (
    CODED,
    COLUMNS_DIR,
    FIXED,
    IDS_FILE,
    LOOKUP_FILE,
    LOOKUP_MAGIC,
    META_KEY,
    NAMES_FILE,
    Codes,
    ColumnsStale,
    ItemColumns,
    check_rows,
    id_hashes,
    open_columns,
    stamp,
)
from engine.index.errors import GalleryBusyError, GalleryCorruptError
from engine.index.items import ITEMS_FILE, GalleryItem
from engine.index.layout import GALLERY_FILE, ProgressFn
from engine.index.writer_lock import writing
from engine.kernel import jsonio
from engine.kernel.atomic import atomic_target, atomic_write_json
from engine.kernel.permissions import owner_only_umask

#: the id look-up is sorted again once the rows past its sorted part exceed this many, or an eighth of the rows
LOOKUP_TAIL = 65_536
_PARSE_BLOCK = 64 << 20  # bytes of items.jsonl parsed at a time when columns are built


def encode(records: Sequence[GalleryItem | Mapping[str, Any]], line_lengths: Iterable[int], start: int,
           ids_start: int, codes: Mapping[str, Codes]) -> tuple[dict[str, np.ndarray], bytes]:
    """The fixed-width columns of consecutive items (new names get codes in ``codes``) and their ids' bytes.
    ``start``: where the first item's line starts in items.jsonl; ``ids_start``: where its id starts in ids.bin."""
    ids, camera, identity, modality, time = [], [], [], [], []
    for record in records:
        get = record.get if isinstance(record, Mapping) else partial(getattr, record)
        ids.append(get("id").encode("utf-8"))
        camera.append(codes["camera"].code(get("camera")))
        identity.append(codes["identity"].code(get("identity")))
        modality.append(codes["modality"].code(get("modality")))
        value = get("time")
        time.append(np.nan if value is None else value)
    lengths = np.fromiter(line_lengths, dtype=np.int64, count=len(ids))
    arrays = {
        "ids_end.i64": ids_start + np.cumsum(np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))),
        "offset.i64": start + np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64),
        "camera.i32": np.asarray(camera, dtype=np.int32),
        "identity.i32": np.asarray(identity, dtype=np.int32),
        "modality.i32": np.asarray(modality, dtype=np.int32),
        "time.f64": np.asarray(time, dtype=np.float64),
        "id_hash.u64": id_hashes(i.decode("utf-8") for i in ids),
    }
    return arrays, b"".join(ids)


def entry_of(meta: Mapping[str, Any], names: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """What ``gallery.json`` records under ``columns`` for ``meta``'s items with these vocabularies."""
    return dict(stamp(meta), names={column: len(names[column]) for column in CODED})


def recorded(meta: Mapping[str, Any]) -> bool:
    """Whether ``meta`` records columns written for its committed items."""
    entry = meta.get(META_KEY)
    return isinstance(entry, dict) and {k: entry.get(k) for k in ("count", "items_bytes")} == stamp(meta)


def _write_at(path: Path, position: int, data: bytes | memoryview) -> None:
    with open(path, "r+b" if path.exists() else "w+b") as fh:
        fh.truncate(position)
        fh.seek(position)
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def append(root: Path, columns: ItemColumns, records: Sequence[GalleryItem], line_lengths: Sequence[int],
           start: int) -> dict[str, list[str]]:
    """Write the columns of ``records`` after the committed rows of ``columns`` (dropping an uncommitted tail
    first), names included; returns the vocabularies (the caller records their sizes at its commit)."""
    folder = root / COLUMNS_DIR
    folder.mkdir(exist_ok=True)
    count = len(columns)
    codes = {"camera": Codes(columns.cameras.names), "identity": Codes(columns.identities.names),
             "modality": Codes(columns.modalities.names)}
    ids_start = int(columns.array("ids_end.i64")[-1]) if count else 0
    arrays, blob = encode(records, line_lengths, start, ids_start, codes)
    for name, dtype in FIXED.items():
        _write_at(folder / name, count * dtype.itemsize, memoryview(arrays[name].astype(dtype, copy=False)).cast("B"))
    _write_at(folder / IDS_FILE, ids_start, blob)
    names = {column: codes[column].names for column in CODED}
    if any(len(names[c]) != len(columns.names()[c]) for c in CODED) or not (folder / NAMES_FILE).exists():
        atomic_write_json(folder / NAMES_FILE, names)
    if not (folder / LOOKUP_FILE).exists():
        write_lookup(folder / LOOKUP_FILE, np.zeros(0, dtype=np.uint64))
    return names


def write_lookup(path: Path, hashes: np.ndarray) -> None:
    """``lookup.bin`` over ``hashes`` (row i's digest), sorted, written atomically."""
    order = np.argsort(hashes, kind="stable")
    with atomic_target(path) as tmp, open(tmp, "wb") as fh:
        fh.write(LOOKUP_MAGIC + len(hashes).to_bytes(8, "little"))
        fh.write(memoryview(np.ascontiguousarray(hashes[order], dtype="<u8")).cast("B"))
        fh.write(memoryview(order.astype("<i8")).cast("B"))


def refresh_lookup(root: Path, columns: ItemColumns) -> bool:
    """Sort the id look-up again over every committed row when too many rows lie past its sorted part."""
    path = root / COLUMNS_DIR / LOOKUP_FILE
    covered = int.from_bytes(path.read_bytes()[8:16], "little") if path.exists() else 0
    count = len(columns)
    if count - covered <= max(LOOKUP_TAIL, count // 8):
        return False
    write_lookup(path, np.asarray(columns.array("id_hash.u64")))
    return True


def write_all(folder: Path, arrays: Mapping[str, np.ndarray], blob: bytes | np.ndarray, names: Mapping[str, list],
              suffix: str = "") -> list[tuple[Path, Path]]:
    """Every column file of ``folder`` written whole under ``name + suffix``; returns (written, final) pairs."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []

    def put(name: str, data: bytes | memoryview) -> None:
        path = folder / (name + suffix)
        with open(path, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        written.append((path, folder / name))

    for name, dtype in FIXED.items():
        put(name, memoryview(np.ascontiguousarray(arrays[name], dtype=dtype)).cast("B"))
    put(IDS_FILE, memoryview(np.ascontiguousarray(blob, dtype=np.uint8) if not isinstance(blob, bytes)
                             else np.frombuffer(blob, dtype=np.uint8)).cast("B"))
    put(NAMES_FILE, json.dumps(dict(names), ensure_ascii=False).encode("utf-8"))
    hashes = np.asarray(arrays["id_hash.u64"])
    order = np.argsort(hashes, kind="stable")
    put(LOOKUP_FILE, LOOKUP_MAGIC + len(hashes).to_bytes(8, "little") + hashes[order].astype("<u8").tobytes()
        + order.astype("<i8").tobytes())
    return written


def kept_rows(columns: ItemColumns, keep: np.ndarray,
              lengths: Sequence[int]) -> tuple[dict[str, np.ndarray], bytes, dict[str, list[str]]]:
    """The columns of the rows ``keep`` (ascending) as a gallery of those rows alone, their lines ``lengths``
    bytes long; names no kept row uses are dropped (codes in order of first use, as an append gives them)."""
    ends = np.asarray(columns.array("ids_end.i64"))
    starts = np.concatenate([[0], ends[:-1]]).astype(np.int64)
    blob = np.asarray(columns.ids_blob)
    pieces = [bytes(blob[starts[r] : ends[r]]) for r in keep.tolist()]
    arrays = {name: np.asarray(columns.array(name))[keep] for name in FIXED}
    arrays["ids_end.i64"] = np.cumsum(np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces)))
    line_ends = np.cumsum(np.asarray(lengths, dtype=np.int64))
    arrays["offset.i64"] = (line_ends - np.asarray(lengths, dtype=np.int64)).astype(np.int64)
    names = {}
    for column, listed in columns.names().items():
        codes = arrays[f"{column}.i32"]
        used, first = np.unique(codes[codes >= 0], return_index=True)
        ordered = used[np.argsort(first)]
        remap = np.full(len(listed) + 1, -1, dtype=np.int32)
        remap[ordered] = np.arange(len(ordered), dtype=np.int32)
        arrays[f"{column}.i32"] = remap[codes]  # code −1 reads remap[-1] = −1
        names[column] = [listed[int(code)] for code in ordered]
    return arrays, b"".join(pieces), names


def parse(items_path: Path, items_bytes: int, count: int,
          progress: ProgressFn | None = None) -> tuple[dict[str, np.ndarray], bytes, dict[str, list[str]]]:
    """The columns of the committed part of ``items.jsonl`` (bytes past ``items_bytes`` are an interrupted
    append and are ignored), read block by block; ``GalleryCorruptError`` naming the file and line."""
    codes = {column: Codes() for column in CODED}
    parts: list[dict[str, np.ndarray]] = []
    blobs: list[bytes] = []
    rows = read = parsed = ids_bytes = 0
    try:
        fh = open(items_path, "rb")  # noqa: SIM115 - closed by the with below
    except OSError as exc:
        raise GalleryCorruptError(f"cannot read {items_path}: {exc}") from exc
    with fh:
        size = os.fstat(fh.fileno()).st_size
        if size < items_bytes:
            raise GalleryCorruptError(f"{items_path} holds {size} bytes but gallery.json records {items_bytes}: "
                                      f"the item list is truncated")
        carry = b""
        while read < items_bytes:
            block = fh.read(min(_PARSE_BLOCK, items_bytes - read))
            if not block:
                raise GalleryCorruptError(f"{items_path}: could not read past byte {read}")
            read += len(block)
            data = carry + block
            cut = data.rfind(b"\n") + 1
            if read == items_bytes and cut != len(data):
                raise GalleryCorruptError(f"{items_path}: the last committed line is incomplete")
            lines, carry = data[:cut].split(b"\n")[:-1], data[cut:]
            records = []
            for number, line in enumerate(lines, start=rows + 1):
                try:
                    record = jsonio.loads(line, f"{items_path} line {number}")
                except jsonio.JsonInputError as exc:
                    raise GalleryCorruptError(str(exc)) from None
                if not isinstance(record, dict) or not isinstance(record.get("id"), str):
                    raise GalleryCorruptError(f"{items_path} line {number} is not an item object with an 'id'")
                records.append(record)
            arrays, blob = encode(records, (len(line) + 1 for line in lines), parsed, ids_bytes, codes)
            parts.append(arrays)
            blobs.append(blob)
            parsed += cut
            ids_bytes += len(blob)
            rows += len(records)
            if progress is not None:
                progress(min(rows, count), count)
    if rows != count:
        raise GalleryCorruptError(f"{items_path} holds {rows} items but gallery.json records {count}")
    joined = {name: (np.concatenate([p[name] for p in parts]) if parts else np.zeros(0, dtype=dtype))
              for name, dtype in FIXED.items()}
    return joined, b"".join(blobs), {column: codes[column].names for column in CODED}


def in_memory(arrays: Mapping[str, np.ndarray], blob: bytes, names: Mapping[str, list[str]],
              items_bytes: int) -> ItemColumns:
    """Columns held in memory (where the column files could not be written)."""
    hashes = np.asarray(arrays["id_hash.u64"])
    order = np.argsort(hashes, kind="stable")
    return ItemColumns(arrays, np.frombuffer(blob, dtype=np.uint8), names, (hashes[order], order.astype(np.int64)),
                       items_bytes)


def load(root: Path, meta: dict[str, Any], progress: ProgressFn | None = None) -> tuple[dict[str, Any], ItemColumns]:
    """(the metadata, the committed columns): memory-mapped when the column files match ``meta``; else built
    from ``items.jsonl`` (``progress(rows, count)``) and, when the write lock is free and the folder writable,
    written to ``columns/`` and recorded in ``gallery.json`` (once per gallery); else held in memory."""
    try:
        return meta, open_columns(root, meta)
    except ColumnsStale:
        pass
    arrays, blob, names = parse(root / ITEMS_FILE, meta["items_bytes"], meta["count"], progress)
    columns = in_memory(arrays, blob, names, meta["items_bytes"])
    check_rows(columns, root / ITEMS_FILE)
    try:
        with owner_only_umask(), writing(root):
            current = jsonio.read(root / GALLERY_FILE, expect=dict)
            if current != meta:
                return meta, columns  # a writer committed meanwhile: the caller reads again when it must
            for written, final in write_all(root / COLUMNS_DIR, arrays, blob, names, suffix=".building"):
                os.replace(written, final)
            written = dict(meta, **{META_KEY: entry_of(meta, names)})
            atomic_write_json(root / GALLERY_FILE, written, indent=1)
            return written, open_columns(root, written)
    except (GalleryBusyError, OSError, ColumnsStale, ValueError):
        return meta, columns
