"""Attribute evidence for gallery items: computed from crops (pixels, the checkpoint's attribute heads and the
shipped pretrained attribute network) and stored beside the gallery (``engine.index.evidence_table``) for the
hybrid ranking.

- ``compute_evidence(crops, masks, scenes, model, network=…)``: per crop ``{"pixels": …, "model": …,
  "pretrained": …}`` (each an ``AttributeEvidence.to_dict()``); pixels per crop (``extract_attributes``), model
  heads and the network (``engine.perception.attributes.pretrained.AttributeNetwork``) in batches;
- ``add_evidence(gallery, items, crops, …, objects=…)``: the ingest hook, one call per batch of items just
  added; ``objects`` is each item's ``"objects"`` evidence (its track's carried objects, made at ingest by
  ``engine.perception.attributes.objects``), stored as given;
- ``refresh_evidence(gallery, model, network=…)``: recompute every item's evidence from its stored crop, its
  stored silhouette (video items: the background model's foreground at ingest) and its source frame (for colour
  constancy, when the source is readable), replacing the table atomically. The ``"objects"`` evidence is kept
  as stored: it comes from the detector's pass over every frame of a track, which a refresh does not redo; the
  model's and the network's are kept when no model or network is given;
- ``fill_missing_evidence(gallery, model)``: the same computation for the items that have a crop and no
  evidence row (an ingest killed between its gallery commit and its evidence write, before evidence was
  written first), appended to the table; their "objects" evidence cannot be recovered.

Pixel colours are only read from RGB items: an infrared crop has no colours to name, so IR items get no
pixel evidence (their model evidence is still computed, with the IR modality).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from engine.index import evidence_table as store
from engine.index.crops import read_silhouette
from engine.index.writer_lock import writing
from engine.kernel.paths import is_contained
from engine.kernel.video_frames import VideoFrames, VideoInputError
from engine.perception.attributes.evidence import AttributeEvidence
from engine.perception.attributes.extract import extract_attributes
from engine.perception.attributes.inputs import MIN_CROP_HEIGHT, MIN_CROP_WIDTH, AttributeInputError
from engine.perception.attributes.pretrained import SOURCE
from engine.retrieval.evidence.model_heads import has_heads, model_evidence

DEFAULT_BATCH = 64
ProgressFn = Callable[[int, int], None]


def _too_small(crop: np.ndarray) -> bool:
    shape = getattr(crop, "shape", None)
    return shape is not None and len(shape) >= 2 and (shape[0] < MIN_CROP_HEIGHT or shape[1] < MIN_CROP_WIDTH)


def compute_evidence(crops: Sequence[np.ndarray], masks: Sequence[np.ndarray | None] | None = None,
                     scenes: Sequence[np.ndarray | None] | None = None, model=None, *,
                     modalities: str | Sequence[str] | None = None, resolutions: str | Sequence[str] | None = None,
                     batch_size: int = DEFAULT_BATCH, network=None) -> list[dict[str, dict[str, Any]]]:
    """Evidence of every BGR uint8 crop: ``[{"pixels": EVIDENCE, "model": EVIDENCE}, …]``, EVIDENCE being an
    ``AttributeEvidence.to_dict()``.

    ``masks``/``scenes``: per crop its foreground mask (255 = person) and the frame it was cut from, or None;
    ``model``: a ``PersonSearchModel`` whose image attribute heads give the "model" source (none without heads);
    ``modalities`` ("rgb"/"ir", default rgb) and ``resolutions`` (HR/mild/mid/ultra, default HR): one value or
    one per crop. A crop too small to read or from an IR item gets no "pixels" entry. ``network``: an
    ``AttributeNetwork`` giving the "pretrained" source (RGB crops big enough to read; none without it)."""
    count = len(crops)
    masks = [None] * count if masks is None else list(masks)
    scenes = [None] * count if scenes is None else list(scenes)
    if len(masks) != count or len(scenes) != count:
        raise ValueError(f"compute_evidence needs one mask and one scene (or None) per crop: {count} crops, "
                         f"{len(masks)} masks, {len(scenes)} scenes")
    kinds = [modalities] * count if modalities is None or isinstance(modalities, str) else list(modalities)
    if len(kinds) != count:
        raise ValueError(f"compute_evidence needs one modality per crop: {count} crops, {len(kinds)} modalities")
    out: list[dict[str, dict[str, Any]]] = [{} for _ in range(count)]
    for i, (crop, mask, scene, kind) in enumerate(zip(crops, masks, scenes, kinds, strict=True)):
        if kind == "ir" or _too_small(crop):
            continue
        try:
            out[i]["pixels"] = extract_attributes(crop, mask, scene).to_dict()
        except AttributeInputError as exc:
            raise ValueError(f"crop {i}: {exc}") from None
    if has_heads(model):
        for i, evidence in enumerate(model_evidence(model, crops, modalities, resolutions, batch_size=batch_size)):
            out[i]["model"] = evidence.to_dict()
    if network is not None:
        readable = [i for i, (crop, kind) in enumerate(zip(crops, kinds, strict=True))
                    if kind != "ir" and not _too_small(crop)]
        for i, evidence in zip(readable, network.evidence([crops[i] for i in readable]), strict=True):
            out[i][SOURCE] = evidence.to_dict()
    return out


def _fingerprint(model) -> str | None:
    if not has_heads(model):
        return None
    from engine.retrieval.models.checkpoint import model_fingerprint

    return model_fingerprint(model)


def add_evidence(gallery, items: Sequence[Any], crops: Sequence[np.ndarray],
                 masks: Sequence[np.ndarray | None] | None = None, scenes: Sequence[np.ndarray | None] | None = None,
                 model=None, *, model_fingerprint: str | None = None, batch_size: int = DEFAULT_BATCH,
                 objects: Sequence[AttributeEvidence | None] | None = None, network=None) -> int:
    """The ingest hook: compute and store the evidence of a batch of items just added to ``gallery`` (a
    ``Gallery`` or its folder). ``items`` are ``GalleryItem``s (ids, modality, resolution), ``crops`` their BGR
    uint8 crops, ``masks``/``scenes`` optional per item, ``model`` the checkpoint or None (pixels only),
    ``objects`` optional per item its carried-objects evidence (None: the detector looked for no objects),
    ``network`` the pretrained attribute network or None.
    Items that already have evidence are skipped before anything is computed. Returns the rows added.
    Pass ``model_fingerprint`` when known (hashing the weights takes a moment on every call otherwise)."""
    root = Path(gallery) if isinstance(gallery, str | Path) else Path(gallery.root)
    if len(items) != len(crops):
        raise ValueError(f"add_evidence needs one crop per item: {len(items)} items, {len(crops)} crops")
    if objects is not None and len(objects) != len(items):
        raise ValueError(f"add_evidence needs one objects evidence (or None) per item: {len(items)} items, "
                         f"{len(objects)} given")
    table = store.current_table(store.folder_of(root))
    missing = [i for i, item in enumerate(items) if table is None or item.id not in table.row_of]
    if not missing:
        return 0

    def pick(values):
        return None if values is None else [values[i] for i in missing]

    records = compute_evidence([crops[i] for i in missing], pick(masks), pick(scenes), model,
                               modalities=[items[i].modality or "rgb" for i in missing],
                               resolutions=[items[i].resolution or "HR" for i in missing], batch_size=batch_size,
                               network=network)
    for record, i in zip(records, missing, strict=True):
        carried = None if objects is None else objects[i]
        if carried is not None:
            record["objects"] = carried.to_dict()
    fingerprint = model_fingerprint if model_fingerprint is not None else _fingerprint(model)
    return store.append(root, [items[i].id for i in missing], records, model_fingerprint=fingerprint)


# ------------------------------------------------------------------------------------------- refresh


def _read_crop(root: Path, item) -> np.ndarray | None:
    if item.crop is None:
        return None
    if not is_contained(root, item.crop):
        return None
    data = np.fromfile(root / item.crop, dtype=np.uint8) if (root / item.crop).is_file() else None
    return None if data is None or not data.size else cv2.imdecode(data, cv2.IMREAD_COLOR)


class FrameCursor:
    """Frames of one video (``engine.kernel.video_frames``: exact frame indices, forward reads decode on);
    ``get(frame)`` gives the BGR image of a 0-based frame, or None when the file cannot give it."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._video: VideoFrames | None = None

    def get(self, frame: int) -> np.ndarray | None:
        try:
            if self._video is None:
                self._video = VideoFrames(self.source)
            return self._video.read(frame)
        except VideoInputError:
            return None

    def close(self) -> None:
        if self._video is not None:
            self._video.close()
            self._video = None


def source_frames(source: str, frames: Iterable[int]) -> dict[int, np.ndarray]:
    """The given frames (0-based, read order) of a video as BGR images; frames it cannot give are left out."""
    cursor = FrameCursor(source)
    try:
        found = {frame: cursor.get(frame) for frame in sorted(set(frames))}
    finally:
        cursor.close()
    return {frame: image for frame, image in found.items() if image is not None}


def _batches(items: list, size: int) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def refresh_evidence(gallery, model=None, *, scenes: bool = True, batch_size: int = DEFAULT_BATCH,
                     progress: ProgressFn | None = None, network=None) -> dict[str, Any]:
    """Recompute the evidence of every item of ``gallery`` from its stored crop and replace the table.

    ``model``: the "model" source (None keeps the model evidence already stored, if any); ``scenes``: read
    each video item's source frame for colour constancy (items whose source is missing go without). The
    "objects" evidence already stored is kept (it needs the detector's pass over the whole track). Returns
    ``{"items", "pixels", "model", "objects", "pretrained", "no_crop", "seconds"}`` counts. ``network``: the
    "pretrained" source (None keeps the network evidence already stored, if any)."""
    import time

    started = time.perf_counter()
    root = Path(gallery.root)
    counts = {"items": len(gallery), "pixels": 0, "model": 0, "objects": 0, SOURCE: 0, "no_crop": 0}
    with store.rewriting(root, model_fingerprint=None) as writer:
        old = store.EvidenceTable.read(root)  # read under the write lock: nobody appends meanwhile
        keep_model = model is None and old is not None and "model" in old.sources
        writer.model_fingerprint = _fingerprint(model) if model is not None else \
            (old.sources["model"].get("fingerprint") if keep_model else None)
        keep_objects = old is not None and "objects" in old.sources
        keep_network = network is None and old is not None and SOURCE in old.sources
        kept_sources = ("model",) * keep_model + ("objects",) * keep_objects + (SOURCE,) * keep_network
        items = list(gallery.iter_items())
        done = 0
        for chunk, readable, records in _stored_crop_evidence(root, items, model, scenes, batch_size, network):
            counts["no_crop"] += len(chunk) - len(readable)
            picked = [items[i] for i in readable]
            if kept_sources:
                for item, record in zip(picked, records, strict=True):
                    row = old.row_of.get(item.id)
                    stored = {} if row is None else old.record(row)
                    for source in kept_sources:
                        if source in stored:
                            record[source] = stored[source].to_dict()
            # every item with a readable crop keeps a row, empty when nothing could be read from it (``verify``
            # checks that every item with a crop has one)
            kept = [(item.id, r) for item, r in zip(picked, records, strict=True)]
            if keep_objects:  # an item whose crop is unreadable keeps its objects evidence all the same
                read = set(readable)
                for i in chunk:
                    row = -1 if i in read else old.row_of.get(items[i].id, -1)
                    stored = old.record(row).get("objects") if row >= 0 else None
                    if stored is not None:
                        kept.append((items[i].id, {"objects": stored.to_dict()}))
            writer.add([k for k, _ in kept], [r for _, r in kept])
            for source in ("pixels", "model", "objects", SOURCE):
                counts[source] += sum(source in r for _, r in kept)
            done += len(chunk)
            if progress is not None:
                progress(done, len(items))
    counts["seconds"] = round(time.perf_counter() - started, 3)
    return counts


def _stored_crop_evidence(root: Path, items: list, model, scenes: bool, batch_size: int,
                          network=None) -> Iterator[tuple[list[int], list[int], list[dict[str, Any]]]]:
    """Evidence of ``items`` from their stored crops and silhouettes (and, with ``scenes``, their source frames),
    in chunks read in source order: yields (the chunk's item indices, those whose crop was readable, their
    evidence records)."""
    order = sorted(range(len(items)), key=lambda i: (items[i].source, items[i].frame or 0))
    by_source: dict[str, list[int]] = {}
    for i in order:
        by_source.setdefault(items[i].source, []).append(i)
    for source, indices in by_source.items():
        cursor = FrameCursor(source)
        try:
            for chunk in _batches(indices, batch_size):
                frames = {}
                if scenes:
                    wanted = sorted({items[i].frame for i in chunk if items[i].frame is not None})
                    frames = {frame: cursor.get(frame) for frame in wanted}
                readable = [(i, crop) for i in chunk if (crop := _read_crop(root, items[i])) is not None]
                picked = [items[i] for i, _ in readable]
                records = compute_evidence(
                    [crop for _, crop in readable], [read_silhouette(root, item.id) for item in picked],
                    [frames.get(item.frame) if item.frame is not None else None for item in picked], model,
                    modalities=[item.modality or "rgb" for item in picked],
                    resolutions=[item.resolution or "HR" for item in picked], batch_size=batch_size,
                    network=network)
                yield chunk, [i for i, _ in readable], records
        finally:
            cursor.close()


def items_without_evidence(gallery) -> list:
    """The gallery's items that have a crop and no row in its evidence table (every such item when it has no
    table), in gallery order."""
    table = store.EvidenceTable.read(gallery.root)
    have = {} if table is None else table.row_of
    rows = [row for row, item_id in enumerate(gallery.ids) if item_id not in have]  # no item parsed when none
    return [item for item in map(gallery.item, rows) if item.crop is not None]


def fill_missing_evidence(gallery, model=None, *, model_fingerprint: str | None = None, scenes: bool = True,
                          batch_size: int = DEFAULT_BATCH, network=None) -> int:
    """Compute and append the evidence of the items that have a crop and no evidence row (see
    ``items_without_evidence``) from their stored crops, silhouettes and source frames, like
    ``refresh_evidence``; an item whose crop cannot be read gets an empty row. Returns the rows added."""
    root = Path(gallery.root)
    with writing(root):
        missing = items_without_evidence(gallery)
        if not missing:
            return 0
        fingerprint = model_fingerprint if model_fingerprint is not None else _fingerprint(model)
        added = 0
        for chunk, readable, records in _stored_crop_evidence(root, missing, model, scenes, batch_size, network):
            found = dict(zip(readable, records, strict=True))
            added += store.append(root, [missing[i].id for i in chunk], [found.get(i, {}) for i in chunk],
                                  model_fingerprint=fingerprint)
        return added
