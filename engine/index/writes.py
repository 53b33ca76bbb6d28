"""The writes of a gallery: crops, adding items with their vectors, removing items, setting a view made by
another network, rebuilding the indexes, recording versions, content digests and the ranking. Every write
holds the gallery's write lock; the commit protocol is described in ``engine.index.store``."""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engine.index import column_files, columns, content, indexes, journal, vector_file
from engine.index import versions as gallery_versions
from engine.index.crops import put_crop
from engine.index.errors import GalleryCorruptError, GalleryInputError
from engine.index.folder import GalleryFolder
from engine.index.history import GalleryHistory
from engine.index.inputs import check_crops, check_vectors, check_vectors_of
from engine.index.items import ITEMS_FILE, GalleryItem, as_item
from engine.index.layout import (
    DEFAULT_BATCH,
    GALLERY_DOMAINS,
    GALLERY_FILE,
    AddReport,
    ProgressFn,
    check_view_models,
    check_views,
    now,
)
from engine.index.versions import GalleryVersion
from engine.index.view_index import ViewIndexes
from engine.index.writer_lock import writing
from engine.kernel.atomic import atomic_write_json
from engine.kernel.pause_points import pause_point
from engine.kernel.permissions import owner_only_umask


class GalleryWriter:
    """Writes one gallery folder under its write lock. ``reload`` reads the folder again (every index checked)
    into the shared state after another writer or a journal committed."""

    def __init__(self, folder: GalleryFolder, view_indexes: ViewIndexes, history: GalleryHistory,
                 reload: Callable[[], None]) -> None:
        self._folder = folder
        self._indexes = view_indexes
        self._history = history
        self._reload = reload

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the gallery's write lock; re-read the gallery first when another writer committed since."""
        root = self._folder.root
        with writing(root):
            journal.roll_forward(root)
            if GalleryFolder.read_meta(root / GALLERY_FILE) != json.loads(json.dumps(self._folder.meta)):
                self._reload()
            yield

    def _commit_meta(self, meta: dict[str, Any]) -> None:
        """Replace ``gallery.json`` atomically with ``meta`` and hold it as the folder's state."""
        self._folder.meta = meta
        atomic_write_json(self._folder.root / GALLERY_FILE, meta, indent=1)

    # ------------------------------------------------------------------------------------------------ metadata

    def record_ranking(self, domain: str, attribute_weight: float, origin: str, appearance: str | None = None) -> None:
        """Record the gallery's domain (``world`` or ``footage``) and the attribute weight its searches use by
        default, with where that weight came from, and (``appearance``) in words which view find-similar
        searches and why (one atomic rewrite of ``gallery.json``)."""
        with self.writing():
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
            self._commit_meta(dict(self._folder.meta, ranking=ranking, updated=now()))

    def record_version(self, sources: Sequence[str] = ()) -> GalleryVersion:
        """Record the committed items as a new version made from ``sources`` (names of the footage, crop folders
        or worlds) unless the last recorded version already is this state; returns the current version."""
        with self.writing():
            folder = self._folder
            meta = gallery_versions.with_current(folder.meta, folder.ids, sources, now())
            if meta is not folder.meta:
                self._commit_meta(dict(meta, updated=now()))
            return self._history.version

    def _record_content(self) -> None:
        """Before a write to a gallery made before content digests were kept: compute every item's digests
        from its stored record and vectors and record their chain head (once; O(items))."""
        if self._history.content_covered:
            return
        folder = self._folder
        parts = self._history.computed_parts()
        content.write_new(content.path_of(folder.root), parts)
        self._commit_meta(dict(folder.meta, updated=now(),
                               **{content.HEAD_KEY: content.chain(parts, content.row_width(folder.views))}))

    def _record_columns(self) -> None:
        """Before appending: a gallery whose column files do not match its items (made before they were kept)
        has them built from ``items.jsonl`` and recorded, so that batches can be appended to them."""
        folder = self._folder
        if column_files.recorded(folder.meta):
            return
        meta, built = column_files.load(folder.root, folder.meta)
        if not column_files.recorded(meta):
            raise GalleryCorruptError(f"the item columns of {folder.root} could not be written")
        folder.meta, folder.columns = meta, built

    # ------------------------------------------------------------------------------------------------ adding

    @owner_only_umask()
    def put_crop(self, data: bytes, suffix: str = ".png") -> tuple[str, str]:
        """Store a crop image's bytes in ``crops/``; returns (relative path, SHA-256) for the item record."""
        return put_crop(self._folder.root, data, suffix)

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
        return self.add_stream([(items, vectors_by_view)], batch_size=batch_size, progress=progress)

    @owner_only_umask()
    def add_stream(
        self,
        chunks: Iterable[tuple[Sequence[GalleryItem | Mapping[str, Any]], Mapping[str, Any]]],
        *,
        batch_size: int = DEFAULT_BATCH,
        progress: ProgressFn | None = None,
        total: int | None = None,
    ) -> AddReport:
        """``add`` for items that arrive in chunks (``(items, vectors_by_view)`` pairs, e.g. from a generator):
        the write lock is held and the indexes are loaded once for the whole stream, and written once at its
        end, so a gallery of millions of items is written in one pass with one chunk in memory at a time.

        Each chunk is validated before any of it is written; chunks already written stay committed when a later
        one is refused. Past the IVF threshold the index becomes IVF as soon as the gallery crosses it (trained
        on the items up to then) and the rest of the stream is added to it. ``progress(done, total)`` counts
        added items (``total``: what the caller expects in all; unknown: the count so far plus the chunk's)."""
        if batch_size < 1:
            raise GalleryInputError(f"batch_size must be positive, got {batch_size}")
        with self.writing():
            folder = self._folder
            added = skipped = 0
            prepared = False
            try:
                for items, vectors_by_view in chunks:
                    fresh, picked, vectors = self._checked_chunk(items, vectors_by_view)
                    skipped += len(items) - len(fresh)
                    if not fresh:
                        continue
                    if not prepared:
                        journal.roll_forward(folder.root)
                        journal.clear_pending(folder.root)
                        self._record_content()
                        self._record_columns()
                        for view in folder.meta["views"]:
                            self._indexes.writable(view)
                        prepared = True
                    expected = total if total is not None else added + len(fresh)
                    for start in range(0, len(fresh), batch_size):
                        rows = picked[start : start + batch_size]
                        self._append_batch(fresh[start : start + batch_size],
                                           {view: array[rows] for view, array in vectors.items()})
                        added += rows.size
                        if progress is not None:
                            progress(added, max(expected, added))
                    self._indexes.grow_kind()
            finally:
                if prepared:
                    self._finish_add()
            return AddReport(added=added, skipped=skipped)

    def _checked_chunk(self, items: Sequence[GalleryItem | Mapping[str, Any]],
                       vectors_by_view: Mapping[str, Any]) -> tuple[list[GalleryItem], np.ndarray, dict]:
        """(the chunk's items not yet in the gallery, their rows in the chunk, its vectors per view), checked."""
        folder = self._folder
        records = [as_item(item) for item in items]
        vectors = check_vectors(folder.views, vectors_by_view, len(records))
        seen: set[str] = set()
        for record in records:
            if record.id in seen:
                raise GalleryInputError(f"item id {record.id!r} appears twice in this add")
            seen.add(record.id)
        present = folder.columns.rows_of([record.id for record in records]) >= 0
        new_rows = np.flatnonzero(~present).astype(np.int64)
        return check_crops(folder.root, [records[i] for i in new_rows]), new_rows, vectors

    def _append_batch(self, batch: list[GalleryItem], vectors: dict[str, np.ndarray]) -> None:
        folder = self._folder
        count, items_bytes = folder.meta["count"], folder.meta["items_bytes"]
        lines = [(item.to_json() + "\n").encode("utf-8") for item in batch]
        half = {view: np.asarray(array, dtype=np.float16) for view, array in vectors.items()}
        for view, block in half.items():
            vector_file.append(folder.vector_path(view), count, folder.meta["views"][view]["dim"], block)
        width = content.row_width(half)
        parts = content.parts_of(lines, half)  # the new items only: the chain carries on from its head
        content.append_parts(folder.root, count, width, parts)
        with open(folder.root / ITEMS_FILE, "r+b") as fh:
            fh.truncate(items_bytes)
            fh.seek(items_bytes)
            fh.write(b"".join(lines))
            fh.flush()
            os.fsync(fh.fileno())
        names = column_files.append(folder.root, folder.columns, batch, [len(line) for line in lines], items_bytes)
        meta = dict(folder.meta, count=count + len(batch), items_bytes=items_bytes + sum(map(len, lines)),
                    updated=now(), **{content.HEAD_KEY: content.chain(parts, width, folder.meta[content.HEAD_KEY])})
        meta[columns.META_KEY] = column_files.entry_of(meta, names)
        atomic_write_json(folder.root / GALLERY_FILE, meta, indent=1)  # commit point
        pause_point("gallery:batch-committed")
        folder.meta = meta
        folder.columns = columns.open_columns(folder.root, meta)
        if column_files.refresh_lookup(folder.root, folder.columns):
            folder.columns = columns.open_columns(folder.root, meta)
        for view, block in half.items():
            self._indexes.append(view, block)
        folder.forget_matrices()
        self._indexes.forget_gpu_copies()

    def _finish_add(self) -> None:
        """Drop an uncommitted tail, fix vector headers, persist the indexes (switching to IVF past the threshold)."""
        folder = self._folder
        count = len(folder)
        with open(folder.root / ITEMS_FILE, "r+b") as fh:
            fh.truncate(folder.meta["items_bytes"])
        if self._history.content_covered:
            content.trim(folder.root, count, content.row_width(folder.views))
        index_meta = dict(folder.meta["indexes"])
        for view, entry in folder.meta["views"].items():
            vector_file.set_rows(folder.vector_path(view), count, entry["dim"])
            index_meta[view] = self._indexes.persist(view)
        self._commit_meta(dict(folder.meta, indexes=index_meta, updated=now()))

    def catch_up(self) -> list[str]:
        """Finish what a killed add left: trim its uncommitted tail and write every index that lags behind the
        committed vectors (a kill after the last commit and before the indexes were saved). Returns the views
        whose index file was rewritten (none when the gallery was already in step)."""
        with self.writing():
            folder = self._folder
            stale = [view for view in folder.meta["views"] if self._indexes.lags(view)]
            tail = (folder.root / ITEMS_FILE).stat().st_size != folder.meta["items_bytes"]
            if not stale and not tail:
                return []
            journal.clear_pending(folder.root)
            for view in folder.meta["views"]:
                self._indexes.writable(view)
            self._finish_add()
            return stale

    # ------------------------------------------------------------------------------------------------ rewriting

    @owner_only_umask()
    def remove(self, item_ids: Iterable[str]) -> int:
        """Remove items by id (all or nothing); rewrites vectors and indexes. Returns how many were removed."""
        with self.writing():
            folder = self._folder
            ids = list(dict.fromkeys(item_ids))
            drop = folder.rows(ids)
            if drop.size == 0:
                return 0
            keep = np.setdiff1d(np.arange(len(folder)), drop)
            journal.roll_forward(folder.root)
            journal.clear_pending(folder.root)
            self._record_content()
            moves: list[tuple[Path, Path]] = []
            lines = folder.raw_lines(keep.tolist())
            items_path = folder.root / ITEMS_FILE
            with open(journal.pending_name(items_path), "wb") as fh:
                fh.write(b"".join(lines))
                fh.flush()
                os.fsync(fh.fileno())
            moves.append((journal.pending_name(items_path), items_path))
            arrays, blob, names = column_files.kept_rows(folder.columns, keep, [len(line) for line in lines])
            moves += column_files.write_all(folder.root / columns.COLUMNS_DIR, arrays, blob, names,
                                            suffix=journal.PENDING_SUFFIX)
            index_meta = {}
            for view in folder.meta["views"]:
                kept = np.asarray(folder.stored_vectors(view)[keep])
                vector_path = folder.vector_path(view)
                vector_file.write_new(journal.pending_name(vector_path), kept)
                moves.append((journal.pending_name(vector_path), vector_path))
                kind = indexes.choose_kind(keep.size, folder.meta["ivf_threshold"])
                index, spec = indexes.build(kept, kind, folder.meta.get("recall_target", 0.95))
                index_path = folder.index_path(view)
                indexes.save(index, journal.pending_name(index_path))
                moves.append((journal.pending_name(index_path), index_path))
                index_meta[view] = spec.to_dict()
            remaining_crops = {json.loads(line).get("crop") for line in lines}
            removed_crops = sorted({c for c in (json.loads(x).get("crop") for x in folder.raw_lines(drop.tolist()))
                                    if c is not None and c not in remaining_crops})
            width = content.row_width(folder.views)
            stored = content.read_parts(folder.root, len(folder), width)  # the kept items' digests as recorded
            kept_parts = b"".join(stored[row * width : (row + 1) * width] for row in keep.tolist())
            content_path = content.path_of(folder.root)
            content.write_new(journal.pending_name(content_path), kept_parts)
            moves.append((journal.pending_name(content_path), content_path))
            at = now()
            before = gallery_versions.with_current(folder.meta, folder.ids, (), at)  # the state removed from, recorded
            before = gallery_versions.retire_after(before, int(drop.min()), f"{drop.size} items removed {at}")
            meta = dict(before, count=int(keep.size), items_bytes=sum(map(len, lines)), indexes=index_meta,
                        updated=at, **{content.HEAD_KEY: content.chain(kept_parts, width)})
            meta[columns.META_KEY] = column_files.entry_of(meta, names)
            kept_ids = [folder.ids[row] for row in keep.tolist()]
            meta = gallery_versions.with_current(meta, kept_ids, [f"{drop.size} items removed"], at)
            journal.commit(folder.root, moves, meta, removed_crops)
            self._reload()
            return int(drop.size)

    def set_view(self, view: str, vectors: np.ndarray, view_model: Mapping[str, Any]) -> None:
        """Add view ``view`` (or replace it) with one unit vector per item, row i for item i, made by the network
        ``view_model`` fingerprints; vectors and index are written first, then committed through the journal."""
        with self.writing():
            folder = self._folder
            count = len(folder)
            data = np.asarray(vectors)
            if data.ndim != 2 or data.shape[0] != count:
                raise GalleryInputError(f"view {view!r} needs one vector per item: {count} items, got shape "
                                        f"{data.shape}")
            views = {name: entry["dim"] for name, entry in folder.meta["views"].items()}
            views[view] = int(data.shape[1])
            view_meta = check_views(views)  # names, dimensions and file names of every view, the new one included
            foreign = dict(folder.meta.get("view_models", {}))
            foreign[view] = dict(view_model)
            checked = check_vectors_of(view, data, count, int(data.shape[1]))
            journal.roll_forward(folder.root)
            journal.clear_pending(folder.root)
            self._record_content()
            half = np.asarray(checked, dtype=np.float16)
            stem = view_meta[view]["file"]
            vector_path = folder.root / "vectors" / f"{stem}.f16.npy"
            index_path = folder.root / "index" / f"{stem}.faiss"
            vector_file.write_new(journal.pending_name(vector_path), half)
            index, spec = indexes.build(half, indexes.choose_kind(count, folder.meta["ivf_threshold"]),
                                        folder.meta.get("recall_target", 0.95))
            indexes.save(index, journal.pending_name(index_path))
            stored = content.read_parts(folder.root, count, content.row_width(folder.views))
            parts, new_views = content.with_view(stored, list(folder.views), view, half)  # only this view digested
            content_path = content.path_of(folder.root)
            content.write_new(journal.pending_name(content_path), parts)
            at = now()
            before = gallery_versions.with_current(folder.meta, folder.ids, (), at)  # the state before, recorded
            meta = dict(before, views=view_meta, view_models=check_view_models(foreign, view_meta),
                        indexes={**folder.meta["indexes"], view: spec.to_dict()}, updated=at,
                        **{content.HEAD_KEY: content.chain(parts, content.row_width(new_views))})
            meta = gallery_versions.with_current(meta, folder.ids, [f"view {view} set"], at)
            journal.commit(folder.root, [(journal.pending_name(vector_path), vector_path),
                                         (journal.pending_name(index_path), index_path),
                                         (journal.pending_name(content_path), content_path)], meta)
            self._reload()

    @owner_only_umask()
    def rebuild(self, progress: ProgressFn | None = None) -> None:
        """Rebuild every index from the vectors (kind chosen by size), trim interrupted appends, fix headers.

        Cannot restore lost vectors, items or crops: ``verify`` reports those."""
        with self.writing():
            folder = self._folder
            journal.roll_forward(folder.root)
            journal.clear_pending(folder.root)
            count = len(folder)
            with open(folder.root / ITEMS_FILE, "r+b") as fh:
                fh.truncate(folder.meta["items_bytes"])
            moves: list[tuple[Path, Path]] = []
            index_meta = {}
            kind = indexes.choose_kind(count, folder.meta["ivf_threshold"])
            views = list(folder.meta["views"].items())
            for done, (view, entry) in enumerate(views, start=1):
                vector_file.set_rows(folder.vector_path(view), count, entry["dim"])
                stored = folder.stored_vectors(view)
                if kind == "ivf" and count > 0:
                    index, spec = indexes.build(stored, "ivf", folder.meta.get("recall_target", 0.95))
                else:
                    index, spec = indexes.build(stored, "flat")
                index_path = folder.index_path(view)
                indexes.save(index, journal.pending_name(index_path))
                moves.append((journal.pending_name(index_path), index_path))
                index_meta[view] = spec.to_dict()
                if progress is not None:
                    progress(done, len(views))
            meta = dict(folder.meta, indexes=index_meta, updated=now())
            arrays, blob, names = column_files.parse(folder.root / ITEMS_FILE, meta["items_bytes"], count)
            moves += column_files.write_all(folder.root / columns.COLUMNS_DIR, arrays, blob, names,
                                            suffix=journal.PENDING_SUFFIX)
            meta[columns.META_KEY] = column_files.entry_of(meta, names)
            meta = self._rebuilt_content(meta, moves)
            journal.commit(folder.root, moves, meta)
            self._reload()

    def _rebuilt_content(self, meta: dict[str, Any], moves: list[tuple[Path, Path]]) -> dict[str, Any]:
        """``meta`` after a rebuild's check of the content digests: kept when the stored ones give the recorded
        chain head; computed from the items and vectors as they are now (a new head, recorded as a new version)
        when the gallery has none (made before they were kept) or they are lost or damaged. Recorded digests
        are never replaced while they are intact, so a rebuild does not hide a change ``verify`` names."""
        folder = self._folder
        width = content.row_width(folder.views)
        recorded = meta.get(content.HEAD_KEY)
        if recorded is not None:
            try:
                if content.chain(content.read_parts(folder.root, len(folder), width), width) == recorded:
                    return meta
            except GalleryCorruptError:
                pass
        parts = self._history.computed_parts()
        path = content.path_of(folder.root)
        content.write_new(journal.pending_name(path), parts)
        moves.append((journal.pending_name(path), path))
        why = "content digests recorded" if recorded is None else "content digests recomputed (the recorded ones " \
                                                                  "were lost or damaged)"
        meta = dict(meta, **{content.HEAD_KEY: content.chain(parts, width)})
        return gallery_versions.with_current(meta, folder.ids, [why], now())
