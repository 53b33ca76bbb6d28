"""``ingest(source, gallery, encoder)``: sources → frames → detections → tracks → a few sharp crops per track →
vectors per view → gallery, in batches, with progress, resumable.

Two threads: a reader decodes, detects, tracks, selects, writes crop files and hands over batches of items
(bounded queue); the caller's thread encodes each batch and appends it to the gallery. So decoding and
detection overlap with the model.

Each item records its source file and SHA-256, frame, time, camera, box (x, y, w, h in source pixels), track,
crop (content-addressed in the gallery) and crop SHA-256, resolution level from the crop height
(``engine.ingest.resolution``) and modality; world items carry their identity and attributes as well. Each
batch's attribute evidence is computed and committed just before the batch itself
(``engine.attributes.gallery.add_evidence``), so every committed item has its evidence: for
video, from the crop inside the detector's foreground silhouette (kept in the gallery, ``silhouettes/``, for
``gallery rebuild``) with a thumbnail of the frame for colour constancy. When the detector also finds carried
objects (``Detections.objects``), every observation of a track tallies the objects assigned to its box, and
the track's items get that tally as their ``"objects"`` evidence (``engine.attributes.objects``).

Item ids are ``<first 16 hex of the file's SHA-256>-<16 hex of SHA-256(file sha, frame, track, box)>``:
reading a source again gives the same ids, so items already in the gallery are skipped before they are
encoded. A source's done marker (``engine.ingest.markers``) is written after its last batch is committed;
a killed ingest therefore leaves committed batches (the gallery's own commit point) and no marker for the
source it was in, and running it again finishes that source without duplicates.

An ingest holds the gallery's write lock (``engine.gallery.writer_lock``) for its whole run; a second writer
is refused. Before reading anything it finishes what an interrupted run left: indexes that lag behind the
committed vectors are written (``Gallery.catch_up``), and items without evidence (a gallery written before the
evidence came first) get it from their stored crops (``engine.attributes.gallery.fill_missing_evidence``).
"""

from __future__ import annotations

import hashlib
import math
import queue
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from engine.attributes.constancy import scene_thumbnail
from engine.attributes.gallery import add_evidence, fill_missing_evidence
from engine.attributes.objects import CarriedTally, objects_by_person
from engine.attributes.ranking import DomainWeights
from engine.gallery import Gallery, GalleryItem
from engine.gallery.crops import put_crop, put_silhouette
from engine.gallery.writer_lock import is_empty_folder, writing
from engine.hashing import sha256_bytes
from engine.images import ImageInputError, decode_image, read_image_bytes
from engine.ingest.appearance import check_view_models
from engine.ingest.crops import (
    MIN_CROP_HEIGHT,
    MIN_CROP_WIDTH,
    RAW_CROP_SUFFIXES,
    CropFolder,
    discover_crops,
    too_small,
)
from engine.ingest.detectors import PersonDetector, make_detector
from engine.ingest.encoder import Encoder
from engine.ingest.errors import IngestError, SourceSkipped
from engine.ingest.markers import read_marker, write_marker
from engine.ingest.resolution import level_of_height
from engine.ingest.samples import Candidate, TrackSamples, sharpness
from engine.ingest.sources import ImageSequence, Source, VideoSource, WorldSource, discover
from engine.ingest.summary import IngestSummary, SourceReport
from engine.ingest.timing import parse_time
from engine.ingest.tracking import PersonTracker, SeparateDetections, TrackerSettings
from engine.pause_points import pause_point
from engine.permissions import owner_only_umask
from engine.progress import ProgressFn, no_progress

MODALITY_CHOICES: tuple[str, ...] = ("auto", "rgb", "ir")
GREY_TOLERANCE = 3  # grey levels between channels below which a frame counts as single-channel (IR) footage
PNG_COMPRESSION = 3
CROP_SUFFIX = ".png"


@dataclass(frozen=True)
class IngestOptions:
    stride: int = 1  # read every stride-th frame of a video / image of a sequence
    samples_per_track: int = 3
    track: bool = True  # False: every detection is an item of its own
    tracker: TrackerSettings = field(default_factory=TrackerSettings)
    min_box_height: float = 24.0  # detections shorter than this (source pixels) are dropped
    camera: str | None = None  # overrides the camera names files give
    start: float | None = None  # start time (seconds) of every video, overriding sidecars and names
    modality: str = "auto"  # auto: grey footage is "ir", colour footage "rgb"
    batch_size: int = 32  # items per encode call and gallery commit
    force: bool = False  # read sources again although they have done markers
    queue_depth: int = 4  # batches the reader may run ahead of the encoder
    attributes: bool = True  # store attribute evidence per item (pixels, and the model's heads when it has them)
    crops: bool = False  # the source is a folder of person crops: one item per image (engine.ingest.crops)
    tiles: str | None = None  # tiling of the default detector (YOLOX): auto | off | RxC; None = its default

    def __post_init__(self) -> None:
        if self.stride < 1:
            raise IngestError(f"frame stride must be at least 1, got {self.stride}")
        if self.samples_per_track < 1:
            raise IngestError(f"samples per track must be at least 1, got {self.samples_per_track}")
        if not self.min_box_height >= 1:
            raise IngestError(f"minimum box height must be at least 1 pixel, got {self.min_box_height}")
        if self.modality not in MODALITY_CHOICES:
            raise IngestError(f"modality must be one of {list(MODALITY_CHOICES)}, got {self.modality!r}")
        if self.batch_size < 1 or self.queue_depth < 1:
            raise IngestError(f"batch size and queue depth must be at least 1, got {self.batch_size}, "
                              f"{self.queue_depth}")
        if self.camera is not None and not self.camera.strip():
            raise IngestError("camera name must not be empty")
        if self.crops and self.stride != 1:
            raise IngestError(f"frame stride {self.stride} does not apply to a folder of person crops (every image "
                              "is one person)")

    def settings(self, detector: PersonDetector) -> dict[str, Any]:
        """What decides which items a source gives (recorded in done markers)."""
        if self.crops:
            return {"crops": True, "min_crop": [MIN_CROP_WIDTH, MIN_CROP_HEIGHT], "modality": self.modality}
        return {"detector": detector.settings(), "tracker": self.tracker.to_dict() if self.track else None,
                "stride": self.stride, "samples_per_track": self.samples_per_track,
                "min_box_height": self.min_box_height, "modality": self.modality}


def item_id(file_sha256: str, frame: int | None, track: int | None, box: tuple[float, ...]) -> str:
    text = f"{file_sha256}|{frame}|{track}|" + ",".join(f"{v:.1f}" for v in box)
    return f"{file_sha256[:16]}-{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def looks_grey(image: np.ndarray) -> bool:
    """True when the frame's three channels agree (single-channel footage such as infrared)."""
    sample = image[::4, ::4].astype(np.int16)
    return bool(np.abs(sample[..., 0] - sample[..., 1]).max() <= GREY_TOLERANCE
                and np.abs(sample[..., 1] - sample[..., 2]).max() <= GREY_TOLERANCE)


def open_gallery(root: str | Path, encoder: Encoder) -> Gallery:
    """The gallery at ``root`` (created for ``encoder``'s views when the folder is absent or empty), checked
    against the encoder's fingerprint and views."""
    root = Path(root)
    if is_empty_folder(root):
        return Gallery.create(root, encoder.views, encoder.fingerprint,
                              view_models=getattr(encoder, "view_models", None))
    gallery = Gallery.open(root)
    check_view_models(gallery, encoder)
    gallery.check_model(encoder.fingerprint, encoder.views)
    if set(gallery.views) != set(encoder.views):
        raise IngestError(f"gallery {root} holds views {sorted(gallery.views)}, the encoder gives "
                          f"{sorted(encoder.views)}; ingest into a new gallery folder")
    return gallery


@dataclass
class _Batch:
    report: SourceReport
    items: list[GalleryItem]
    crops: list[np.ndarray]
    masks: list[np.ndarray | None] | None = None  # per crop its foreground silhouette (video), else None
    scenes: list[np.ndarray | None] | None = None  # per crop a thumbnail of its frame (colour constancy)
    objects: list | None = None  # per crop its track's carried-objects evidence, or None


@dataclass
class _Finished:
    report: SourceReport
    key: str | None
    marker: dict[str, Any] | None


class _Reader:
    """Everything before the model: runs in the reader thread and yields ``_Batch``/``_Finished`` events."""

    def __init__(self, sources: list[Source], root: Path, present: set[str], detector: PersonDetector | None,
                 options: IngestOptions, summary: IngestSummary, progress: ProgressFn) -> None:
        self.sources = sources
        self.root = root
        self.seen = present
        self.chosen = detector
        self.defaults: dict[str, PersonDetector] = {}
        self.options = options
        self.summary = summary
        self.progress = progress
        self.done = 0
        self.first = 0  # progress count when the current source started
        self.expected = [s.expected_frames(options.stride) for s in sources]
        self.total = sum(self.expected)

    def detector_for(self, source: Source) -> PersonDetector:
        """The detector given to ``ingest``, else the default for the source's kind: the shipped YOLOX-Nano
        (``engine.ingest.yolox``) for every kind; for videos with its background model on, so that items keep
        a foreground silhouette (worlds are not detected but record detector settings in their markers)."""
        if self.chosen is not None:
            return self.chosen
        if source.kind not in self.defaults:
            tiling = {} if self.options.tiles is None else {"tiles": self.options.tiles}
            self.defaults[source.kind] = make_detector("auto", foreground=source.kind == "video", **tiling)
        return self.defaults[source.kind]

    def on_skip(self, path: str, reason: str) -> None:
        self.summary.skipped_files.append((path, reason))

    def tick(self, steps: int = 1) -> None:
        self.done += steps
        self.total = max(self.total, self.done)
        self.progress(self.done, self.total)

    def events(self) -> Iterator[_Batch | _Finished]:
        self.progress(0, self.total)
        for source, expected in zip(self.sources, self.expected, strict=True):
            yield from self._source(source, expected)
            self.tick(max(0, self.first + expected - self.done))  # frames announced but never read

    def _source(self, source: Source, expected: int) -> Iterator[_Batch | _Finished]:
        """One source's batches, then its ``_Finished`` (with a marker only when it was read through)."""
        self.first = self.done
        report = SourceReport(str(source.path), source.kind, getattr(source, "camera", None))
        detector = self.detector_for(source)
        settings = self.options.settings(detector)
        try:
            key = source.key
            marker = None if self.options.force else read_marker(self.root, key)
            if marker is not None:
                report.status = "done before"
                report.items_present = int(marker.get("items", 0))
                if marker.get("settings") != settings:
                    report.notes.append("done before with other settings; not read again (use force to re-read)")
                yield _Finished(report, None, None)
                return
            if isinstance(source, WorldSource):
                yield from self._world(source, report)
            elif isinstance(source, CropFolder):
                yield from self._crops(source, report)
            else:
                yield from self._footage(source, report, detector)
        except SourceSkipped as exc:
            report.status, report.reason = "skipped", exc.reason
            yield _Finished(report, None, None)
            return
        marker = {"key": key, "kind": source.kind, "path": report.path, "camera": report.camera,
                  "settings": settings, "frames": report.frames, "detections": report.detections,
                  "tracks": report.tracks, "items": report.items_kept, "notes": report.notes}
        yield _Finished(report, key, marker)

    # ------------------------------------------------------------------------------------------- footage

    def _footage(self, source: VideoSource | ImageSequence, report: SourceReport,
                 detector: PersonDetector) -> Iterator[_Batch]:
        options = self.options
        tracker = PersonTracker(options.tracker) if options.track else SeparateDetections()
        detector.reset()
        warm_up = getattr(detector, "warm_up", None)
        if warm_up is not None:  # a stateful detector reads the source's first frames ahead (engine.ingest.motion)
            with closing(source.frames(options.stride, [], lambda path, reason: None)) as ahead:
                warm_up(frame.image for frame in ahead)
        samples: dict[int, TrackSamples] = {}
        carried: dict[int, CarriedTally] = {}  # per object key: the carried objects over all its observations
        track_of: dict[int, int | None] = {}
        pending: list[tuple[GalleryItem, np.ndarray]] = []
        kept_before = report.items_present
        produced = 0
        modality = None if options.modality == "auto" else options.modality
        for frame in source.frames(options.stride, report.notes, self.on_skip):
            if modality is None:
                modality = "ir" if looks_grey(frame.image) else "rgb"
            found = detector.detect(frame.image)
            report.frames += 1
            report.detections += len(found)
            tall = found.boxes[:, 3] >= options.min_box_height
            # objects go to their person among all the boxes found (a short box's bag is not handed to a neighbour)
            seen = objects_by_person(found.boxes, found.objects, found.scores) if options.attributes else None
            seen = None if seen is None else [s for s, keep in zip(seen, tall.tolist(), strict=True) if keep]
            report.small += int((~tall).sum())
            found = found.subset(tall)
            step = tracker.update(found)
            track_of.update(step.tracks)
            scene = scene_thumbnail(frame.image) if options.attributes and step.matches else None
            for key, index in step.matches:
                if seen is not None:
                    carried.setdefault(key, CarriedTally()).observe(seen[index])
                candidate = _candidate(frame, found.boxes[index], float(found.scores[index]), found.foreground, scene)
                if candidate is not None:
                    samples.setdefault(key, TrackSamples(options.samples_per_track)).offer(candidate)
            for key in step.ended:
                closed = self._close(key, samples, track_of, report, source.camera, modality, carried.pop(key, None))
                produced += len(closed)
                pending.extend(closed)
            while len(pending) >= options.batch_size:
                yield self._batch(report, pending[: options.batch_size])
                del pending[: options.batch_size]
            self.tick()
        for key in tracker.finish():
            closed = self._close(key, samples, track_of, report, source.camera, modality, carried.pop(key, None))
            produced += len(closed)
            pending.extend(closed)
        for start in range(0, len(pending), options.batch_size):
            yield self._batch(report, pending[start : start + options.batch_size])
        if produced == 0 and report.items_present == kept_before:
            report.notes.append("no person kept: no detection became a track" if options.track
                                else "no person kept: the detector found nobody")

    def _close(self, key: int, samples: dict[int, TrackSamples], track_of: dict[int, int | None],
               report: SourceReport, camera: str, modality: str,
               tally: CarriedTally | None = None) -> list[tuple[GalleryItem, Candidate]]:
        """Items of an object that ended: its picked samples when it was a confirmed track (each with the
        track's carried-objects evidence from ``tally``), else nothing."""
        reservoir = samples.pop(key, None)
        if key not in track_of:
            return []
        track = track_of.pop(key)
        if track is not None:
            report.tracks += 1
        if reservoir is None:
            return []
        out = []
        carried = None if tally is None else tally.evidence()
        for candidate in reservoir.picked():
            candidate.objects = carried
            file_sha = candidate.info["file_sha256"]
            identifier = item_id(file_sha, candidate.frame, track, candidate.box)
            if identifier in self.seen:
                report.items_present += 1
                continue
            self.seen.add(identifier)
            ok, encoded = cv2.imencode(CROP_SUFFIX, candidate.crop, [cv2.IMWRITE_PNG_COMPRESSION, PNG_COMPRESSION])
            if not ok:
                raise IngestError(f"OpenCV could not encode a crop of {candidate.info['file']} as PNG")
            relative, crop_sha = put_crop(self.root, encoded.tobytes(), CROP_SUFFIX)
            item = GalleryItem(
                id=identifier, source=str(candidate.info["file"]), frame=candidate.frame, time=candidate.info["time"],
                camera=camera, box=candidate.box, track=track, source_sha256=file_sha, crop_sha256=crop_sha,
                resolution=level_of_height(candidate.crop.shape[0]), crop=relative, modality=modality,
            )
            if candidate.mask is not None and self.options.attributes:
                put_silhouette(self.root, identifier, candidate.mask)
            out.append((item, candidate))
        return out

    @staticmethod
    def _batch(report: SourceReport, pairs: list[tuple[GalleryItem, Candidate]]) -> _Batch:
        return _Batch(report, [item for item, _ in pairs], [c.crop for _, c in pairs], [c.mask for _, c in pairs],
                      [c.scene for _, c in pairs], [c.objects for _, c in pairs])

    # --------------------------------------------------------------------------------------------- world

    def _world(self, source: WorldSource, report: SourceReport) -> Iterator[_Batch]:
        items: list[GalleryItem] = []
        crops: list[np.ndarray] = []
        sketches = 0
        for sample in source.samples():
            self.tick()
            if sample.modality == "sketch":
                sketches += 1
                continue
            try:
                data = read_image_bytes(sample.image)
                image = decode_image(data, str(sample.image))
            except ImageInputError as exc:
                self.on_skip(str(sample.image), exc.reason)
                continue
            report.frames += 1
            height, width = image.shape[:2]
            file_sha = sha256_bytes(data)
            box = (0.0, 0.0, float(width), float(height))
            identifier = item_id(file_sha, None, None, box)
            if identifier in self.seen:
                report.items_present += 1
                continue
            self.seen.add(identifier)
            relative, crop_sha = put_crop(self.root, data, sample.image.suffix.lower() or ".jpg")
            extra = sample.extra
            items.append(GalleryItem(
                id=identifier, source=str(sample.image.resolve()), frame=None,
                time=parse_time(extra["time"], f"{sample.image}: time") if "time" in extra else None,
                camera=sample.camera, box=box, track=None, source_sha256=file_sha, crop_sha256=crop_sha,
                resolution=extra["resolution"], crop=relative, identity=str(sample.identity),
                modality=sample.modality, attributes=extra["attributes"],
            ))
            crops.append(image)
            if len(items) == self.options.batch_size:
                yield _Batch(report, items, crops)
                items, crops = [], []
        if items:
            yield _Batch(report, items, crops)
        if sketches:
            report.notes.append(f"{sketches} sketches left out: sketches are query material, not footage")

    # --------------------------------------------------------------------------------------------- crops

    def _crops(self, source: CropFolder, report: SourceReport) -> Iterator[_Batch]:
        """One item per image of a crop folder: box = the whole image, crop = the image (engine.ingest.crops)."""
        items: list[GalleryItem] = []
        crops: list[np.ndarray] = []
        for frame in source.frames(1, report.notes, self.on_skip):
            self.tick()
            report.frames += 1
            reason = too_small(frame.image)
            if reason is not None:
                report.small += 1
                self.on_skip(str(frame.file), reason)
                continue
            height, width = frame.image.shape[:2]
            box = (0.0, 0.0, float(width), float(height))
            identifier = item_id(frame.file_sha256, None, None, box)
            if identifier in self.seen:
                report.items_present += 1
                continue
            suffix = frame.file.suffix.lower()
            try:
                data = frame.file.read_bytes() if suffix in RAW_CROP_SUFFIXES else None
            except OSError as exc:
                self.on_skip(str(frame.file), f"cannot be read: {exc.strerror or exc}")
                continue
            if data is None:
                ok, encoded = cv2.imencode(CROP_SUFFIX, frame.image, [cv2.IMWRITE_PNG_COMPRESSION, PNG_COMPRESSION])
                if not ok:
                    raise IngestError(f"OpenCV could not encode {frame.file} as PNG")
                data, suffix = encoded.tobytes(), CROP_SUFFIX
            self.seen.add(identifier)
            relative, crop_sha = put_crop(self.root, data, suffix)
            modality = self.options.modality
            if modality == "auto":
                modality = "ir" if looks_grey(frame.image) else "rgb"
            items.append(GalleryItem(
                id=identifier, source=str(frame.file.resolve()), frame=None, time=frame.time, camera=source.camera,
                box=box, track=None, source_sha256=frame.file_sha256, crop_sha256=crop_sha,
                resolution=level_of_height(height), crop=relative, modality=modality,
            ))
            crops.append(frame.image)
            if len(items) == self.options.batch_size:
                yield _Batch(report, items, crops)
                items, crops = [], []
        if items:
            yield _Batch(report, items, crops)


def _candidate(frame, box: np.ndarray, score: float, foreground: np.ndarray | None = None,
               scene: np.ndarray | None = None) -> Candidate | None:
    """The crop of ``box`` (and its cut of the frame's ``foreground`` mask, when the detector gives one)."""
    height, width = frame.image.shape[:2]
    x0, y0 = max(0, math.floor(box[0])), max(0, math.floor(box[1]))
    x1, y1 = min(width, math.ceil(box[0] + box[2])), min(height, math.ceil(box[1] + box[3]))
    if x1 - x0 < 1 or y1 - y0 < 1:
        return None
    crop = np.ascontiguousarray(frame.image[y0:y1, x0:x1])
    mask = None
    if foreground is not None and foreground.shape[:2] == (height, width):
        mask = np.ascontiguousarray(foreground[y0:y1, x0:x1])
    rounded = tuple(round(float(v), 1) for v in box)
    return Candidate(frame.index, rounded, score, sharpness(crop), crop,
                     {"file": frame.file.resolve(), "file_sha256": frame.file_sha256, "time": frame.time},
                     mask, scene)


_END = object()


def _in_background(events: Iterator, depth: int) -> Iterator:
    """Run the ``events`` generator in a daemon thread, ``depth`` events ahead; its errors re-raise here."""
    channel: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def send(value) -> bool:
        while not stop.is_set():
            try:
                channel.put(value, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def run() -> None:
        try:
            for event in events:
                if not send(event):
                    return
            send(_END)
        except BaseException as exc:  # noqa: BLE001 - handed to the consuming thread, which re-raises it
            send(exc)

    reader = threading.Thread(target=run, name="lineup-ingest-reader", daemon=True)
    reader.start()
    try:
        while True:
            event = channel.get()
            if event is _END:
                return
            if isinstance(event, BaseException):
                raise event
            yield event
    finally:
        stop.set()
        reader.join(timeout=10)


def gallery_domain(source_kinds: set[str], recorded: str | None) -> str:
    """``world`` while every source ever ingested was a built world, else ``footage``."""
    return "world" if source_kinds <= {"world"} and recorded in (None, "world") else "footage"


@owner_only_umask()
def ingest(source: str | Path, gallery: str | Path, encoder: Encoder, detector: PersonDetector | None = None,
           options: IngestOptions | None = None, progress: ProgressFn = no_progress,
           weights: DomainWeights | None = None) -> IngestSummary:
    """Ingest ``source`` (video, image folder, built world, or a folder of them) into the gallery folder
    ``gallery`` (created when absent) with ``encoder`` (``engine.ingest.encoder.ModelEncoder`` or any
    ``Encoder``); ``detector`` defaults to the shipped YOLOX-Nano (``engine.ingest.yolox``), with a background
    model for silhouettes on videos. ``options.crops``: ``source`` is a folder of person crops, one item per
    image, no detector (``engine.ingest.crops``). Unreadable sources and files are listed in the summary. With
    ``weights`` (the checkpoint's attribute weight per gallery domain) the gallery records its domain and that
    weight (``Gallery.record_ranking``), which its searches then use by default."""
    options = options or IngestOptions()
    started = time.monotonic()
    found = discover_crops(source, options.camera) if options.crops else discover(source, options.camera, options.start)
    with writing(gallery):
        store = open_gallery(gallery, encoder)
        summary = IngestSummary(str(store.root))
        summary.skipped_files.extend(found.skipped)
        _finish_interrupted(store, encoder, options, summary)
        _consume(found, store, encoder, detector, options, progress, summary)
        if weights is not None:
            recorded = store.ranking
            domain = gallery_domain({s.kind for s in found.sources},
                                    None if recorded is None else recorded["domain"])
            store.record_ranking(domain, *weights.for_domain(domain))
    summary.seconds = time.monotonic() - started
    if options.crops and not any(s.status == "done before" or s.items_kept for s in summary.sources):
        reasons = "; ".join(f"{path}: {reason}" for path, reason in summary.skipped_files[:3])
        raise IngestError(f"crop folder {source} gave no person crop: no image could be decoded or none is at least "
                          f"{MIN_CROP_WIDTH}×{MIN_CROP_HEIGHT} px" + (f" ({reasons})" if reasons else ""))
    return summary


def _finish_interrupted(store: Gallery, encoder: Encoder, options: IngestOptions, summary: IngestSummary) -> None:
    """Repair what an interrupted ingest left (see the module docstring); each repair is noted in the summary."""
    stale = store.catch_up()
    if stale:
        summary.repairs.append(f"wrote the indexes of views {stale}, which lagged behind the committed vectors")
    if options.attributes:
        filled = fill_missing_evidence(store, getattr(encoder, "model", None),
                                       model_fingerprint=getattr(encoder, "fingerprint", None))
        if filled:
            summary.repairs.append(f"computed the attribute evidence of {filled} items that had none, from their "
                                   f"stored crops (carried-objects evidence cannot be recovered)")


def _consume(found, store: Gallery, encoder: Encoder, detector: PersonDetector | None, options: IngestOptions,
             progress: ProgressFn, summary: IngestSummary) -> None:
    """Encode and commit the reader's batches (evidence first, then items and vectors), and write each source's
    done marker once all its batches are committed."""
    reader = _Reader(found.sources, store.root, set(store.ids), detector, options, summary, progress)
    source_started = time.monotonic()
    for event in _in_background(reader.events(), options.queue_depth):
        if isinstance(event, _Batch):
            vectors = encoder(event.crops, [i.modality or "rgb" for i in event.items],
                              [i.resolution or "HR" for i in event.items])
            if options.attributes:  # before the items: a kill in between leaves evidence that the resumed run keeps
                add_evidence(store, event.items, event.crops, event.masks, event.scenes,
                             model=getattr(encoder, "model", None),
                             model_fingerprint=getattr(encoder, "fingerprint", None), objects=event.objects)
                pause_point("ingest:evidence-written")
            added = store.add(event.items, vectors)
            pause_point("ingest:batch-added")
            event.report.items_added += added.added
            event.report.items_present += added.skipped
            continue
        if event.marker is not None:
            event.marker["items"] = event.report.items_kept
            event.marker["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
            write_marker(store.root, event.key, event.marker)
        event.report.seconds = time.monotonic() - source_started
        source_started = time.monotonic()
        summary.sources.append(event.report)
