"""The item columns a search reads per candidate row (id, camera, time, identity, modality, the line offset in
``items.jsonl``), memory-mapped from ``columns/`` so that opening a gallery of millions of items reads almost
nothing (docs/scaling.md).

Files in ``columns/`` (raw little-endian arrays, row i = item row i; only the first ``count`` rows that
``gallery.json`` records are read, bytes past them are an interrupted append):

    ids.bin            the item ids, UTF-8, one after the other
    ids_end.i64        where each id ends in ids.bin
    offset.i64         where each item's line starts in items.jsonl
    camera.i32 identity.i32 modality.i32
                       codes into names.json (−1: none)
    time.f64           seconds (NaN: none)
    id_hash.u64        a 64-bit BLAKE2b digest of each id
    names.json         the names the codes stand for, per column (only the first ``names[column]`` that
                       ``gallery.json`` records count)
    lookup.bin         the id digests of the first M rows sorted, and their rows: an id is found by binary
                       search there, or among the newer rows past M

``gallery.json`` records under ``columns`` the ``count`` and ``items_bytes`` they were written for; columns whose
record does not match the gallery's (made before columns were kept, or by a writer that did not keep them) are
built again from ``items.jsonl`` (``engine.index.column_files``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from engine.index.errors import GalleryCorruptError
from engine.kernel import jsonio

COLUMNS_DIR = "columns"
META_KEY = "columns"
#: file name → dtype of the fixed-width columns
FIXED: dict[str, np.dtype] = {
    "ids_end.i64": np.dtype("<i8"),
    "offset.i64": np.dtype("<i8"),
    "camera.i32": np.dtype("<i4"),
    "identity.i32": np.dtype("<i4"),
    "modality.i32": np.dtype("<i4"),
    "time.f64": np.dtype("<f8"),
    "id_hash.u64": np.dtype("<u8"),
}
IDS_FILE = "ids.bin"
NAMES_FILE = "names.json"
LOOKUP_FILE = "lookup.bin"
LOOKUP_MAGIC = b"LNLOOKUP"
CODED = ("camera", "identity", "modality")
_ITER_BLOCK = 65_536
_RECENT = 4096  # single-id look-ups remembered per columns snapshot


class ColumnsStale(Exception):
    """The column files do not describe the gallery's committed items (they must be built again)."""


def id_hash(item_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(item_id.encode("utf-8"), digest_size=8).digest(), "little")


def id_hashes(item_ids: Iterable[str]) -> np.ndarray:
    return np.fromiter((id_hash(i) for i in item_ids), dtype=np.uint64)


class Codes:
    """Strings stored as int32 codes (−1 = missing) with their vocabulary (``load``: reads the vocabulary when it
    is first needed, so that opening a gallery with a million identities does not read them)."""

    def __init__(self, names: Iterable[str] = (), load: Callable[[], list[str]] | None = None) -> None:
        self._names: list[str] | None = None if load is not None else list(names)
        self._load = load
        self._code: dict[str, int] | None = None

    @property
    def names(self) -> list[str]:
        if self._names is None:
            self._names = list(self._load())
        return self._names

    def _codes(self) -> dict[str, int]:
        if self._code is None:
            self._code = {name: i for i, name in enumerate(self.names)}
        return self._code

    def code(self, name: str | None) -> int:
        """The code of ``name``, a new one when it has none yet (−1 for None)."""
        if name is None:
            return -1
        codes = self._codes()
        found = codes.get(name)
        if found is None:
            found = codes[name] = len(self.names)
            self.names.append(name)
        return found

    def lookup(self, name: str) -> int | None:
        return self._codes().get(name)


class IdColumn(Sequence[str]):
    """The item ids in row order, decoded on demand from the ids blob (a slice is another view, no copy)."""

    def __init__(self, blob: np.ndarray, ends: np.ndarray, lookup: RowLookup | None = None,
                 start: int = 0, stop: int | None = None) -> None:
        self._blob, self._ends, self._lookup = blob, ends, lookup
        self._start = start
        self._stop = len(ends) if stop is None else stop

    def __len__(self) -> int:
        return self._stop - self._start

    def _bounds(self, row: int) -> tuple[int, int]:
        return (int(self._ends[row - 1]) if row else 0), int(self._ends[row])

    def __getitem__(self, key):  # noqa: ANN001 - int or slice, as a Sequence takes
        if isinstance(key, slice):
            start, stop, step = key.indices(len(self))
            if step != 1:
                return [self[i] for i in range(start, stop, step)]
            return IdColumn(self._blob, self._ends, None, self._start + start, self._start + max(start, stop))
        row = int(key)
        if row < 0:
            row += len(self)
        if not 0 <= row < len(self):
            raise IndexError(f"row {key} is outside 0..{len(self) - 1}")
        a, b = self._bounds(self._start + row)
        return bytes(self._blob[a:b]).decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        for first in range(self._start, self._stop, _ITER_BLOCK):
            last = min(self._stop, first + _ITER_BLOCK)
            base = self._bounds(first)[0]
            ends = (np.asarray(self._ends[first:last]) - base).tolist()
            data = bytes(self._blob[base : base + (ends[-1] if ends else 0)])
            begin = 0
            for end in ends:
                yield data[begin:end].decode("utf-8")
                begin = end

    def separated_bytes(self) -> Iterator[bytes]:
        """Every id as UTF-8 with a newline before it, in row order, a block of ids per chunk: the bytes that
        hashing the ids one by one would read, made from the id file without a string per id."""
        for first in range(self._start, self._stop, _ITER_BLOCK):
            last = min(self._stop, first + _ITER_BLOCK)
            base = self._bounds(first)[0]
            ends = np.asarray(self._ends[first:last], dtype=np.int64) - base
            data = np.asarray(self._blob[base : base + int(ends[-1])], dtype=np.uint8)
            starts = np.concatenate((np.zeros(1, dtype=np.int64), ends[:-1]))
            yield np.insert(data, starts, ord("\n")).tobytes()

    def __contains__(self, item_id: object) -> bool:
        if self._lookup is not None and self._start == 0 and self._stop == len(self._ends):
            return item_id in self._lookup
        return any(i == item_id for i in self)

    def index(self, item_id: Any, start: int = 0, stop: int | None = None) -> int:  # noqa: ARG002
        if self._lookup is not None and isinstance(item_id, str) and self._start == 0:
            row = self._lookup.get(item_id)
            if row is not None:
                return row
            raise ValueError(f"{item_id!r} is not in the item ids")
        return super().index(item_id)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"IdColumn({len(self)} ids)"


class RowLookup(Mapping[str, int]):
    """Item id → row: binary search over the sorted digests of the first rows, then the newer rows past them;
    every hit is confirmed against the id itself."""

    def __init__(self, ids_blob: np.ndarray, ids_end: np.ndarray, hashes: np.ndarray,
                 sorted_hashes: np.ndarray, sorted_rows: np.ndarray) -> None:
        self._ids = IdColumn(ids_blob, ids_end)
        self._hashes = hashes
        covered = min(len(sorted_hashes), len(hashes))
        self._sorted_hashes, self._sorted_rows = sorted_hashes, sorted_rows
        self._covered = covered
        self._tail: tuple[np.ndarray, np.ndarray] | None = None
        self._recent: dict[str, int] = {}

    def _tail_sorted(self) -> tuple[np.ndarray, np.ndarray]:
        if self._tail is None:
            tail = np.asarray(self._hashes[self._covered :])
            order = np.argsort(tail, kind="stable")
            self._tail = tail[order], order.astype(np.int64) + self._covered
        return self._tail

    def rows_of(self, item_ids: Sequence[str]) -> np.ndarray:
        """The row of each id, −1 where the gallery has none."""
        wanted = id_hashes(item_ids)
        out = np.full(len(wanted), -1, dtype=np.int64)
        count = len(self._hashes)
        for keys, rows in ((self._sorted_hashes, self._sorted_rows), self._tail_sorted()):
            if not len(keys) or not wanted.size:
                continue
            lo = np.searchsorted(keys, wanted, side="left")
            hi = np.searchsorted(keys, wanted, side="right")
            for i in np.flatnonzero((hi > lo) & (out < 0)).tolist():
                for row in np.asarray(rows[lo[i] : hi[i]]).tolist():
                    if row < count and self._ids[row] == item_ids[i]:
                        out[i] = row
                        break
        return out

    def _one(self, item_id: object) -> int:
        """The row of one id (−1: none), remembered for the ids asked last (a step asks for its example's often)."""
        if not isinstance(item_id, str):
            return -1
        row = self._recent.get(item_id)
        if row is None:
            if len(self._recent) >= _RECENT:
                self._recent.clear()
            row = self._recent[item_id] = int(self.rows_of([item_id])[0])
        return row

    def __getitem__(self, item_id: str) -> int:
        row = self._one(item_id)
        if row < 0:
            raise KeyError(item_id)
        return row

    def __contains__(self, item_id: object) -> bool:
        return self._one(item_id) >= 0

    def __len__(self) -> int:
        return len(self._hashes)

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)


class ItemColumns:
    """Per-row columns for filters and relevance, the item ids and the byte offset of each line in
    ``items.jsonl``; memory-mapped from the column files, or held in memory where they could not be written."""

    def __init__(self, arrays: Mapping[str, np.ndarray], ids_blob: np.ndarray,
                 names: Mapping[str, Sequence[str]] | NamesFile, lookup: tuple[np.ndarray, np.ndarray],
                 items_bytes: int) -> None:
        self._arrays = dict(arrays)
        self.items_bytes = items_bytes
        if isinstance(names, NamesFile):
            self.cameras, self.identities, self.modalities = (Codes(load=partial(names.get, column))
                                                              for column in CODED)
        else:
            self.cameras, self.identities, self.modalities = (Codes(names.get(column, ())) for column in CODED)
        ends = self._arrays["ids_end.i64"]
        self.row_of = RowLookup(ids_blob, ends, self._arrays["id_hash.u64"], *lookup)
        self.ids = IdColumn(ids_blob, ends, self.row_of)
        self.ids_blob = ids_blob

    @classmethod
    def empty(cls) -> ItemColumns:
        arrays = {name: np.zeros(0, dtype=dtype) for name, dtype in FIXED.items()}
        return cls(arrays, np.zeros(0, dtype=np.uint8), {}, (np.zeros(0, np.uint64), np.zeros(0, np.int64)), 0)

    def __len__(self) -> int:
        return len(self._arrays["offset.i64"])

    def array(self, name: str) -> np.ndarray:
        """The named fixed-width column (a key of ``FIXED``)."""
        return self._arrays[name]

    def rows_of(self, item_ids: Sequence[str]) -> np.ndarray:
        """The row of each id, −1 where the gallery has none (one vectorised look-up)."""
        return self.row_of.rows_of(list(item_ids))

    def names(self) -> dict[str, list[str]]:
        return {"camera": self.cameras.names, "identity": self.identities.names, "modality": self.modalities.names}

    @property
    def camera(self) -> np.ndarray:
        return self._arrays["camera.i32"]

    @property
    def time(self) -> np.ndarray:
        return self._arrays["time.f64"]

    @property
    def identity(self) -> np.ndarray:
        return self._arrays["identity.i32"]

    @property
    def modality(self) -> np.ndarray:
        return self._arrays["modality.i32"]

    @property
    def offset(self) -> np.ndarray:
        return self._arrays["offset.i64"]


def stamp(meta: Mapping[str, Any]) -> dict[str, int]:
    """What ``gallery.json`` records under ``columns`` when they describe its committed items."""
    return {"count": int(meta["count"]), "items_bytes": int(meta["items_bytes"])}


def _map(path: Path, dtype: np.dtype, rows: int, offset: int = 0) -> np.ndarray:
    if rows == 0:
        return np.zeros(0, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=(rows,))


def read_lookup(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """(sorted digests, their rows) from ``lookup.bin``, memory-mapped."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
        size = path.stat().st_size
    except OSError as exc:
        raise ColumnsStale(f"{path}: {exc}") from None
    if len(head) != 16 or head[:8] != LOOKUP_MAGIC:
        raise ColumnsStale(f"{path} is not an id look-up file")
    rows = int.from_bytes(head[8:], "little")
    if size != 16 + 16 * rows:
        raise ColumnsStale(f"{path} holds {size} bytes, its header says {rows} rows")
    return _map(path, np.dtype("<u8"), rows, 16), _map(path, np.dtype("<i8"), rows, 16 + 8 * rows)


def open_columns(root: Path, meta: Mapping[str, Any], names: Mapping[str, list[str]] | None = None) -> ItemColumns:
    """The committed columns memory-mapped; ``ColumnsStale`` when they are absent or do not match ``meta``.
    ``names``: the vocabularies when the caller holds them (a writer that just wrote them), else read on use."""
    recorded = meta.get(META_KEY)
    if not isinstance(recorded, dict) or {k: recorded.get(k) for k in ("count", "items_bytes")} != stamp(meta):
        raise ColumnsStale("the columns were not written for the gallery's committed items")
    folder = root / COLUMNS_DIR
    count = int(meta["count"])
    arrays = {}
    for name, dtype in FIXED.items():
        path = folder / name
        if not path.is_file() or path.stat().st_size < count * dtype.itemsize:
            raise ColumnsStale(f"column file {path} is missing or short")
        arrays[name] = _map(path, dtype, count)
    ids_bytes = int(arrays["ids_end.i64"][-1]) if count else 0
    ids_path = folder / IDS_FILE
    if not ids_path.is_file() or ids_path.stat().st_size < ids_bytes:
        raise ColumnsStale(f"column file {ids_path} is missing or short")
    counts = recorded.get("names")
    if not isinstance(counts, dict) or not all(isinstance(counts.get(c), int) for c in CODED):
        raise ColumnsStale("gallery.json records no name counts for the columns")
    if not (folder / NAMES_FILE).is_file():
        raise ColumnsStale(f"column file {folder / NAMES_FILE} is missing")
    lookup = read_lookup(folder / LOOKUP_FILE)
    vocabularies = NamesFile(folder / NAMES_FILE, counts) if names is None else names
    return ItemColumns(arrays, _map(ids_path, np.dtype(np.uint8), ids_bytes), vocabularies, lookup,
                       int(meta["items_bytes"]))


class NamesFile:
    """``names.json``, read when a vocabulary is first needed and cut to the counts ``gallery.json`` records."""

    def __init__(self, path: Path, counts: Mapping[str, int]) -> None:
        self.path, self.counts = path, dict(counts)
        self._read: dict[str, list[str]] | None = None

    def get(self, column: str) -> list[str]:
        if self._read is None:
            try:
                names = jsonio.read(self.path, expect=dict)
            except (OSError, ValueError) as exc:
                raise GalleryCorruptError(f"{self.path} is unreadable ({exc}); run `lineup gallery rebuild`") from None
            read = {}
            for name in CODED:
                listed, wanted = names.get(name), self.counts[name]
                if not isinstance(listed, list) or len(listed) < wanted or not all(isinstance(v, str)
                                                                                   for v in listed[:wanted]):
                    raise GalleryCorruptError(f"{self.path} lists fewer {name} names than gallery.json records; "
                                              f"run `lineup gallery rebuild`")
                read[name] = listed[:wanted]
            self._read = read
        return self._read[column]


def check_rows(columns: ItemColumns, path: Path) -> None:
    """``GalleryCorruptError`` when an id appears twice."""
    hashes = np.asarray(columns.array("id_hash.u64"))
    if hashes.size < 2:
        return
    ordered = np.sort(hashes)
    clashes = np.flatnonzero(ordered[1:] == ordered[:-1])
    if not clashes.size:
        return
    seen: dict[str, int] = {}
    for row in np.flatnonzero(np.isin(hashes, ordered[clashes])).tolist():
        item_id = columns.ids[row]
        if item_id in seen:
            raise GalleryCorruptError(f"{path} lists item id {item_id!r} more than once")
        seen[item_id] = row
