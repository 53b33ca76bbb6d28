"""The gallery folder: items, crops, float16 vectors per view and a FAISS index per view.

Layout::

    gallery.json            format, model fingerprint, views and dims, committed counts (the commit point),
                            per view made by another network than the checkpoint its fingerprint, and the
                            hybrid ranking's domain and default attribute weight (``ranking``)
    items.jsonl             one item per line; line i = vector row i
    content.sha256          per item: SHA-256 of its record and of its vector in each view; row i = item row i
                            (``engine.index.content``; their chain head is ``content_head`` in gallery.json)
    crops/                  crop images (content-addressed)
    vectors/<view>.f16.npy  float16 rows, appended in place
    index/<view>.faiss      FAISS index (flat or IVF, see ``engine.index.indexes``)

Crash safety: ``add`` appends each batch to every vectors file and to ``items.jsonl``, fsyncs, then rewrites
``gallery.json`` atomically; readers trust only the committed counts, so a killed add leaves the previous
batches intact and its partial batch invisible (the next writer trims it). Index files are rewritten after the
batches (or on the way out of a failed add); an index that lags behind is caught up from the vectors when the
gallery is opened for writing, and ``catch_up`` writes it. ``remove``, ``rebuild`` and ``set_view`` (a view added
or recomputed for every item) go through the redo journal (``engine.index.journal``).

One writer at a time: every write takes the gallery's write lock (``engine.index.writer_lock``) and first
re-reads ``gallery.json`` when another writer has committed since this object was opened. Readers take no lock:
``open`` reads the last commit, and reads again when a writer committed while it was reading (index files are
replaced atomically, vectors and items only grow past the committed counts).
"""

from __future__ import annotations

import contextlib
import json
import math
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from engine.index import content, indexes, journal, vector_file
from engine.index import versions as gallery_versions
from engine.index.errors import (
    GalleryCorruptError,
    GalleryError,
    GalleryIndexError,
    GalleryInputError,
    GalleryMismatchError,
    GalleryNotFoundError,
)
from engine.index.items import ITEMS_FILE, GalleryItem, ItemColumns, read_columns
from engine.index.layout import (
    FORMAT_VERSION,
    GALLERY_FILE,
    AddReport,
    check_meta_types,
    check_view_models,
    check_views,
    now,
)
from engine.index.scoring import inner_products, to_float32
from engine.index.verify import Problem, verify_gallery
from engine.index.versions import GalleryVersion
from engine.index.writer_lock import is_empty_folder, writing
from engine.index.writes import GalleryWrites
from engine.kernel import jsonio
from engine.kernel.atomic import atomic_write_json
from engine.kernel.paths import PathEscapeError, contained
from engine.kernel.permissions import owner_only_umask

#: What a gallery's items are: crops of a built synthetic world, or of real footage (videos, images, crops).
GALLERY_DOMAINS: tuple[str, ...] = ("world", "footage")
OPEN_ATTEMPTS = 5  # reads of a gallery that a writer keeps committing to while it is opened


class Gallery(GalleryWrites):
    """A gallery folder opened for reading and writing (one writer at a time)."""

    def __init__(self, root: Path, meta: dict[str, Any], columns: ItemColumns) -> None:
        self.root = root
        self._meta = meta
        self._columns = columns
        self._indexes: dict[str, faiss.Index] = {}
        self._writable: set[str] = set()
        self._matrices: dict[str, np.ndarray] = {}
        self._gpu: dict[str, indexes.GpuCopy] = {}

    # ------------------------------------------------------------------------------------------------ opening

    @classmethod
    @owner_only_umask()
    def create(
        cls,
        root: str | Path,
        views: Mapping[str, int],
        model_fingerprint: str,
        *,
        ivf_threshold: int = indexes.DEFAULT_IVF_THRESHOLD,
        recall_target: float = indexes.DEFAULT_RECALL_TARGET,
        view_models: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> Gallery:
        """A new, empty gallery in ``root`` (which must not exist or be empty). ``view_models``: for views made
        by another network than the checkpoint, that network's fingerprint (a JSON object)."""
        root = Path(root)
        if not is_empty_folder(root):
            raise GalleryInputError(f"cannot create a gallery in {root}: it exists and is not an empty folder")
        if not isinstance(model_fingerprint, str) or not model_fingerprint:
            raise GalleryInputError("model_fingerprint must be a non-empty string (the checkpoint's fingerprint)")
        if ivf_threshold < 1:
            raise GalleryInputError(f"ivf_threshold must be at least 1, got {ivf_threshold}")
        if not 0 < recall_target <= 1:
            raise GalleryInputError(f"recall_target must lie in (0, 1], got {recall_target}")
        view_meta = check_views(views)
        foreign = check_view_models(view_models or {}, view_meta)
        with writing(root):
            if not is_empty_folder(root):  # another writer created it between the check and the lock
                raise GalleryInputError(f"cannot create a gallery in {root}: it exists and is not an empty folder")
            cls._create_files(root, view_meta, model_fingerprint, ivf_threshold, recall_target, foreign)
            return cls.open(root)

    @staticmethod
    def _create_files(root: Path, view_meta: dict, model_fingerprint: str, ivf_threshold: int,
                      recall_target: float, foreign: dict) -> None:
        for folder in (root, root / "vectors", root / "index", root / "crops"):
            folder.mkdir(parents=True, exist_ok=True)
        (root / ITEMS_FILE).touch()
        content.path_of(root).touch()
        for entry in view_meta.values():
            vector_file.create(root / "vectors" / f"{entry['file']}.f16.npy", entry["dim"])
            indexes.save(indexes.empty_flat(entry["dim"]), root / "index" / f"{entry['file']}.faiss")
        meta = {
            "format": FORMAT_VERSION,
            "model_fingerprint": model_fingerprint,
            "views": view_meta,
            "count": 0,
            "items_bytes": 0,
            "ivf_threshold": int(ivf_threshold),
            "recall_target": float(recall_target),
            "indexes": {name: indexes.IndexSpec("flat", 0).to_dict() for name in view_meta},
            "view_models": foreign,
            content.HEAD_KEY: content.ZERO_HEAD,
            "created": now(),
            "updated": now(),
            "id": uuid.uuid4().hex,
        }
        atomic_write_json(root / GALLERY_FILE, meta, indent=1)

    @classmethod
    def open(cls, root: str | Path, *, check_indexes: bool = True, finish_changes: bool = False) -> Gallery:
        """Open an existing gallery at its last commit; ignores an interrupted add's tail. An interrupted
        remove/rebuild (``journal.json``) is finished only with ``finish_changes`` (a writer: it takes the write
        lock to do so); a reader waits for the live writer applying one and otherwise refuses it
        (``engine.index.journal.await_pending``), so opening to read changes nothing.

        With ``check_indexes`` every index is loaded (memory-mapped) and checked against ``gallery.json``;
        ``check_indexes=False`` lets ``rebuild`` open a gallery whose indexes are broken. Takes no lock: when a
        writer commits while the files are read (``gallery.json`` changed meanwhile), they are read again."""
        root = Path(root)
        if not root.is_dir():
            raise GalleryNotFoundError(f"gallery folder {root} does not exist")
        meta_path = root / GALLERY_FILE
        if not meta_path.is_file() and not (root / journal.JOURNAL_FILE).exists():
            raise GalleryNotFoundError(f"{root} is not a gallery: {GALLERY_FILE} is missing")
        for attempt in range(OPEN_ATTEMPTS):
            if finish_changes:
                journal.finish_pending(root)
            else:
                journal.await_pending(root)
            stamp = _stamp(meta_path)
            try:
                return cls._open_once(root, check_indexes)
            except GalleryCorruptError:
                if attempt + 1 == OPEN_ATTEMPTS or _stamp(meta_path) == stamp:
                    raise  # nobody committed meanwhile: the files really disagree
                time.sleep(0.05)
        raise AssertionError("unreachable")

    @classmethod
    def _open_once(cls, root: Path, check_indexes: bool) -> Gallery:
        meta = cls._read_meta(root / GALLERY_FILE)
        for entry in meta["views"].values():
            vector_file.check(root / "vectors" / f"{entry['file']}.f16.npy", meta["count"], entry["dim"])
        columns = read_columns(root / ITEMS_FILE, meta["items_bytes"], meta["count"])
        gallery = cls(root, meta, columns)
        if check_indexes:
            for view in meta["views"]:
                gallery._index(view)
        return gallery

    def catch_up(self) -> list[str]:
        """Finish what a killed add left: trim its uncommitted tail and write every index that lags behind the
        committed vectors (a kill after the last commit and before the indexes were saved). Returns the views
        whose index file was rewritten (none when the gallery was already in step)."""
        with self._writing():
            stale = [view for view in self._meta["views"] if self._index_lags(view)]
            tail = (self.root / ITEMS_FILE).stat().st_size != self._meta["items_bytes"]
            if not stale and not tail:
                return []
            journal.clear_pending(self.root)
            for view in self._meta["views"]:
                self._writable_index(view)
            self._finish_add()
            return stale

    def _index_lags(self, view: str) -> bool:
        path = self._index_path(view)
        recorded = self._meta["indexes"].get(view, {}).get("count")
        return indexes.peek(path)[2] != len(self) or recorded != len(self)

    @contextlib.contextmanager
    def _writing(self):
        """Hold the gallery's write lock; re-read the gallery first when another writer committed since."""
        with writing(self.root):
            journal.roll_forward(self.root)
            if self._read_meta(self.root / GALLERY_FILE) != json.loads(json.dumps(self._meta)):
                self._reload()
            yield

    @staticmethod
    def _read_meta(path: Path) -> dict[str, Any]:
        try:
            meta = jsonio.read(path)
        except (OSError, ValueError) as exc:
            raise GalleryCorruptError(f"{path} is unreadable: {exc}") from None
        required = ("format", "model_fingerprint", "views", "count", "items_bytes", "ivf_threshold", "indexes")
        if not isinstance(meta, dict) or any(key not in meta for key in required):
            raise GalleryCorruptError(f"{path} lacks one of the fields {list(required)}")
        if meta["format"] != FORMAT_VERSION:
            raise GalleryCorruptError(
                f"{path} has format {meta['format']!r}; this program reads format {FORMAT_VERSION}"
            )
        check_meta_types(path, meta)
        try:
            check_views({name: entry["dim"] for name, entry in meta["views"].items()})
        except (GalleryInputError, TypeError, KeyError) as exc:
            raise GalleryCorruptError(f"{path} lists invalid views: {exc}") from None
        for name, entry in meta["views"].items():
            stem = entry.get("file")
            if not isinstance(stem, str) or not stem:
                raise GalleryCorruptError(f"{path}: view {name!r} names no file")
            try:
                contained(path.parent / "vectors", f"{stem}.f16.npy", f"view {name!r} file")
                contained(path.parent / "index", f"{stem}.faiss", f"view {name!r} index")
            except PathEscapeError as exc:
                raise GalleryCorruptError(f"{path}: {exc}") from None
        return meta

    # ------------------------------------------------------------------------------------------------ reading

    @property
    def model_fingerprint(self) -> str:
        return self._meta["model_fingerprint"]

    def view_model(self, view: str) -> dict[str, Any] | None:
        """The fingerprint of the network that made ``view`` when it is not the checkpoint (else None)."""
        model = self._meta.get("view_models", {}).get(view)
        return None if model is None else dict(model)

    @property
    def ranking(self) -> dict[str, Any] | None:
        """The hybrid ranking's settings recorded for this gallery (``domain``, ``attribute_weight``,
        ``origin``: where the weight came from), or None when none were recorded (galleries made before)."""
        value = self._meta.get("ranking")
        return dict(value) if isinstance(value, dict) else None

    def record_ranking(self, domain: str, attribute_weight: float, origin: str, appearance: str | None = None) -> None:
        """Record the gallery's domain (``world`` or ``footage``) and the attribute weight its searches use by
        default, with where that weight came from, and (``appearance``) in words which view find-similar
        searches and why (one atomic rewrite of ``gallery.json``)."""
        with self._writing():
            if domain not in GALLERY_DOMAINS:
                raise GalleryInputError(f"gallery domain must be one of {list(GALLERY_DOMAINS)}, got {domain!r}")
            if isinstance(attribute_weight, bool) or not isinstance(attribute_weight, int | float) \
                    or not math.isfinite(attribute_weight) or attribute_weight < 0:
                raise GalleryInputError(f"attribute weight must be a finite number ≥ 0, got {attribute_weight!r}")
            if not isinstance(origin, str) or not origin.strip():
                raise GalleryInputError("the attribute weight's origin must be a non-empty description")
            ranking = {"domain": domain, "attribute_weight": float(attribute_weight), "origin": origin.strip()}
            if appearance is not None:
                if not isinstance(appearance, str) or not appearance.strip():
                    raise GalleryInputError("the appearance choice must be a non-empty description")
                ranking["appearance"] = appearance.strip()
            self._meta = dict(self._meta, ranking=ranking, updated=now())
            atomic_write_json(self.root / GALLERY_FILE, self._meta, indent=1)

    # ------------------------------------------------------------------------------------------------ versions

    def versions(self) -> tuple[GalleryVersion, ...]:
        """Every version, oldest first; the last is the current one (``engine.index.versions``). Kept until
        the next commit (every write replaces the metadata object)."""
        cached = self.__dict__.get("_versions_of")
        if cached is None or cached[0] is not self._meta:
            cached = (self._meta, gallery_versions.listed(self._meta, self.ids))  # current: content_head recorded
            self.__dict__["_versions_of"] = cached
        return cached[1]

    @property
    def version(self) -> GalleryVersion:
        """The current version (every committed item)."""
        return self.versions()[-1]

    def fingerprint(self, items: int | None = None, *, from_files: bool = False) -> str:
        """The fingerprint of the first ``items`` items (all when None): model, views, item ids and the content
        chain head of those items (``engine.index.versions``). The head is the one recorded when the items
        were added; ``from_files`` computes it now from ``items.jsonl`` and the stored vectors instead, so the
        fingerprint changes when an item's record or vectors changed behind the gallery's back (what a report's
        check compares). A gallery without content digests has the ids-only fingerprint either way."""
        if from_files and self.content_covered:
            count = len(self) if items is None else items
            head = content.chain(self._computed_parts(count), content.row_width(self.views))
            return gallery_versions.fingerprint(self.model_fingerprint, self.views, self.ids[:count], head)
        if items is None or items == len(self):
            return self.version.fingerprint
        return gallery_versions.meta_fingerprint(self._meta, self.ids, items, self._content_head)

    def find_version(self, fingerprint: str, items: int | None = None,
                     version: int | None = None) -> GalleryVersion | None:
        """The version with ``fingerprint`` (a case's record: its item count and number help), or None when the
        gallery no longer has it (see ``engine.index.versions.find``)."""
        return gallery_versions.find(self._meta, self.ids, fingerprint, items, version, self._content_head)

    @property
    def content_covered(self) -> bool:
        """Whether the gallery records content digests (galleries made before they were kept do not, until a
        write or ``lineup gallery rebuild`` records them)."""
        return self._meta.get(content.HEAD_KEY) is not None

    def _content_head(self, items: int) -> str | None:
        """The recorded content chain head of the first ``items`` items (None without content digests)."""
        head = self._meta.get(content.HEAD_KEY)
        if head is None or items == len(self):
            return head
        width = content.row_width(self.views)
        return content.chain(content.read_parts(self.root, items, width), width)

    def _computed_parts(self, items: int | None = None) -> bytes:
        """Digest rows of the first ``items`` items (all when None) computed now from the stored files."""
        count = len(self) if items is None else items
        return content.compute(self.root / ITEMS_FILE, self._meta["items_bytes"],
                               {view: self.stored_vectors(view) for view in self.views}, count)

    def record_version(self, sources: Sequence[str] = ()) -> GalleryVersion:
        """Record the committed items as a new version made from ``sources`` (names of the footage, crop folders
        or worlds) unless the last recorded version already is this state; returns the current version."""
        with self._writing():
            meta = gallery_versions.with_current(self._meta, self.ids, sources, now())
            if meta is not self._meta:
                self._meta = dict(meta, updated=now())
                atomic_write_json(self.root / GALLERY_FILE, self._meta, indent=1)
            return self.version

    @property
    def views(self) -> dict[str, int]:
        """View name → vector dimension."""
        return {name: entry["dim"] for name, entry in self._meta["views"].items()}

    @property
    def columns(self) -> ItemColumns:
        return self._columns

    @property
    def ids(self) -> list[str]:
        return self._columns.ids

    def __len__(self) -> int:
        return self._meta["count"]

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._columns.row_of

    def row(self, item_id: str) -> int:
        try:
            return self._columns.row_of[item_id]
        except KeyError:
            raise GalleryInputError(f"item {item_id!r} is not in the gallery {self.root}") from None

    def rows(self, item_ids: Iterable[str]) -> np.ndarray:
        return np.asarray([self.row(i) for i in item_ids], dtype=np.int64)

    def item(self, key: str | int) -> GalleryItem:
        """The full item record by id or row (read from ``items.jsonl``)."""
        row = self.row(key) if isinstance(key, str) else int(key)
        if not 0 <= row < len(self):
            raise GalleryInputError(f"row {row} is outside the gallery (0..{len(self) - 1})")
        return GalleryItem.from_dict(jsonio.loads(self._raw_lines([row])[0], f"{self.root / ITEMS_FILE} row {row}"))

    def _raw_lines(self, rows: Sequence[int]) -> list[bytes]:
        offsets = self._columns.offset
        ends = np.append(offsets[1:], self._meta["items_bytes"])
        out = []
        with open(self.root / ITEMS_FILE, "rb") as fh:
            for row in rows:
                fh.seek(int(offsets[row]))
                out.append(fh.read(int(ends[row] - offsets[row])))
        return out

    def iter_items(self) -> Iterable[GalleryItem]:
        with open(self.root / ITEMS_FILE, "rb") as fh:
            for row in range(len(self)):
                yield GalleryItem.from_dict(jsonio.loads(fh.readline(), f"{self.root / ITEMS_FILE} row {row}"))

    def _vector_path(self, view: str) -> Path:
        return self.root / "vectors" / f"{self._meta['views'][view]['file']}.f16.npy"

    def _index_path(self, view: str) -> Path:
        return self.root / "index" / f"{self._meta['views'][view]['file']}.faiss"

    def _check_view(self, view: str) -> int:
        if view not in self._meta["views"]:
            raise GalleryMismatchError(f"view {view!r} is not in the gallery {self.root}; it has {list(self.views)}")
        return self._meta["views"][view]["dim"]

    def stored_vectors(self, view: str) -> np.ndarray:
        """Read-only float16 memory map [count, dim] of one view."""
        dim = self._check_view(view)
        return vector_file.rows_view(self._vector_path(view), len(self), dim)

    def vectors(self, view: str, rows: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
        """float32 copies of the given rows (all rows when ``rows`` is None)."""
        stored = self.stored_vectors(view)
        if rows is None:
            return to_float32(np.asarray(stored))
        picked = np.asarray(rows, dtype=np.int64)
        if picked.size and (picked.min() < 0 or picked.max() >= len(self)):
            raise GalleryInputError(f"rows must lie in 0..{len(self) - 1}")
        return to_float32(np.asarray(stored[picked]))

    def matrix(self, view: str) -> np.ndarray:
        """The whole view as a cached float32 matrix (4·dim bytes per item in memory), for exact scoring."""
        if view not in self._matrices:
            self._matrices[view] = self.vectors(view)
        return self._matrices[view]

    def check_model(self, model_fingerprint: str | None = None, dims: Mapping[str, int] | None = None) -> None:
        """Raise ``GalleryMismatchError`` when a checkpoint is not the one that made this gallery."""
        if model_fingerprint is not None and model_fingerprint != self.model_fingerprint:
            raise GalleryMismatchError(
                f"checkpoint fingerprint {model_fingerprint!r} does not match the gallery's "
                f"{self.model_fingerprint!r} ({self.root}); ingest the footage again with this checkpoint"
            )
        for view, dim in (dims or {}).items():
            if view in self._meta["views"] and self._meta["views"][view]["dim"] != dim:
                raise GalleryMismatchError(
                    f"view {view!r} has dimension {self._meta['views'][view]['dim']} in the gallery, the "
                    f"checkpoint gives {dim}"
                )

    # ------------------------------------------------------------------------------------------------ indexes

    def _index(self, view: str) -> faiss.Index:
        """The view's index, memory-mapped; checked against the vectors and caught up after a killed add."""
        if view in self._indexes:
            return self._indexes[view]
        dim = self._check_view(view)
        path = self._index_path(view)
        if not path.is_file():
            raise GalleryIndexError(f"index file {path} for view {view!r} is missing")
        kind, index_dim, ntotal = indexes.peek(path)
        if index_dim != dim:
            raise GalleryIndexError(f"index {path} has dimension {index_dim}, view {view!r} has {dim}")
        if ntotal > len(self):
            raise GalleryIndexError(f"index {path} holds {ntotal} vectors but the gallery has {len(self)} items")
        index = indexes.load(path, writable=ntotal < len(self))
        if index.ntotal != ntotal or index.d != dim:
            raise GalleryIndexError(f"index {path} header and body disagree")
        if ntotal < len(self):
            indexes.add_rows(index, self.stored_vectors(view)[ntotal:])
            self._writable.add(view)
        self._indexes[view] = index
        return index

    def _writable_index(self, view: str) -> faiss.Index:
        if view not in self._writable:
            self._indexes.pop(view, None)
            index = self._index(view)
            if view not in self._writable:
                index = indexes.load(self._index_path(view), writable=True)
                self._indexes[view] = index
                self._writable.add(view)
        return self._indexes[view]

    def index_spec(self, view: str) -> indexes.IndexSpec:
        recall = self._meta["indexes"].get(view, {}).get("recall_at_100")
        return indexes.spec_of(self._index(view), recall)

    def search(
        self, view: str, query: np.ndarray, k: int, subset: Sequence[int] | np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (rows, scores) by inner product, best first. Without ``subset`` the view's FAISS index answers
        (GPU copy when FAISS sees a GPU); with ``subset`` the given rows are scored exactly."""
        dim = self._check_view(view)
        q = np.ascontiguousarray(query, dtype=np.float32)
        if q.shape != (dim,):
            raise GalleryMismatchError(f"query for view {view!r} must have shape ({dim},), got {q.shape}")
        if not np.isfinite(q).all():
            raise GalleryInputError("query vector has NaN or infinite values")
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise GalleryInputError(f"k must be a positive integer, got {k!r}")
        if subset is not None:
            rows = np.asarray(subset, dtype=np.int64)
            scores = inner_products(self.matrix(view), q, rows)
            take = min(int(k), rows.size)
            top = np.argpartition(-scores, take - 1)[:take] if take else np.zeros(0, dtype=np.int64)
            top = top[np.lexsort((rows[top], -scores[top]))]
            return rows[top], scores[top]
        take = min(int(k), len(self))
        if take == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        searcher = self._gpu_copy(view) or self._index(view)
        scores, rows = searcher.search(q[None, :], take)
        keep = rows[0] >= 0
        return rows[0][keep], scores[0][keep]

    def _gpu_copy(self, view: str) -> indexes.GpuCopy | None:
        if not indexes.gpu_available():
            return None
        if view not in self._gpu:
            self._gpu[view] = indexes.GpuCopy(self._index(view), self.stored_vectors(view))
        return self._gpu[view]


    # ------------------------------------------------------------------------------------------------ reports

    def verify(self, *, check_crops: bool = True, check_sources: bool = False) -> list[Problem]:
        """Problems found (empty when the gallery is sound); see ``engine.index.verify``."""
        return verify_gallery(self, check_crops=check_crops, check_sources=check_sources)

    def info(self) -> dict[str, Any]:
        """Counts, views, index kinds, cameras, time range and bytes on disk."""
        count = len(self)
        sizes = {"items": (self.root / ITEMS_FILE).stat().st_size, "vectors": 0, "indexes": 0, "crops": 0}
        for view in self._meta["views"]:
            sizes["vectors"] += self._vector_path(view).stat().st_size
            with contextlib.suppress(FileNotFoundError):
                sizes["indexes"] += self._index_path(view).stat().st_size
        crops = self.root / "crops"
        if crops.is_dir():
            sizes["crops"] = sum(p.stat().st_size for p in crops.rglob("*") if p.is_file())
        sizes["metadata"] = (self.root / GALLERY_FILE).stat().st_size
        times = self._columns.time
        known = times[np.isfinite(times)] if times.size else times
        raw = sum(4 * dim for dim in self.views.values())
        without_crops = sum(v for k, v in sizes.items() if k != "crops")
        return {
            "path": str(self.root),
            "format": self._meta["format"],
            "model_fingerprint": self.model_fingerprint,
            "count": count,
            "views": {
                view: {"dim": dim, "index": self._meta["indexes"].get(view, {}),
                       **({"model": self.view_model(view)} if self.view_model(view) else {})}
                for view, dim in self.views.items()
            },
            "cameras": list(self._columns.cameras.names),
            "identities": len(self._columns.identities.names),
            "time_range": [float(known.min()), float(known.max())] if known.size else None,
            "bytes": sizes,
            "bytes_per_item_without_crops": without_crops / count if count else math.nan,
            "raw_float32_bytes_per_item": raw,
            "ranking": self.ranking,
            "versions": [dict(v.to_dict(), recorded=v.recorded) for v in self.versions()],
            "created": self._meta.get("created"),
            "updated": self._meta.get("updated"),
        }




__all__ = ["AddReport", "Gallery", "GalleryError", "Problem"]


def _stamp(path: Path) -> tuple | None:
    """What changes whenever ``gallery.json`` is replaced (None when it is absent)."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_ino, stat.st_mtime_ns, stat.st_size
