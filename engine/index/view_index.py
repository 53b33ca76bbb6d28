"""A gallery's FAISS index per view, loaded from ``index/<view>.faiss`` (the kinds are ``engine.index.indexes``'):
checked against the vectors, caught up after a killed add, grown by the writer, searched (on a GPU copy when
FAISS sees a GPU)."""

from __future__ import annotations

from collections.abc import Sequence

import faiss
import numpy as np

from engine.index import indexes
from engine.index.errors import GalleryIndexError, GalleryInputError, GalleryMismatchError
from engine.index.folder import GalleryFolder
from engine.index.scoring import inner_products


class ViewIndexes:
    """The loaded index of each view of one gallery folder, and searches over them."""

    def __init__(self, folder: GalleryFolder) -> None:
        self._folder = folder
        self._loaded: dict[str, faiss.Index] = {}
        self._writable: set[str] = set()
        self._gpu: dict[str, indexes.GpuCopy] = {}
        self._built_recall: dict[str, float | None] = {}  # recall measured by an IVF build not yet recorded

    def adopt(self, other: ViewIndexes) -> None:
        """Take the indexes ``other`` loaded (the same folder opened again after a commit)."""
        self._loaded, self._writable, self._gpu = other._loaded, other._writable, other._gpu

    def get(self, view: str) -> faiss.Index:
        """The view's index, memory-mapped; checked against the vectors and caught up after a killed add."""
        if view in self._loaded:
            return self._loaded[view]
        folder = self._folder
        dim = folder.check_view(view)
        path = folder.index_path(view)
        if not path.is_file():
            raise GalleryIndexError(f"index file {path} for view {view!r} is missing")
        kind, index_dim, ntotal = indexes.peek(path)
        if index_dim != dim:
            raise GalleryIndexError(f"index {path} has dimension {index_dim}, view {view!r} has {dim}")
        if ntotal > len(folder):
            raise GalleryIndexError(f"index {path} holds {ntotal} vectors but the gallery has {len(folder)} items")
        index = indexes.load(path, writable=ntotal < len(folder))
        if index.ntotal != ntotal or index.d != dim:
            raise GalleryIndexError(f"index {path} header and body disagree")
        if ntotal < len(folder):
            indexes.add_rows(index, folder.stored_vectors(view)[ntotal:])
            self._writable.add(view)
        self._loaded[view] = index
        return index

    def writable(self, view: str) -> faiss.Index:
        """The view's index loaded into memory (not memory-mapped), so that rows can be added to it."""
        if view not in self._writable:
            self._loaded.pop(view, None)
            index = self.get(view)
            if view not in self._writable:
                index = indexes.load(self._folder.index_path(view), writable=True)
                self._loaded[view] = index
                self._writable.add(view)
        return self._loaded[view]

    def lags(self, view: str) -> bool:
        """Whether the view's index file, or what ``gallery.json`` records of it, is behind the committed items."""
        path = self._folder.index_path(view)
        recorded = self._folder.meta["indexes"].get(view, {}).get("count")
        return indexes.peek(path)[2] != len(self._folder) or recorded != len(self._folder)

    def spec(self, view: str) -> indexes.IndexSpec:
        recall = self._folder.meta["indexes"].get(view, {}).get("recall_at_100")
        return indexes.spec_of(self.get(view), recall)

    def append(self, view: str, block: np.ndarray) -> None:
        """Add committed float16 rows to the view's (writable) index."""
        indexes.add_rows(self._loaded[view], block)

    def forget_gpu_copies(self) -> None:
        """Drop the GPU copies (the indexes grew)."""
        self._gpu.clear()

    def grow_kind(self) -> None:
        """Past the IVF threshold, replace each loaded flat index by an IVF one built from the stored vectors
        and written at once; the writer goes on adding to it."""
        meta = self._folder.meta
        if indexes.choose_kind(len(self._folder), meta["ivf_threshold"]) != "ivf":
            return
        for view, index in list(self._loaded.items()):
            if not isinstance(index, faiss.IndexIVF):
                self.persist(view)

    def persist(self, view: str) -> dict:
        """Write the view's loaded index to its file, first rebuilt as IVF when the gallery has grown past the
        IVF threshold; returns what ``gallery.json`` records of it."""
        meta = self._folder.meta
        index = self._loaded[view]
        recall = self._built_recall.get(view, meta["indexes"].get(view, {}).get("recall_at_100"))
        wanted = indexes.choose_kind(len(self._folder), meta["ivf_threshold"])
        if wanted == "ivf" and not isinstance(index, faiss.IndexIVF):
            index, spec = indexes.build(self._folder.stored_vectors(view), "ivf", meta.get("recall_target", 0.95))
            self._loaded[view] = index
            recall = self._built_recall[view] = spec.recall_at_100
        indexes.save(index, self._folder.index_path(view))
        return indexes.spec_of(index, recall).to_dict()

    def search(
        self, view: str, query: np.ndarray, k: int, subset: Sequence[int] | np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (rows, scores) by inner product, best first. Without ``subset`` the view's FAISS index answers
        (GPU copy when FAISS sees a GPU); with ``subset`` the given rows are scored exactly."""
        folder = self._folder
        dim = folder.check_view(view)
        q = np.ascontiguousarray(query, dtype=np.float32)
        if q.shape != (dim,):
            raise GalleryMismatchError(f"query for view {view!r} must have shape ({dim},), got {q.shape}")
        if not np.isfinite(q).all():
            raise GalleryInputError("query vector has NaN or infinite values")
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise GalleryInputError(f"k must be a positive integer, got {k!r}")
        if subset is not None:
            rows = np.asarray(subset, dtype=np.int64)
            scores = inner_products(folder.matrix(view), q, rows)
            take = min(int(k), rows.size)
            top = np.argpartition(-scores, take - 1)[:take] if take else np.zeros(0, dtype=np.int64)
            top = top[np.lexsort((rows[top], -scores[top]))]
            return rows[top], scores[top]
        take = min(int(k), len(folder))
        if take == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        searcher = self._gpu_copy(view) or self.get(view)
        scores, rows = searcher.search(q[None, :], take)
        keep = rows[0] >= 0
        return rows[0][keep], scores[0][keep]

    def _gpu_copy(self, view: str) -> indexes.GpuCopy | None:
        if not indexes.gpu_available():
            return None
        if view not in self._gpu:
            self._gpu[view] = indexes.GpuCopy(self.get(view), self._folder.stored_vectors(view))
        return self._gpu[view]
