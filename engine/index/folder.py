"""A gallery folder read at one commit: ``gallery.json``, the item columns and records, the vectors per view.

``GalleryFolder`` is the state every part of a ``Gallery`` (``engine.index.store``) shares: its indexes
(``engine.index.view_index``), versions (``engine.index.history``) and writer (``engine.index.writes``) read
it, and the writer replaces ``meta`` and ``columns`` as it commits. The layout of the folder is described in
``engine.index.store``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engine.index import column_files, content, indexes, vector_file
from engine.index.columns import COLUMNS_DIR, FIXED, META_KEY, ItemColumns
from engine.index.errors import GalleryCorruptError, GalleryInputError, GalleryMismatchError
from engine.index.items import ITEMS_FILE, GalleryItem
from engine.index.layout import FORMAT_VERSION, GALLERY_FILE, ProgressFn, check_meta_types, check_views, now
from engine.index.scoring import to_float32
from engine.kernel import jsonio
from engine.kernel.atomic import atomic_write_json
from engine.kernel.paths import PathEscapeError, contained


class GalleryFolder:
    """The committed metadata (``meta``, the contents of ``gallery.json``), the item columns and the reads of
    items and vectors they allow."""

    def __init__(self, root: Path, meta: dict[str, Any], columns: ItemColumns) -> None:
        self.root = root
        self.meta = meta
        self.columns = columns
        self._matrices: dict[str, np.ndarray] = {}

    @classmethod
    def read(cls, root: Path, progress: ProgressFn | None = None) -> GalleryFolder:
        """The folder at its last commit; ``GalleryCorruptError`` when its files disagree. The item columns are
        memory-mapped; a gallery without them has them built once (``progress(rows, count)``; see
        ``engine.index.column_files.load``)."""
        meta = cls.read_meta(root / GALLERY_FILE)
        for entry in meta["views"].values():
            vector_file.check(root / "vectors" / f"{entry['file']}.f16.npy", meta["count"], entry["dim"])
        size = (root / ITEMS_FILE).stat().st_size if (root / ITEMS_FILE).exists() else -1
        if size < meta["items_bytes"]:
            raise GalleryCorruptError(f"{root / ITEMS_FILE} holds {max(size, 0)} bytes but gallery.json records "
                                      f"{meta['items_bytes']}: the item list is truncated")
        meta, columns = column_files.load(root, meta, progress)
        return cls(root, meta, columns)

    def adopt(self, other: GalleryFolder) -> None:
        """Take the state of ``other`` (the same folder read again after a commit)."""
        self.root, self.meta, self.columns, self._matrices = other.root, other.meta, other.columns, other._matrices

    @staticmethod
    def read_meta(path: Path) -> dict[str, Any]:
        """``gallery.json`` read and checked; ``GalleryCorruptError`` when it is unreadable or malformed."""
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

    # ------------------------------------------------------------------------------------------------ metadata

    @property
    def model_fingerprint(self) -> str:
        return self.meta["model_fingerprint"]

    def view_model(self, view: str) -> dict[str, Any] | None:
        """The fingerprint of the network that made ``view`` when it is not the checkpoint (else None)."""
        model = self.meta.get("view_models", {}).get(view)
        return None if model is None else dict(model)

    @property
    def ranking(self) -> dict[str, Any] | None:
        """The hybrid ranking's settings recorded for this gallery (``domain``, ``attribute_weight``,
        ``origin``: where the weight came from), or None when none were recorded (galleries made before)."""
        value = self.meta.get("ranking")
        return dict(value) if isinstance(value, dict) else None

    @property
    def views(self) -> dict[str, int]:
        """View name → vector dimension."""
        return {name: entry["dim"] for name, entry in self.meta["views"].items()}

    def check_view(self, view: str) -> int:
        """The dimension of ``view``; ``GalleryMismatchError`` when the gallery has no such view."""
        if view not in self.meta["views"]:
            raise GalleryMismatchError(f"view {view!r} is not in the gallery {self.root}; it has {list(self.views)}")
        return self.meta["views"][view]["dim"]

    def check_model(self, model_fingerprint: str | None = None, dims: Mapping[str, int] | None = None) -> None:
        """Raise ``GalleryMismatchError`` when a checkpoint is not the one that made this gallery."""
        if model_fingerprint is not None and model_fingerprint != self.model_fingerprint:
            raise GalleryMismatchError(
                f"checkpoint fingerprint {model_fingerprint!r} does not match the gallery's "
                f"{self.model_fingerprint!r} ({self.root}); ingest the footage again with this checkpoint"
            )
        for view, dim in (dims or {}).items():
            if view in self.meta["views"] and self.meta["views"][view]["dim"] != dim:
                raise GalleryMismatchError(
                    f"view {view!r} has dimension {self.meta['views'][view]['dim']} in the gallery, the "
                    f"checkpoint gives {dim}"
                )

    # ------------------------------------------------------------------------------------------------ items

    @property
    def ids(self) -> Sequence[str]:
        return self.columns.ids

    def __len__(self) -> int:
        return self.meta["count"]

    def __contains__(self, item_id: object) -> bool:
        return item_id in self.columns.row_of

    def row(self, item_id: str) -> int:
        try:
            return self.columns.row_of[item_id]
        except KeyError:
            raise GalleryInputError(f"item {item_id!r} is not in the gallery {self.root}") from None

    def rows(self, item_ids: Iterable[str]) -> np.ndarray:
        wanted = list(item_ids)
        found = self.columns.rows_of(wanted)
        missing = np.flatnonzero(found < 0)
        if missing.size:
            raise GalleryInputError(f"item {wanted[int(missing[0])]!r} is not in the gallery {self.root}")
        return found

    def item(self, key: str | int) -> GalleryItem:
        """The full item record by id or row (read from ``items.jsonl``)."""
        row = self.row(key) if isinstance(key, str) else int(key)
        if not 0 <= row < len(self):
            raise GalleryInputError(f"row {row} is outside the gallery (0..{len(self) - 1})")
        where = f"{self.root / ITEMS_FILE} line {row + 1}"
        try:
            return GalleryItem.from_dict(jsonio.loads(self.raw_lines([row])[0], where))
        except jsonio.JsonInputError as exc:
            raise GalleryCorruptError(str(exc)) from None
        except GalleryInputError as exc:
            raise GalleryCorruptError(f"{where}: {exc}") from None

    def raw_lines(self, rows: Sequence[int]) -> list[bytes]:
        """The ``items.jsonl`` lines of the given rows, byte for byte."""
        offsets = self.columns.offset
        count = len(offsets)
        out = []
        with open(self.root / ITEMS_FILE, "rb") as fh:
            for row in rows:
                start = int(offsets[row])
                end = int(offsets[row + 1]) if row + 1 < count else self.meta["items_bytes"]
                fh.seek(start)
                out.append(fh.read(end - start))
        return out

    def iter_items(self) -> Iterable[GalleryItem]:
        with open(self.root / ITEMS_FILE, "rb", buffering=1 << 20) as fh:
            for row in range(len(self)):
                yield GalleryItem.from_dict(jsonio.loads(fh.readline(), f"{self.root / ITEMS_FILE} row {row}"))

    # ------------------------------------------------------------------------------------------------ vectors

    def vector_path(self, view: str) -> Path:
        return self.root / "vectors" / f"{self.meta['views'][view]['file']}.f16.npy"

    def index_path(self, view: str) -> Path:
        return self.root / "index" / f"{self.meta['views'][view]['file']}.faiss"

    def stored_vectors(self, view: str) -> np.ndarray:
        """Read-only float16 memory map [count, dim] of one view."""
        dim = self.check_view(view)
        return vector_file.rows_view(self.vector_path(view), len(self), dim)

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

    def forget_matrices(self) -> None:
        """Drop the cached float32 matrices (the vectors grew)."""
        self._matrices.clear()


def write_new_folder(root: Path, view_meta: dict, model_fingerprint: str, ivf_threshold: int,
                     recall_target: float, foreign: dict) -> None:
    """The files of a new, empty gallery in ``root``: empty items, digests and vectors, an empty flat index per
    view, and ``gallery.json`` last."""
    for folder in (root, root / "vectors", root / "index", root / "crops"):
        folder.mkdir(parents=True, exist_ok=True)
    (root / ITEMS_FILE).touch()
    content.path_of(root).touch()
    empty = ItemColumns.empty()
    names: dict[str, list[str]] = {"camera": [], "identity": [], "modality": []}
    for written, final in column_files.write_all(root / COLUMNS_DIR, {n: empty.array(n) for n in FIXED}, b"", names,
                                                 suffix=".new"):
        written.replace(final)
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
        META_KEY: column_files.entry_of({"count": 0, "items_bytes": 0}, names),
        "created": now(),
        "updated": now(),
        "id": uuid.uuid4().hex,
    }
    atomic_write_json(root / GALLERY_FILE, meta, indent=1)
