"""The writes of a ``Gallery`` (a mixin of ``engine.index.store``): crops, adding items with their vectors,
removing items, setting a view made by another network, rebuilding the indexes. Every write holds the
gallery's write lock; the commit protocol is described in ``engine.index.store``."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from engine.index import content, indexes, journal, vector_file
from engine.index import versions as gallery_versions
from engine.index.crops import put_crop
from engine.index.errors import (
    GalleryCorruptError,
    GalleryInputError,
    GalleryMismatchError,
)
from engine.index.items import ITEMS_FILE, GalleryItem, as_item
from engine.index.layout import (
    DEFAULT_BATCH,
    GALLERY_FILE,
    NORM_TOLERANCE,
    AddReport,
    ProgressFn,
    check_view_models,
    check_views,
    now,
)
from engine.kernel.atomic import atomic_write_json
from engine.kernel.hashing import sha256_file
from engine.kernel.paths import PathEscapeError, contained
from engine.kernel.pause_points import pause_point
from engine.kernel.permissions import owner_only_umask


class GalleryWrites:
    """Adding, removing, setting a view and rebuilding; state and reads are ``Gallery``'s."""

    # ------------------------------------------------------------------------------------------------ writing

    @owner_only_umask()
    def put_crop(self, data: bytes, suffix: str = ".png") -> tuple[str, str]:
        """Store a crop image's bytes in ``crops/``; returns (relative path, SHA-256) for the item record."""
        return put_crop(self.root, data, suffix)

    def _check_vectors(self, vectors_by_view: Mapping[str, Any], count: int) -> dict[str, np.ndarray]:
        missing = set(self._meta["views"]) - set(vectors_by_view)
        extra = set(vectors_by_view) - set(self._meta["views"])
        if missing or extra:
            raise GalleryMismatchError(
                f"vectors must cover exactly the gallery's views {sorted(self.views)}; "
                f"missing {sorted(missing)}, unknown {sorted(extra)}"
            )
        return {view: self._check_vectors_of(view, array, count, self._meta["views"][view]["dim"])
                for view, array in vectors_by_view.items()}

    @staticmethod
    def _check_vectors_of(view: str, array: Any, count: int, dim: int) -> np.ndarray:
        """``array`` as [count, dim] finite, L2-normalised floats; ``GalleryInputError``/``GalleryMismatchError``."""
        data = np.asarray(array)
        if data.ndim != 2 or data.shape != (count, dim):
            raise GalleryMismatchError(
                f"vectors for view {view!r} must have shape ({count}, {dim}), got {data.shape}"
            )
        if not np.issubdtype(data.dtype, np.floating):
            raise GalleryInputError(f"vectors for view {view!r} must be floating point, got {data.dtype}")
        if not np.isfinite(data).all():
            raise GalleryInputError(f"vectors for view {view!r} contain NaN or infinite values")
        norms = np.linalg.norm(data.astype(np.float32, copy=False), axis=1)
        bad = np.flatnonzero(np.abs(norms - 1) > NORM_TOLERANCE)
        if bad.size:
            raise GalleryInputError(
                f"vectors for view {view!r} must be L2-normalised; row {int(bad[0])} has norm {norms[bad[0]]:.4f}"
            )
        return data

    def _check_crops(self, items: list[GalleryItem]) -> list[GalleryItem]:
        checked = []
        for item in items:
            if item.crop is not None:
                try:
                    path = contained(self.root, item.crop, f"item {item.id!r}: crop")
                except PathEscapeError as exc:
                    raise GalleryInputError(str(exc)) from None
                if not path.is_file():
                    raise GalleryInputError(f"item {item.id!r}: crop file {path} does not exist")
                digest = sha256_file(path)
                if item.crop_sha256 is not None and item.crop_sha256 != digest:
                    raise GalleryInputError(f"item {item.id!r}: crop {path} has SHA-256 {digest}, the item says "
                                            f"{item.crop_sha256}")
                item = replace(item, crop_sha256=digest)
            checked.append(item)
        return checked

    @owner_only_umask()
    def add(
        self,
        items: Sequence[GalleryItem | Mapping[str, Any]],
        vectors_by_view: Mapping[str, Any],
        *,
        batch_size: int = DEFAULT_BATCH,
        progress: ProgressFn | None = None,
    ) -> AddReport:
        """Append items with one vector per view each (row i of every array belongs to ``items[i]``).

        Everything is validated before anything is written. Ids already in the gallery are skipped, so adding
        the same items again resumes an interrupted ingest. Batches commit one by one (see module docstring)."""
        with self._writing():
            records = [as_item(item) for item in items]
            vectors = self._check_vectors(vectors_by_view, len(records))
            seen: set[str] = set()
            for record in records:
                if record.id in seen:
                    raise GalleryInputError(f"item id {record.id!r} appears twice in this add")
                seen.add(record.id)
            new_rows = np.asarray([i for i, r in enumerate(records) if r.id not in self._columns.row_of],
                                  dtype=np.int64)
            fresh = self._check_crops([records[i] for i in new_rows])
            if batch_size < 1:
                raise GalleryInputError(f"batch_size must be positive, got {batch_size}")
            report = AddReport(added=len(fresh), skipped=len(records) - len(fresh))
            if not fresh:
                return report
            journal.roll_forward(self.root)
            journal.clear_pending(self.root)
            self._record_content()
            for view in self._meta["views"]:
                self._writable_index(view)
            done = 0
            try:
                for start in range(0, len(fresh), batch_size):
                    batch = fresh[start : start + batch_size]
                    picked = new_rows[start : start + batch_size]
                    self._append_batch(batch, {view: array[picked] for view, array in vectors.items()})
                    done += len(batch)
                    if progress is not None:
                        progress(done, len(fresh))
            finally:
                self._finish_add()
            return report

    def _append_batch(self, batch: list[GalleryItem], vectors: dict[str, np.ndarray]) -> None:
        count, items_bytes = self._meta["count"], self._meta["items_bytes"]
        lines = [(item.to_json() + "\n").encode("utf-8") for item in batch]
        half = {view: np.asarray(array, dtype=np.float16) for view, array in vectors.items()}
        for view, block in half.items():
            vector_file.append(self._vector_path(view), count, self._meta["views"][view]["dim"], block)
        width = content.row_width(half)
        parts = content.parts_of(lines, half)  # the new items only: the chain carries on from its head
        content.append_parts(self.root, count, width, parts)
        with open(self.root / ITEMS_FILE, "r+b") as fh:
            fh.truncate(items_bytes)
            fh.seek(items_bytes)
            fh.write(b"".join(lines))
            fh.flush()
            os.fsync(fh.fileno())
        meta = dict(self._meta, count=count + len(batch), items_bytes=items_bytes + sum(map(len, lines)),
                    updated=now(), **{content.HEAD_KEY: content.chain(parts, width, self._meta[content.HEAD_KEY])})
        atomic_write_json(self.root / GALLERY_FILE, meta, indent=1)  # commit point
        pause_point("gallery:batch-committed")
        self._meta = meta
        self._columns.append(batch, map(len, lines), items_bytes)
        for view, block in half.items():
            indexes.add_rows(self._indexes[view], block)
        self._matrices.clear()
        self._gpu.clear()

    def _finish_add(self) -> None:
        """Drop an uncommitted tail, fix vector headers, persist the indexes (switching to IVF past the threshold)."""
        count = len(self)
        with open(self.root / ITEMS_FILE, "r+b") as fh:
            fh.truncate(self._meta["items_bytes"])
        if self.content_covered:
            content.trim(self.root, count, content.row_width(self.views))
        index_meta = dict(self._meta["indexes"])
        for view, entry in self._meta["views"].items():
            vector_file.set_rows(self._vector_path(view), count, entry["dim"])
            index = self._indexes[view]
            recall = index_meta.get(view, {}).get("recall_at_100")
            wanted = indexes.choose_kind(count, self._meta["ivf_threshold"])
            if wanted == "ivf" and not isinstance(index, faiss.IndexIVF):
                index, spec = indexes.build(self.stored_vectors(view), "ivf", self._meta.get("recall_target", 0.95))
                self._indexes[view] = index
                recall = spec.recall_at_100
            indexes.save(index, self._index_path(view))
            index_meta[view] = indexes.spec_of(index, recall).to_dict()
        self._meta = dict(self._meta, indexes=index_meta, updated=now())
        atomic_write_json(self.root / GALLERY_FILE, self._meta, indent=1)

    @owner_only_umask()
    def remove(self, item_ids: Iterable[str]) -> int:
        """Remove items by id (all or nothing); rewrites vectors and indexes. Returns how many were removed."""
        with self._writing():
            ids = list(dict.fromkeys(item_ids))
            drop = self.rows(ids)
            if drop.size == 0:
                return 0
            keep = np.setdiff1d(np.arange(len(self)), drop)
            journal.roll_forward(self.root)
            journal.clear_pending(self.root)
            self._record_content()
            moves: list[tuple[Path, Path]] = []
            lines = self._raw_lines(keep.tolist())
            items_path = self.root / ITEMS_FILE
            with open(journal.pending_name(items_path), "wb") as fh:
                fh.write(b"".join(lines))
                fh.flush()
                os.fsync(fh.fileno())
            moves.append((journal.pending_name(items_path), items_path))
            index_meta = {}
            for view in self._meta["views"]:
                kept = np.asarray(self.stored_vectors(view)[keep])
                vector_path = self._vector_path(view)
                vector_file.write_new(journal.pending_name(vector_path), kept)
                moves.append((journal.pending_name(vector_path), vector_path))
                kind = indexes.choose_kind(keep.size, self._meta["ivf_threshold"])
                index, spec = indexes.build(kept, kind, self._meta.get("recall_target", 0.95))
                index_path = self._index_path(view)
                indexes.save(index, journal.pending_name(index_path))
                moves.append((journal.pending_name(index_path), index_path))
                index_meta[view] = spec.to_dict()
            remaining_crops = {json.loads(line).get("crop") for line in lines}
            removed_crops = sorted({c for c in (json.loads(x).get("crop") for x in self._raw_lines(drop.tolist()))
                                    if c is not None and c not in remaining_crops})
            width = content.row_width(self.views)
            stored = content.read_parts(self.root, len(self), width)  # the kept items' digests as recorded
            kept_parts = b"".join(stored[row * width : (row + 1) * width] for row in keep.tolist())
            content_path = content.path_of(self.root)
            content.write_new(journal.pending_name(content_path), kept_parts)
            moves.append((journal.pending_name(content_path), content_path))
            at = now()
            before = gallery_versions.with_current(self._meta, self.ids, (), at)  # the state removed from, recorded
            before = gallery_versions.retire_after(before, int(drop.min()), f"{drop.size} items removed {at}")
            meta = dict(before, count=int(keep.size), items_bytes=sum(map(len, lines)), indexes=index_meta,
                        updated=at, **{content.HEAD_KEY: content.chain(kept_parts, width)})
            kept_ids = [self.ids[row] for row in keep.tolist()]
            meta = gallery_versions.with_current(meta, kept_ids, [f"{drop.size} items removed"], at)
            journal.commit(self.root, moves, meta, removed_crops)
            self._reload()
            return int(drop.size)

    def set_view(self, view: str, vectors: np.ndarray, view_model: Mapping[str, Any]) -> None:
        """Add view ``view`` (or replace it) with one unit vector per item, row i for item i, made by the network
        ``view_model`` fingerprints; vectors and index are written first, then committed through the journal."""
        with self._writing():
            data = np.asarray(vectors)
            if data.ndim != 2 or data.shape[0] != len(self):
                raise GalleryInputError(f"view {view!r} needs one vector per item: {len(self)} items, got shape "
                                        f"{data.shape}")
            views = {name: entry["dim"] for name, entry in self._meta["views"].items()}
            views[view] = int(data.shape[1])
            view_meta = check_views(views)  # names, dimensions and file names of every view, the new one included
            foreign = dict(self._meta.get("view_models", {}))
            foreign[view] = dict(view_model)
            checked = self._check_vectors_of(view, data, len(self), int(data.shape[1]))
            journal.roll_forward(self.root)
            journal.clear_pending(self.root)
            self._record_content()
            half = np.asarray(checked, dtype=np.float16)
            stem = view_meta[view]["file"]
            vector_path = self.root / "vectors" / f"{stem}.f16.npy"
            index_path = self.root / "index" / f"{stem}.faiss"
            vector_file.write_new(journal.pending_name(vector_path), half)
            index, spec = indexes.build(half, indexes.choose_kind(len(self), self._meta["ivf_threshold"]),
                                        self._meta.get("recall_target", 0.95))
            indexes.save(index, journal.pending_name(index_path))
            stored = content.read_parts(self.root, len(self), content.row_width(self.views))
            parts, new_views = content.with_view(stored, list(self.views), view, half)  # only this view digested
            content_path = content.path_of(self.root)
            content.write_new(journal.pending_name(content_path), parts)
            at = now()
            before = gallery_versions.with_current(self._meta, self.ids, (), at)  # the state before, recorded
            meta = dict(before, views=view_meta, view_models=check_view_models(foreign, view_meta),
                        indexes={**self._meta["indexes"], view: spec.to_dict()}, updated=at,
                        **{content.HEAD_KEY: content.chain(parts, content.row_width(new_views))})
            meta = gallery_versions.with_current(meta, self.ids, [f"view {view} set"], at)
            journal.commit(self.root, [(journal.pending_name(vector_path), vector_path),
                                       (journal.pending_name(index_path), index_path),
                                       (journal.pending_name(content_path), content_path)], meta)
            self._reload()

    @owner_only_umask()
    def rebuild(self, progress: ProgressFn | None = None) -> dict[str, Any]:
        """Rebuild every index from the vectors (kind chosen by size), trim interrupted appends, fix headers.

        Cannot restore lost vectors, items or crops: ``verify`` reports those."""
        with self._writing():
            journal.roll_forward(self.root)
            journal.clear_pending(self.root)
            count = len(self)
            with open(self.root / ITEMS_FILE, "r+b") as fh:
                fh.truncate(self._meta["items_bytes"])
            moves: list[tuple[Path, Path]] = []
            index_meta = {}
            kind = indexes.choose_kind(count, self._meta["ivf_threshold"])
            views = list(self._meta["views"].items())
            for done, (view, entry) in enumerate(views, start=1):
                vector_file.set_rows(self._vector_path(view), count, entry["dim"])
                if kind == "ivf" and count > 0:
                    index, spec = indexes.build(self.stored_vectors(view), "ivf", self._meta.get("recall_target", 0.95))
                else:
                    index, spec = indexes.build(self.stored_vectors(view), "flat")
                index_path = self._index_path(view)
                indexes.save(index, journal.pending_name(index_path))
                moves.append((journal.pending_name(index_path), index_path))
                index_meta[view] = spec.to_dict()
                if progress is not None:
                    progress(done, len(views))
            meta = dict(self._meta, indexes=index_meta, updated=now())
            meta = self._rebuilt_content(meta, moves)
            journal.commit(self.root, moves, meta)
            self._reload()
            return self.info()

    def _rebuilt_content(self, meta: dict[str, Any], moves: list[tuple[Path, Path]]) -> dict[str, Any]:
        """``meta`` after a rebuild's check of the content digests: kept when the stored ones give the recorded
        chain head; computed from the items and vectors as they are now (a new head, recorded as a new version)
        when the gallery has none (made before they were kept) or they are lost or damaged. Recorded digests
        are never replaced while they are intact, so a rebuild does not hide a change ``verify`` names."""
        width = content.row_width(self.views)
        recorded = meta.get(content.HEAD_KEY)
        if recorded is not None:
            try:
                if content.chain(content.read_parts(self.root, len(self), width), width) == recorded:
                    return meta
            except GalleryCorruptError:
                pass
        parts = self._computed_parts()
        path = content.path_of(self.root)
        content.write_new(journal.pending_name(path), parts)
        moves.append((journal.pending_name(path), path))
        why = "content digests recorded" if recorded is None else "content digests recomputed (the recorded ones " \
                                                                  "were lost or damaged)"
        meta = dict(meta, **{content.HEAD_KEY: content.chain(parts, width)})
        return gallery_versions.with_current(meta, self.ids, [why], now())

    def _record_content(self) -> None:
        """Before a write to a gallery made before content digests were kept: compute every item's digests
        from its stored record and vectors and record their chain head (once; O(items))."""
        if self.content_covered:
            return
        parts = self._computed_parts()
        content.write_new(content.path_of(self.root), parts)
        self._meta = dict(self._meta, updated=now(),
                          **{content.HEAD_KEY: content.chain(parts, content.row_width(self.views))})
        atomic_write_json(self.root / GALLERY_FILE, self._meta, indent=1)

    def _reload(self) -> None:
        fresh = type(self).open(self.root)
        self.__dict__.update(fresh.__dict__)
