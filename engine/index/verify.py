"""``Gallery.verify``: re-read every gallery file and list what disagrees (nothing is changed).

Checks: item records parse and validate, and the item columns (``engine.index.columns``) give each its id and
line; crop files exist and match their SHA-256; optionally source files
match theirs; each vectors file has the committed rows, a matching header, finite unit rows; each index file
loads, has the view's dimension, holds exactly the committed rows, and a sample of its stored codes equals the
vectors file; when the gallery has attribute evidence (``engine.index.evidence_table``), its table reads and every
item with a crop has an evidence row; when it records content digests (``engine.index.content``), every item's
record and vectors, digested again now, match the digests recorded when it was added (the items that do not are
named), and the stored digests give the chain head ``gallery.json`` records."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.index import content, indexes, journal, vector_file
from engine.index.errors import GalleryError
from engine.index.evidence_table import FOLDER, EvidenceTable
from engine.index.items import ITEMS_FILE, GalleryItem
from engine.index.scoring import to_float32
from engine.kernel import jsonio
from engine.kernel.hashing import sha256_file
from engine.kernel.paths import is_contained

NORM_TOLERANCE = 0.02
CONTENT_SAMPLE = 1024
_CHUNK = 65_536


@dataclass(frozen=True)
class Problem:
    """One thing ``verify`` found wrong: ``kind`` is a short code, ``subject`` the item, view or file."""

    kind: str
    subject: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.subject}: {self.message}"


def verify_gallery(gallery, *, check_crops: bool = True, check_sources: bool = False) -> list[Problem]:
    problems: list[Problem] = []
    root: Path = gallery.root
    count = len(gallery)
    if (root / journal.JOURNAL_FILE).exists():
        problems.append(Problem("journal", journal.JOURNAL_FILE, "an unfinished remove or rebuild is pending"))

    source_hashes: dict[str, str] = {}
    with_crop: list[str] = []
    ids, offsets = iter(gallery.ids), gallery.columns.offset
    position = 0
    with open(root / ITEMS_FILE, "rb", buffering=1 << 20) as fh:
        for row in range(count):
            line = fh.readline()
            listed = next(ids)
            if int(offsets[row]) != position:
                problems.append(Problem("columns", f"row {row}", f"the item columns place its line at byte "
                                        f"{int(offsets[row])}, items.jsonl at {position}; run "
                                        f"`lineup gallery rebuild`"))
            position += len(line)
            try:
                item = GalleryItem.from_dict(jsonio.loads(line, f"items.jsonl row {row}"))
            except (ValueError, TypeError) as exc:
                problems.append(Problem("item", f"row {row}", f"invalid item record: {exc}"))
                continue
            if item.id != listed:
                problems.append(Problem("columns", f"row {row}", f"the item columns name it {listed!r}, items.jsonl "
                                        f"{item.id!r}; run `lineup gallery rebuild`"))
            if item.crop is not None:
                with_crop.append(item.id)
            if check_crops and item.crop is not None:
                path = root / item.crop
                if not is_contained(root, item.crop):
                    problems.append(Problem("crop_outside", item.id, f"crop file {path} resolves outside the gallery"))
                elif not path.is_file():
                    problems.append(Problem("missing_crop", item.id, f"crop file {path} is missing"))
                elif item.crop_sha256 is not None and sha256_file(path) != item.crop_sha256:
                    problems.append(Problem("crop_hash", item.id, f"crop file {path} does not match its SHA-256"))
            if check_sources and item.source_sha256 is not None:
                source = Path(item.source)
                if not source.is_file():
                    problems.append(Problem("missing_source", item.id, f"source {source} is not reachable"))
                    continue
                if item.source not in source_hashes:
                    source_hashes[item.source] = sha256_file(source)
                if source_hashes[item.source] != item.source_sha256:
                    problems.append(Problem("source_hash", item.id, f"source {source} does not match its SHA-256"))

    for view, dim in gallery.views.items():
        problems.extend(_check_vectors(gallery, view, dim, count, Problem))
        problems.extend(_check_index(gallery, view, dim, count, Problem))
    problems.extend(_check_evidence(root, with_crop, Problem))
    if not any(p.kind in ("item", "vectors") for p in problems):
        problems.extend(_check_content(gallery, Problem))
    return problems


#: content problem kind → what changed, said of one item and of several
CONTENT_KINDS = {
    "content_record": ("its items.jsonl record (crop path and SHA-256, box, source, time, camera …) differs",
                       "their items.jsonl records (crop path and SHA-256, box, source, time, camera …) differ"),
    "content_vectors": ("its stored vectors differ", "their stored vectors differ"),
}


def _check_content(gallery, Problem) -> list:
    """Every item's record and vectors digested now against the digests recorded when it was added."""
    meta = gallery.meta
    recorded_head = meta.get(content.HEAD_KEY)
    if recorded_head is None:
        return []
    count = len(gallery)
    views = content.view_names(gallery.views)
    width = content.row_width(views)
    try:
        now = gallery.computed_parts()
        stored = content.read_parts(gallery.root, count, width)
    except (GalleryError, ValueError, OSError) as exc:
        return [Problem("content_digests", content.CONTENT_FILE, str(exc))]
    out = []
    if stored != now:
        table_now = np.frombuffer(now, dtype=np.uint8).reshape(count, 1 + len(views), content.DIGEST_BYTES)
        table_then = np.frombuffer(stored, dtype=np.uint8).reshape(count, 1 + len(views), content.DIGEST_BYTES)
        differs = (table_now != table_then).any(axis=2)
        for row in np.flatnonzero(differs.any(axis=1)).tolist():
            item_id = gallery.ids[row]
            if differs[row, 0]:
                out.append(Problem("content_record", item_id, f"{CONTENT_KINDS['content_record'][0]} from the "
                                                              f"content digest recorded when it was added (row {row})"))
            changed = [views[i] for i in np.flatnonzero(differs[row, 1:]).tolist()]
            if changed:
                out.append(Problem("content_vectors", item_id,
                                   f"{CONTENT_KINDS['content_vectors'][0]} from the content digest recorded when it "
                                   f"was added (row {row}; view{'s' if len(changed) > 1 else ''} "
                                   f"{', '.join(repr(v) for v in changed)})"))
    if content.chain(stored, width) != recorded_head:
        out.append(Problem("content_head", content.CONTENT_FILE,
                           f"the stored content digests do not give the chain head gallery.json records "
                           f"({recorded_head[:12]}…): the digests file or gallery.json was changed"))
    return out


def _check_evidence(root: Path, with_crop: list[str], Problem) -> list:
    """Every item with a crop has a row in the attribute evidence table (when the gallery has one)."""
    try:
        table = EvidenceTable.read(root)
    except (GalleryError, OSError) as exc:
        return [Problem("evidence_unreadable", FOLDER, f"{exc}; recompute it: `lineup gallery rebuild --attributes`")]
    if table is None:
        return []
    return [Problem("evidence_missing", item_id, "no attribute evidence row; resume the ingest or run "
                                                 "`lineup gallery rebuild --attributes`")
            for item_id in with_crop if item_id not in table.row_of]


def _check_vectors(gallery, view: str, dim: int, count: int, Problem) -> list:
    path = gallery.vector_path(view)
    try:
        vector_file.check(path, count, dim)
    except GalleryError as exc:
        return [Problem("vectors", view, str(exc))]
    out = []
    header_rows, _ = vector_file.read_header(path)
    if header_rows != count:
        out.append(Problem("vectors_header", view, f"{path} header says {header_rows} rows, the gallery has {count}"))
    stored = gallery.stored_vectors(view)
    for start in range(0, count, _CHUNK):
        block = to_float32(np.asarray(stored[start : start + _CHUNK]))
        finite = np.isfinite(block).all(axis=1)
        norms = np.linalg.norm(np.where(finite[:, None], block, 0), axis=1)
        bad = np.flatnonzero(~finite | (np.abs(norms - 1) > NORM_TOLERANCE))
        if bad.size:
            row = start + int(bad[0])
            out.append(Problem("vector_values", view, f"{bad.size} rows from row {row} (item "
                                                      f"{gallery.ids[row]!r}) are not finite unit vectors"))
            break
    return out


def _check_index(gallery, view: str, dim: int, count: int, Problem) -> list:
    path = gallery.index_path(view)
    if not path.is_file():
        return [Problem("index_missing", view, f"index file {path} is missing")]
    try:
        _, index_dim, ntotal = indexes.peek(path)
        index = indexes.load(path)
    except GalleryError as exc:
        return [Problem("index_unreadable", view, str(exc))]
    if index_dim != dim or index.d != dim:
        return [Problem("index_dim", view, f"index {path} has dimension {index.d}, the view has {dim}")]
    if index.ntotal != count:
        message = f"index {path} holds {index.ntotal} vectors, the gallery has {count} items"
        return [Problem("index_count", view, message)]
    recorded = gallery.meta["indexes"].get(view, {}).get("count")
    out = []
    if recorded != count:
        message = f"gallery.json records {recorded} indexed rows, the index holds {count}"
        out.append(Problem("index_metadata", view, message))
    if count:
        rng = np.random.default_rng(0)
        sample = np.unique(np.concatenate([[0, count - 1], rng.integers(0, count, min(CONTENT_SAMPLE, count))]))
        wrong = indexes.content_mismatches(index, gallery.stored_vectors(view), sample)
        if wrong.size:
            out.append(Problem("index_content", view, f"index {path} disagrees with the vectors at {wrong.size} of "
                                                      f"{sample.size} sampled rows (first: row {int(wrong[0])})"))
    return out
