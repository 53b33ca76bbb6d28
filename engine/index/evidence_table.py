"""The attribute evidence of a gallery's items, on disk beside the gallery (``<gallery>/attributes/``).

Layout (generation ``g`` changes only when the whole table is rewritten)::

    evidence.json              commit point: generation, committed rows and id bytes, columns, sources
    ids-<g>.txt                one item id per line; line i = evidence row i
    <source>-<g>.f16.npy       float16 [rows, 114 + 18] per source ("pixels", "model", "objects", "pretrained"): the
                               probability of every ontology (key, value) pair, then one confidence per key

A table lists only the sources it holds (``sources`` in ``evidence.json``), so a table written before a
source existed (e.g. ``{"pixels", "model"}`` only, before carried objects) opens and ranks as it is; its
first write with the new source adds that source's file with NaN (no evidence) for the earlier rows.

A key a source said nothing about holds NaN in its probability and confidence columns. Evidence rows are
matched to gallery rows by item id when the table is opened (``row_map``), so a gallery whose items were
removed or re-ordered keeps its evidence; the search then gathers only its candidates' rows.

Writes: ``append`` adds rows for new ids past the committed ones (fsynced), then rewrites ``evidence.json``
atomically, like the gallery's own add (a killed append leaves an invisible tail that the next writer trims);
``rewrite`` writes a new generation under new names and switches ``evidence.json`` to it in one atomic
replace, then deletes the old generation. One writer at a time: both hold the gallery's write lock
(``engine.index.writer_lock``). Readers take no lock: ``EvidenceTable.read`` reads again when a writer
committed while it was reading, and maps every source's file at once (a rewrite deletes the old generation).
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engine.index import vector_file
from engine.index.errors import GalleryCorruptError, GalleryInputError
from engine.index.writer_lock import writing
from engine.kernel import jsonio
from engine.kernel.atomic import atomic_write_json
from engine.kernel.ontology import ONTOLOGY
from engine.kernel.paths import PathEscapeError, contained
from engine.kernel.permissions import owner_only_umask
from engine.kernel.timefmt import utc_stamp
from engine.perception.attributes.evidence import AttributeEvidence, AttributeEvidenceError

FOLDER = "attributes"
META_FILE = "evidence.json"
FORMAT_VERSION = 1
READ_ATTEMPTS = 5  # reads of a table that a writer keeps committing to while it is read
#: Evidence sources: the crop's pixels, the checkpoint's attribute heads, the objects the detector found with
#: the person (``engine.perception.attributes.objects``) and the shipped pretrained attribute network
#: (``engine.perception.attributes.pretrained``).
SOURCES: tuple[str, ...] = ("pixels", "model", "objects", "pretrained")

#: (key, value) of every probability column, in ontology order; then one confidence column per key.
VALUE_COLUMNS: tuple[tuple[str, str], ...] = tuple((k, v) for k in ONTOLOGY.keys for v in ONTOLOGY.attributes[k])
COLUMN_OF: dict[tuple[str, str], int] = {pair: i for i, pair in enumerate(VALUE_COLUMNS)}
CONFIDENCE_COLUMN: dict[str, int] = {k: len(VALUE_COLUMNS) + i for i, k in enumerate(ONTOLOGY.keys)}
WIDTH = len(VALUE_COLUMNS) + len(ONTOLOGY.keys)
COLUMN_NAMES: tuple[str, ...] = (*(f"{k}={v}" for k, v in VALUE_COLUMNS), *(f"{k}:confidence" for k in ONTOLOGY.keys))

#: One item's evidence: source name → AttributeEvidence (or its ``to_dict`` form). Sources left out: none.
EvidenceRecord = Mapping[str, AttributeEvidence | Mapping[str, Any]]


def folder_of(gallery_root: str | Path) -> Path:
    return Path(gallery_root) / FOLDER


def _check_source(name: str) -> None:
    if name not in SOURCES:
        raise GalleryInputError(f"evidence source must be one of {list(SOURCES)}, got {name!r}")


def _as_evidence(value: AttributeEvidence | Mapping[str, Any], where: str) -> AttributeEvidence:
    if isinstance(value, AttributeEvidence):
        return value
    try:
        return AttributeEvidence.from_dict(dict(value))
    except (AttributeEvidenceError, TypeError, ValueError) as exc:
        raise GalleryInputError(f"{where}: {exc}") from None


def encode_rows(records: Sequence[EvidenceRecord], source: str) -> tuple[np.ndarray, set[str]]:
    """float32 [len(records), WIDTH] for one source (NaN where the source says nothing) and the keys it covers."""
    out = np.full((len(records), WIDTH), np.nan, dtype=np.float32)
    covered: set[str] = set()
    for i, record in enumerate(records):
        found = record.get(source)
        if found is None:
            continue
        evidence = _as_evidence(found, f"evidence record {i}, source {source!r}")
        for key, dist in evidence.probabilities.items():
            columns = [COLUMN_OF[(key, v)] for v in ONTOLOGY.attributes[key]]
            out[i, columns] = [dist.get(v, 0.0) for v in ONTOLOGY.attributes[key]]
            out[i, CONFIDENCE_COLUMN[key]] = evidence.confidence[key]
            covered.add(key)
    return out, covered


@dataclass(frozen=True)
class _Files:
    root: Path
    generation: int

    def _inside(self, name: str) -> Path:
        try:
            contained(self.root, name, "evidence file")
        except PathEscapeError as exc:
            raise GalleryCorruptError(str(exc)) from None
        return self.root / name

    def ids(self) -> Path:
        return self._inside(f"ids-{self.generation}.txt")

    def matrix(self, source: str) -> Path:
        return self._inside(f"{source}-{self.generation}.f16.npy")


class EvidenceTable:
    """The committed evidence of one gallery folder (read with ``EvidenceTable.read``, written with ``append``
    and ``rewrite``). ``sources``: source name → {"keys": keys with evidence, optional "fingerprint"}."""

    def __init__(self, folder: Path, meta: dict[str, Any], ids: list[str]) -> None:
        self.folder = folder
        self.meta = meta
        self.ids = ids
        self.row_of = {item_id: i for i, item_id in enumerate(ids)}
        self._matrices: dict[str, np.ndarray] = {}

    # ------------------------------------------------------------------------------------------- reading

    @classmethod
    def read(cls, gallery_root: str | Path) -> EvidenceTable | None:
        """The committed table, or None when the gallery has no evidence folder."""
        folder = folder_of(gallery_root)
        path = folder / META_FILE
        for attempt in range(READ_ATTEMPTS):
            stamp = _stamp_or_none(folder)
            if stamp is None:
                return None
            try:
                return cls._read_once(folder, path)
            except (GalleryCorruptError, FileNotFoundError):
                if attempt + 1 == READ_ATTEMPTS or _stamp_or_none(folder) == stamp:
                    raise  # nobody committed meanwhile: the files really disagree
                time.sleep(0.05)
        raise AssertionError("unreachable")

    @classmethod
    def _read_once(cls, folder: Path, path: Path) -> EvidenceTable:
        meta = _read_meta(path)
        files = _Files(folder, meta["generation"])
        ids = _read_ids(files.ids(), meta["ids_bytes"], meta["rows"])
        for source in meta["sources"]:
            vector_file.check(files.matrix(source), meta["rows"], WIDTH)
        table = cls(folder, meta, ids)
        for source in meta["sources"]:
            table.matrix(source)
        return table

    def __len__(self) -> int:
        return int(self.meta["rows"])

    @property
    def sources(self) -> dict[str, dict[str, Any]]:
        return self.meta["sources"]

    def covered(self, source: str) -> frozenset[str]:
        """Attribute keys the source has evidence for in at least one row."""
        return frozenset(self.sources.get(source, {}).get("keys", ()))

    def matrix(self, source: str) -> np.ndarray:
        """Read-only float16 memory map [rows, WIDTH] of one source."""
        if source not in self.sources:
            raise GalleryInputError(f"the evidence in {self.folder} has no source {source!r} "
                                    f"(it has {sorted(self.sources)})")
        if source not in self._matrices:
            self._matrices[source] = vector_file.rows_view(_Files(self.folder, self.meta["generation"]).matrix(source),
                                                           len(self), WIDTH)
        return self._matrices[source]

    def row_map(self, gallery_ids: Sequence[str]) -> np.ndarray:
        """int64 [len(gallery_ids)]: the evidence row of each gallery row, −1 where the item has none."""
        get = self.row_of.get
        return np.fromiter((get(i, -1) for i in gallery_ids), dtype=np.int64, count=len(gallery_ids))

    def gather(self, source: str, rows: np.ndarray, columns: Sequence[int]) -> np.ndarray:
        """float32 [len(rows), len(columns)] of evidence rows (−1 rows give NaN). Cost ∝ len(rows)."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.full((rows.size, len(columns)), np.nan, dtype=np.float32)
        present = rows >= 0
        if present.any() and len(columns):
            picked = self.matrix(source)[rows[present][:, None], np.asarray(columns, dtype=np.int64)[None, :]]
            out[present] = picked
        return out

    def record(self, row: int) -> dict[str, AttributeEvidence]:
        """One evidence row back as ``{source: AttributeEvidence}`` (probabilities renormalised after float16)."""
        out = {}
        for source in self.sources:
            values = np.asarray(self.matrix(source)[row], dtype=np.float64)
            evidence = AttributeEvidence({}, {})
            for key in ONTOLOGY.keys:
                confidence = values[CONFIDENCE_COLUMN[key]]
                if math.isnan(confidence):
                    continue
                probabilities = values[[COLUMN_OF[(key, v)] for v in ONTOLOGY.attributes[key]]]
                total = probabilities.sum()
                if not total > 0:
                    continue
                evidence.probabilities[key] = {v: float(p / total)
                                               for v, p in zip(ONTOLOGY.attributes[key], probabilities, strict=True)}
                evidence.confidence[key] = float(min(1.0, max(0.0, confidence)))
            if evidence.probabilities:
                out[source] = evidence
        return out


def _read_meta(path: Path) -> dict[str, Any]:
    try:
        meta = jsonio.read(path)
    except (OSError, ValueError) as exc:
        raise GalleryCorruptError(f"{path} is unreadable: {exc}") from None
    required = ("format", "generation", "rows", "ids_bytes", "columns", "sources")
    if not isinstance(meta, dict) or any(k not in meta for k in required):
        raise GalleryCorruptError(f"{path} lacks one of the fields {list(required)}")
    if meta["format"] != FORMAT_VERSION:
        raise GalleryCorruptError(f"{path} has format {meta['format']!r}; this program reads {FORMAT_VERSION}")
    if tuple(meta["columns"]) != COLUMN_NAMES:
        raise GalleryCorruptError(f"{path} was written for another ontology; recompute it with "
                                  f"`lineup gallery rebuild --attributes`")
    if isinstance(meta["generation"], bool) or not isinstance(meta["generation"], int) or meta["generation"] < 0:
        raise GalleryCorruptError(f"{path}: generation must be a whole number ≥ 0, got {meta['generation']!r}")
    unknown = set(meta["sources"]) - set(SOURCES)
    if unknown:
        raise GalleryCorruptError(f"{path} lists unknown evidence sources {sorted(unknown)}")
    return meta


def _read_ids(path: Path, committed_bytes: int, rows: int) -> list[str]:
    try:
        with open(path, "rb") as fh:
            data = fh.read(committed_bytes)
    except OSError as exc:
        raise GalleryCorruptError(f"cannot read {path}: {exc}") from exc
    if len(data) != committed_bytes:
        raise GalleryCorruptError(f"{path} holds {len(data)} bytes, evidence.json records {committed_bytes}")
    ids = data.decode("utf-8").split("\n")[:-1] if data else []
    if len(ids) != rows:
        raise GalleryCorruptError(f"{path} lists {len(ids)} ids, evidence.json records {rows}")
    return ids


# ------------------------------------------------------------------------------------------- writing


def _check_batch(ids: Sequence[str], records: Sequence[EvidenceRecord]) -> None:
    if len(ids) != len(records):
        raise GalleryInputError(f"evidence needs one record per item: {len(ids)} ids, {len(records)} records")
    if len(set(ids)) != len(ids):
        raise GalleryInputError("evidence item ids must be distinct within one write")
    for item_id in ids:
        if not isinstance(item_id, str) or not item_id.strip() or "\n" in item_id:
            raise GalleryInputError(f"evidence item id must be a non-empty single-line string, got {item_id!r}")
    for i, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise GalleryInputError(f"evidence record {i} must map sources to evidence, got {type(record).__name__}")
        for source in record:
            _check_source(source)


class _Writer:
    """Appends blocks of rows to one generation's files; ``commit`` makes them visible (``evidence.json``)."""

    def __init__(self, folder: Path, meta: dict[str, Any], model_fingerprint: str | None,
                 present: Mapping[str, int] | None = None) -> None:
        self.folder = folder
        self.present = present  # ids already in the table (appending) or None (a new generation)
        self.seen: set[str] = set()
        self.meta = dict(meta, sources={k: dict(v) for k, v in meta["sources"].items()})
        self.files = _Files(folder, meta["generation"])
        self.model_fingerprint = model_fingerprint

    @owner_only_umask()
    def add(self, ids: Sequence[str], records: Sequence[EvidenceRecord]) -> None:
        """Write rows for ``ids`` (one record each); an id given twice is an error."""
        ids, records = list(ids), list(records)
        _check_batch(ids, records)
        repeated = self.seen.intersection(ids)
        if self.present is not None:
            repeated.update(i for i in ids if i in self.present)
        if repeated:
            raise GalleryInputError(f"evidence for item {sorted(repeated)[0]!r} is already written")
        self.seen.update(ids)
        meta, sources = self.meta, self.meta["sources"]
        rows = meta["rows"]
        for source in SOURCES:
            block, covered = encode_rows(records, source)
            if source not in sources and not covered:
                continue
            path = self.files.matrix(source)
            if source not in sources:  # a source new to this table: the earlier rows say nothing
                vector_file.write_new(path, np.full((rows, WIDTH), np.nan, dtype=np.float16))
                sources[source] = {"keys": []}
            vector_file.append(path, rows, WIDTH, block)
            entry = sources[source]
            entry["keys"] = [k for k in ONTOLOGY.keys if k in set(entry["keys"]) | covered]
            if source == "model" and covered and self.model_fingerprint is not None:
                entry["fingerprint"] = self.model_fingerprint
        lines = "".join(f"{item_id}\n" for item_id in ids).encode("utf-8")
        mode = "r+b" if self.files.ids().exists() else "wb"
        with open(self.files.ids(), mode) as fh:
            fh.truncate(meta["ids_bytes"])
            fh.seek(meta["ids_bytes"])
            fh.write(lines)
            fh.flush()
            os.fsync(fh.fileno())
        meta.update(rows=rows + len(ids), ids_bytes=meta["ids_bytes"] + len(lines))

    @owner_only_umask()
    def commit(self) -> None:
        self.meta["updated"] = utc_stamp()
        atomic_write_json(self.folder / META_FILE, self.meta, indent=1)  # commit point
        for source in self.meta["sources"]:
            vector_file.set_rows(self.files.matrix(source), self.meta["rows"], WIDTH)


def _empty_meta(generation: int) -> dict[str, Any]:
    return {"format": FORMAT_VERSION, "generation": generation, "rows": 0, "ids_bytes": 0,
            "columns": list(COLUMN_NAMES), "sources": {}}


@owner_only_umask()
def append(gallery_root: str | Path, ids: Sequence[str], records: Sequence[EvidenceRecord], *,
           model_fingerprint: str | None = None) -> int:
    """Add evidence rows for the ``ids`` that have none yet (the others are left as they are); returns the
    rows added. ``model_fingerprint``: the checkpoint that made the "model" evidence; a table whose model
    evidence came from another checkpoint refuses more (recompute it all: ``rewrite``)."""
    ids, records = list(ids), list(records)
    _check_batch(ids, records)
    with writing(gallery_root):
        return _append(gallery_root, ids, records, model_fingerprint)


def _append(gallery_root: str | Path, ids: list[str], records: list[EvidenceRecord],
            model_fingerprint: str | None) -> int:
    folder = folder_of(gallery_root)
    table = current_table(folder)
    if table is None:
        folder.mkdir(parents=True, exist_ok=True)
        meta = _empty_meta(1)
        present: Mapping[str, int] = {}
    else:
        meta, present = table.meta, table.row_of
        old = table.sources.get("model", {}).get("fingerprint")
        if old is not None and model_fingerprint is not None and old != model_fingerprint \
                and any("model" in r for r in records):
            raise GalleryInputError(f"the model evidence in {folder} comes from checkpoint {old[:12]}…, not "
                                    f"{model_fingerprint[:12]}…; recompute it: `lineup gallery rebuild --attributes`")
    fresh = [i for i, item_id in enumerate(ids) if item_id not in present]
    if not fresh:
        return 0
    writer = _Writer(folder, meta, model_fingerprint, present)
    added = [ids[i] for i in fresh]
    writer.add(added, [records[i] for i in fresh])
    writer.commit()
    if table is not None:  # keep the writer's copy current, so the next batch need not re-read every id
        table.meta = writer.meta
        for item_id in added:
            table.row_of[item_id] = len(table.ids)
            table.ids.append(item_id)
        table._matrices.clear()
        _WRITER_TABLES[folder] = (_stamp(folder), table)
    return len(fresh)


#: The table each folder's writer last saw, with the stamp of the evidence.json it matches.
_WRITER_TABLES: dict[Path, tuple[tuple, EvidenceTable]] = {}


def _stamp(folder: Path) -> tuple:
    stat = (folder / META_FILE).stat()
    return stat.st_mtime_ns, stat.st_size, stat.st_ino


def _stamp_or_none(folder: Path) -> tuple | None:
    try:
        return _stamp(folder)
    except FileNotFoundError:
        return None


def current_table(folder: Path) -> EvidenceTable | None:
    """The committed table of ``folder``: the writer's cached copy while evidence.json is unchanged."""
    try:
        stamp = _stamp(folder)
    except FileNotFoundError:
        _WRITER_TABLES.pop(folder, None)
        return None
    cached = _WRITER_TABLES.get(folder)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    table = EvidenceTable.read(folder.parent)
    if table is not None:
        _WRITER_TABLES[folder] = (stamp, table)
    return table


@contextlib.contextmanager
def rewriting(gallery_root: str | Path, *, model_fingerprint: str | None = None) -> Iterator[_Writer]:
    """A writer of a whole new table (a new generation): ``add`` blocks of rows to it; when the block exits
    normally the table switches to it atomically and the old generation is deleted, else it is discarded.
    Holds the gallery's write lock throughout."""
    with writing(gallery_root):
        yield from _rewriting(gallery_root, model_fingerprint)


def _rewriting(gallery_root: str | Path, model_fingerprint: str | None) -> Iterator[_Writer]:
    folder = folder_of(gallery_root)
    with owner_only_umask():
        folder.mkdir(parents=True, exist_ok=True)
    path = folder / META_FILE
    generation = _read_meta(path)["generation"] + 1 if path.is_file() else 1
    writer = _Writer(folder, _empty_meta(generation), model_fingerprint)
    try:
        yield writer
        if not writer.files.ids().exists():
            writer.add([], [])
        writer.commit()
    except BaseException:
        for leftover in folder.iterdir():
            if leftover.name.endswith((f"-{generation}.txt", f"-{generation}.f16.npy")):
                with contextlib.suppress(FileNotFoundError):
                    leftover.unlink()
        raise
    keep = {writer.files.ids().name, *(writer.files.matrix(s).name for s in writer.meta["sources"]), META_FILE}
    for leftover in folder.iterdir():
        if leftover.name not in keep and not leftover.name.startswith("."):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()


def rewrite(gallery_root: str | Path, ids: Sequence[str], records: Sequence[EvidenceRecord], *,
            model_fingerprint: str | None = None) -> int:
    """Replace the whole table by these rows (see ``rewriting``); returns the rows written."""
    with rewriting(gallery_root, model_fingerprint=model_fingerprint) as writer:
        writer.add(ids, records)
    return len(list(ids))
