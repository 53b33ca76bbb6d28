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

Parts, one job each, which a ``Gallery`` composes and delegates to: ``engine.index.folder`` (the committed
metadata, items and vectors, read), ``engine.index.view_index`` (the FAISS index per view: loading, catching
up, searching, GPU copies), ``engine.index.history`` (versions, fingerprints, content digests) and
``engine.index.writes`` (every write, under the write lock and the journal).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import faiss
import numpy as np

from engine.index import indexes, journal
from engine.index.columns import ItemColumns
from engine.index.errors import GalleryCorruptError, GalleryError, GalleryInputError, GalleryNotFoundError
from engine.index.folder import GalleryFolder, write_new_folder
from engine.index.history import GalleryHistory
from engine.index.items import ITEMS_FILE, GalleryItem
from engine.index.layout import (
    DEFAULT_BATCH,
    GALLERY_DOMAINS,
    GALLERY_FILE,
    AddReport,
    ProgressFn,
    check_view_models,
    check_views,
)
from engine.index.verify import Problem, verify_gallery
from engine.index.versions import GalleryVersion
from engine.index.view_index import ViewIndexes
from engine.index.writer_lock import is_empty_folder, writing
from engine.index.writes import GalleryWriter
from engine.kernel.permissions import owner_only_umask

OPEN_ATTEMPTS = 5  # reads of a gallery that a writer keeps committing to while it is opened


class Gallery:
    """A gallery folder opened for reading and writing (one writer at a time)."""

    def __init__(self, root: Path, meta: dict[str, Any], columns: ItemColumns) -> None:
        self._folder = GalleryFolder(root, meta, columns)
        self._indexes = ViewIndexes(self._folder)
        self._history = GalleryHistory(self._folder)
        self._writer = GalleryWriter(self._folder, self._indexes, self._history, self._reload)

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
            write_new_folder(root, view_meta, model_fingerprint, ivf_threshold, recall_target, foreign)
            return cls.open(root)

    @classmethod
    def open(cls, root: str | Path, *, check_indexes: bool = True, finish_changes: bool = False,
             progress: ProgressFn | None = None) -> Gallery:
        """Open an existing gallery at its last commit; ignores an interrupted add's tail. An interrupted
        remove/rebuild (``journal.json``) is finished only with ``finish_changes`` (a writer: it takes the write
        lock to do so); a reader waits for the live writer applying one and otherwise refuses it
        (``engine.index.journal.await_pending``), so opening to read changes nothing.

        With ``check_indexes`` every index is loaded (memory-mapped) and checked against ``gallery.json``;
        ``check_indexes=False`` lets ``rebuild`` open a gallery whose indexes are broken. Takes no lock: when a
        writer commits while the files are read (``gallery.json`` changed meanwhile), they are read again.

        Nothing is read whole: item columns, vectors and indexes are memory-mapped (docs/scaling.md). A gallery
        made before item columns were kept has them built once from ``items.jsonl`` (``progress(rows, count)``)
        and recorded when its write lock is free."""
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
                return cls._open_once(root, check_indexes, progress)
            except GalleryCorruptError:
                if attempt + 1 == OPEN_ATTEMPTS or _stamp(meta_path) == stamp:
                    raise  # nobody committed meanwhile: the files really disagree
                time.sleep(0.05)
        raise AssertionError("unreachable")

    @classmethod
    def _open_once(cls, root: Path, check_indexes: bool, progress: ProgressFn | None = None) -> Gallery:
        folder = GalleryFolder.read(root, progress)
        gallery = cls(root, folder.meta, folder.columns)
        if check_indexes:
            for view in folder.meta["views"]:
                gallery._indexes.get(view)
        return gallery

    def _reload(self) -> None:
        """Read the folder again (every index checked) after a commit by another writer or the journal."""
        fresh = type(self).open(self.root)
        self._folder.adopt(fresh._folder)
        self._indexes.adopt(fresh._indexes)

    # ------------------------------------------------------------------------------------------------ reading

    @property
    def root(self) -> Path:
        return self._folder.root

    @property
    def meta(self) -> Mapping[str, Any]:
        """What ``gallery.json`` records at the last commit (read-only)."""
        return MappingProxyType(self._folder.meta)

    @property
    def model_fingerprint(self) -> str:
        return self._folder.model_fingerprint

    def view_model(self, view: str) -> dict[str, Any] | None:
        """The fingerprint of the network that made ``view`` when it is not the checkpoint (else None)."""
        return self._folder.view_model(view)

    @property
    def ranking(self) -> dict[str, Any] | None:
        """The hybrid ranking's settings recorded for this gallery (``domain``, ``attribute_weight``,
        ``origin``: where the weight came from), or None when none were recorded (galleries made before)."""
        return self._folder.ranking

    @property
    def views(self) -> dict[str, int]:
        """View name → vector dimension."""
        return self._folder.views

    @property
    def columns(self) -> ItemColumns:
        return self._folder.columns

    @property
    def ids(self) -> list[str]:
        return self._folder.ids

    def __len__(self) -> int:
        return len(self._folder)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._folder

    def row(self, item_id: str) -> int:
        return self._folder.row(item_id)

    def rows(self, item_ids: Iterable[str]) -> np.ndarray:
        return self._folder.rows(item_ids)

    def item(self, key: str | int) -> GalleryItem:
        """The full item record by id or row (read from ``items.jsonl``)."""
        return self._folder.item(key)

    def iter_items(self) -> Iterable[GalleryItem]:
        return self._folder.iter_items()

    def vector_path(self, view: str) -> Path:
        """The view's vectors file."""
        return self._folder.vector_path(view)

    def index_path(self, view: str) -> Path:
        """The view's FAISS index file."""
        return self._folder.index_path(view)

    def stored_vectors(self, view: str) -> np.ndarray:
        """Read-only float16 memory map [count, dim] of one view."""
        return self._folder.stored_vectors(view)

    def vectors(self, view: str, rows: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
        """float32 copies of the given rows (all rows when ``rows`` is None)."""
        return self._folder.vectors(view, rows)

    def matrix(self, view: str) -> np.ndarray:
        """The whole view as a cached float32 matrix (4·dim bytes per item in memory), for exact scoring."""
        return self._folder.matrix(view)

    def check_model(self, model_fingerprint: str | None = None, dims: Mapping[str, int] | None = None) -> None:
        """Raise ``GalleryMismatchError`` when a checkpoint is not the one that made this gallery."""
        self._folder.check_model(model_fingerprint, dims)

    # ------------------------------------------------------------------------------------------------ indexes

    def faiss_index(self, view: str) -> faiss.Index:
        """The view's FAISS index as loaded (memory-mapped), checked against the vectors."""
        return self._indexes.get(view)

    def index_spec(self, view: str) -> indexes.IndexSpec:
        return self._indexes.spec(view)

    def search(
        self, view: str, query: np.ndarray, k: int, subset: Sequence[int] | np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (rows, scores) by inner product, best first. Without ``subset`` the view's FAISS index answers
        (GPU copy when FAISS sees a GPU); with ``subset`` the given rows are scored exactly."""
        return self._indexes.search(view, query, k, subset)

    # ------------------------------------------------------------------------------------------------ versions

    def versions(self) -> tuple[GalleryVersion, ...]:
        """Every version, oldest first; the last is the current one (``engine.index.versions``). Kept until
        the next commit (every write replaces the metadata object)."""
        return self._history.versions()

    @property
    def version(self) -> GalleryVersion:
        """The current version (every committed item)."""
        return self._history.version

    def fingerprint(self, items: int | None = None, *, from_files: bool = False) -> str:
        """The fingerprint of the first ``items`` items (all when None); see ``GalleryHistory.fingerprint``
        (``engine.index.history``)."""
        return self._history.fingerprint(items, from_files=from_files)

    def find_version(self, fingerprint: str, items: int | None = None,
                     version: int | None = None) -> GalleryVersion | None:
        """The version with ``fingerprint`` (a case's record: its item count and number help), or None when the
        gallery no longer has it (see ``engine.index.versions.find``)."""
        return self._history.find_version(fingerprint, items, version)

    @property
    def content_covered(self) -> bool:
        """Whether the gallery records content digests (galleries made before they were kept do not, until a
        write or ``lineup gallery rebuild`` records them)."""
        return self._history.content_covered

    def computed_parts(self, items: int | None = None) -> bytes:
        """Digest rows of the first ``items`` items (all when None) computed now from the stored files."""
        return self._history.computed_parts(items)

    # ------------------------------------------------------------------------------------------------ writing

    def put_crop(self, data: bytes, suffix: str = ".png") -> tuple[str, str]:
        """Store a crop image's bytes in ``crops/``; returns (relative path, SHA-256) for the item record."""
        return self._writer.put_crop(data, suffix)

    def add(
        self,
        items: Sequence[GalleryItem | Mapping[str, Any]],
        vectors_by_view: Mapping[str, Any],
        *,
        batch_size: int = DEFAULT_BATCH,
        progress: ProgressFn | None = None,
    ) -> AddReport:
        """Append items with one vector per view each (row i of every array belongs to ``items[i]``); see
        ``GalleryWriter.add`` (``engine.index.writes``) and the module docstring."""
        return self._writer.add(items, vectors_by_view, batch_size=batch_size, progress=progress)

    def add_stream(
        self,
        chunks: Iterable[tuple[Sequence[GalleryItem | Mapping[str, Any]], Mapping[str, Any]]],
        *,
        batch_size: int = DEFAULT_BATCH,
        progress: ProgressFn | None = None,
        total: int | None = None,
    ) -> AddReport:
        """``add`` for items arriving in chunks of ``(items, vectors_by_view)`` (millions of items, one chunk in
        memory at a time): one hold of the write lock, the indexes written once at the end; see
        ``GalleryWriter.add_stream`` (``engine.index.writes``)."""
        return self._writer.add_stream(chunks, batch_size=batch_size, progress=progress, total=total)

    def catch_up(self) -> list[str]:
        """Finish what a killed add left: trim its uncommitted tail and write every index that lags behind the
        committed vectors. Returns the views whose index file was rewritten."""
        return self._writer.catch_up()

    def remove(self, item_ids: Iterable[str]) -> int:
        """Remove items by id (all or nothing); rewrites vectors and indexes. Returns how many were removed."""
        return self._writer.remove(item_ids)

    def set_view(self, view: str, vectors: np.ndarray, view_model: Mapping[str, Any]) -> None:
        """Add view ``view`` (or replace it) with one unit vector per item, row i for item i, made by the network
        ``view_model`` fingerprints; vectors and index are written first, then committed through the journal."""
        self._writer.set_view(view, vectors, view_model)

    def rebuild(self, progress: ProgressFn | None = None) -> dict[str, Any]:
        """Rebuild every index from the vectors (kind chosen by size), trim interrupted appends, fix headers;
        returns ``info``. Cannot restore lost vectors, items or crops: ``verify`` reports those."""
        with self._writer.writing():
            self._writer.rebuild(progress)
            return self.info()

    def record_ranking(self, domain: str, attribute_weight: float, origin: str, appearance: str | None = None) -> None:
        """Record the gallery's domain (``world`` or ``footage``) and the attribute weight its searches use by
        default, with where that weight came from, and (``appearance``) in words which view find-similar
        searches and why (one atomic rewrite of ``gallery.json``)."""
        self._writer.record_ranking(domain, attribute_weight, origin, appearance)

    def record_version(self, sources: Sequence[str] = ()) -> GalleryVersion:
        """Record the committed items as a new version made from ``sources`` (names of the footage, crop folders
        or worlds) unless the last recorded version already is this state; returns the current version."""
        return self._writer.record_version(sources)

    # ------------------------------------------------------------------------------------------------ reports

    def verify(self, *, check_crops: bool = True, check_sources: bool = False) -> list[Problem]:
        """Problems found (empty when the gallery is sound); see ``engine.index.verify``."""
        return verify_gallery(self, check_crops=check_crops, check_sources=check_sources)

    def info(self) -> dict[str, Any]:
        """Counts, views, index kinds, cameras, time range and bytes on disk."""
        folder = self._folder
        meta = folder.meta
        count = len(folder)
        sizes = {"items": (self.root / ITEMS_FILE).stat().st_size, "vectors": 0, "indexes": 0, "crops": 0}
        for view in meta["views"]:
            sizes["vectors"] += folder.vector_path(view).stat().st_size
            with contextlib.suppress(FileNotFoundError):
                sizes["indexes"] += folder.index_path(view).stat().st_size
        crops = self.root / "crops"
        if crops.is_dir():
            sizes["crops"] = sum(p.stat().st_size for p in crops.rglob("*") if p.is_file())
        sizes["metadata"] = (self.root / GALLERY_FILE).stat().st_size
        times = folder.columns.time
        known = times[np.isfinite(times)] if times.size else times
        raw = sum(4 * dim for dim in self.views.values())
        without_crops = sum(v for k, v in sizes.items() if k != "crops")
        return {
            "path": str(self.root),
            "format": meta["format"],
            "model_fingerprint": self.model_fingerprint,
            "count": count,
            "views": {
                view: {"dim": dim, "index": meta["indexes"].get(view, {}),
                       **({"model": self.view_model(view)} if self.view_model(view) else {})}
                for view, dim in self.views.items()
            },
            "cameras": list(folder.columns.cameras.names),
            "identities": len(folder.columns.identities.names),
            "time_range": [float(known.min()), float(known.max())] if known.size else None,
            "bytes": sizes,
            "bytes_per_item_without_crops": without_crops / count if count else math.nan,
            "raw_float32_bytes_per_item": raw,
            "ranking": self.ranking,
            "versions": [dict(v.to_dict(), recorded=v.recorded) for v in self.versions()],
            "created": meta.get("created"),
            "updated": meta.get("updated"),
        }


__all__ = ["GALLERY_DOMAINS", "AddReport", "Gallery", "GalleryError", "Problem"]


def _stamp(path: Path) -> tuple | None:
    """What changes whenever ``gallery.json`` is replaced (None when it is absent)."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_ino, stat.st_mtime_ns, stat.st_size
