"""Ingest's reading side: each source (video, image sequence, built world, folder of crops) becomes batches of
gallery items with their crops; footage goes through the detector and the tracker, and each finished track
keeps its sharpest samples (``SourceReader``). ``engine.ingest.pipeline`` encodes and stores them."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from engine.index import GalleryItem
from engine.ingest.crops import (
    RAW_CROP_SUFFIXES,
    CropFolder,
    decode_crop,
    too_small,
)
from engine.ingest.errors import IngestError, SourceSkipped
from engine.ingest.options import CROP_SUFFIX, PNG_COMPRESSION, IngestOptions, item_id, looks_grey
from engine.ingest.reader_files import GalleryFiles, ReaderFiles
from engine.ingest.samples import Candidate, TrackSamples, sharpness
from engine.ingest.sources import ImageSequence, Source, VideoSource, WorldSource
from engine.ingest.summary import IngestSummary, SourceReport
from engine.ingest.timing import parse_time
from engine.ingest.tracking import PersonTracker, SeparateDetections
from engine.kernel.hashing import sha256_bytes
from engine.kernel.images import ImageInputError, PixelBudget, read_image_bytes
from engine.kernel.progress import ProgressFn
from engine.perception.attributes.constancy import scene_thumbnail
from engine.perception.attributes.objects import CarriedTally, objects_by_person
from engine.perception.detection.detectors import PersonDetector
from engine.perception.detection.factory import make_detector
from engine.retrieval.encoding.resolution import level_of_height


@dataclass
class Batch:
    report: SourceReport
    items: list[GalleryItem]
    crops: list[np.ndarray]
    masks: list[np.ndarray | None] | None = None  # per crop its foreground silhouette (video), else None
    scenes: list[np.ndarray | None] | None = None  # per crop a thumbnail of its frame (colour constancy)
    objects: list | None = None  # per crop its track's carried-objects evidence, or None


@dataclass
class Finished:
    report: SourceReport
    key: str | None
    marker: dict[str, Any] | None


class SourceReader:
    """Everything before the model: runs in the reader thread and yields ``Batch``/``Finished`` events.

    ``files``: the gallery folder (crops written there, done markers read there) or a ``ReaderFiles``
    (``engine.ingest.reader_files``); ``present``: the ids to skip (``in`` and ``add``); ``detectors``: default
    detectors by kind of source, shared with other readers (a worker reads many sources, loading them once)."""

    def __init__(self, sources: list[Source], files: Path | ReaderFiles, present: set[str],
                 detector: PersonDetector | None, options: IngestOptions, summary: IngestSummary,
                 progress: ProgressFn, detectors: dict[str, PersonDetector] | None = None) -> None:
        self.sources = sources
        self.files = GalleryFiles(files) if isinstance(files, str | Path) else files
        self.seen = present
        self.chosen = detector
        self.defaults: dict[str, PersonDetector] = {} if detectors is None else detectors
        self.options = options
        self.summary = summary
        self.progress = progress
        self.done = 0
        self.first = 0  # progress count when the current source started
        self.expected = [s.expected_frames(options.stride) for s in sources]
        self.total = sum(self.expected)

    def detector_for(self, source: Source) -> PersonDetector:
        """The detector given to ``ingest``, else the default for the source's kind: the shipped YOLOX-Nano
        (``engine.perception.detection.yolox``) for every kind; for videos with its background model on, so that items
        keep a foreground silhouette (worlds are not detected but record detector settings in their markers)."""
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

    def events(self) -> Iterator[Batch | Finished]:
        self.progress(0, self.total)
        for source, expected in zip(self.sources, self.expected, strict=True):
            yield from self._source(source, expected)
            self.tick(max(0, self.first + expected - self.done))  # frames announced but never read

    def _source(self, source: Source, expected: int) -> Iterator[Batch | Finished]:
        """One source's batches, then its ``Finished`` (with a marker only when it was read through)."""
        self.first = self.done
        report = SourceReport(str(source.path), source.kind, getattr(source, "camera", None))
        detector = self.detector_for(source)
        settings = self.options.settings(detector)
        try:
            key = source.key
            marker = None if self.options.force else self.files.marker(key)
            if marker is not None:
                report.status = "done before"
                report.items_present = int(marker.get("items", 0))
                if marker.get("settings") != settings:
                    report.notes.append("done before with other settings; not read again (use force to re-read)")
                yield Finished(report, None, None)
                return
            if isinstance(source, WorldSource):
                yield from self._world(source, report)
            elif isinstance(source, CropFolder):
                yield from self._crops(source, report)
            else:
                yield from self._footage(source, report, detector)
        except SourceSkipped as exc:
            report.status, report.reason = "skipped", exc.reason
            yield Finished(report, None, None)
            return
        marker = {"key": key, "kind": source.kind, "path": report.path, "camera": report.camera,
                  "settings": settings, "frames": report.frames, "detections": report.detections,
                  "tracks": report.tracks, "items": report.items_kept, "notes": report.notes}
        yield Finished(report, key, marker)

    # ------------------------------------------------------------------------------------------- footage

    def _footage(self, source: VideoSource | ImageSequence, report: SourceReport,
                 detector: PersonDetector) -> Iterator[Batch]:
        options = self.options
        tracker = PersonTracker(options.tracker) if options.track else SeparateDetections()
        detector.reset()
        warm_up = getattr(detector, "warm_up", None)
        # a stateful detector reads the source's first frames ahead (engine.perception.detection.motion)
        if warm_up is not None:
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
                candidate = candidate_of(frame, found.boxes[index], float(found.scores[index]), found.foreground, scene)
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
            relative, crop_sha = self.files.put_crop(encoded.tobytes(), CROP_SUFFIX)
            item = GalleryItem(
                id=identifier, source=str(candidate.info["file"]), frame=candidate.frame, time=candidate.info["time"],
                camera=camera, box=candidate.box, track=track, source_sha256=file_sha, crop_sha256=crop_sha,
                resolution=level_of_height(candidate.crop.shape[0]), crop=relative, modality=modality,
            )
            if candidate.mask is not None and self.options.attributes:
                self.files.put_silhouette(identifier, candidate.mask)
            out.append((item, candidate))
        return out

    @staticmethod
    def _batch(report: SourceReport, pairs: list[tuple[GalleryItem, Candidate]]) -> Batch:
        return Batch(report, [item for item, _ in pairs], [c.crop for _, c in pairs], [c.mask for _, c in pairs],
                      [c.scene for _, c in pairs], [c.objects for _, c in pairs])

    # --------------------------------------------------------------------------------------------- world

    def _world(self, source: WorldSource, report: SourceReport) -> Iterator[Batch]:
        items: list[GalleryItem] = []
        crops: list[np.ndarray] = []
        budget = PixelBudget()  # decoded pixels per batch, not only per image (docs/hardening.md)
        sketches = 0
        for sample in source.samples():
            self.tick()
            if sample.modality == "sketch":
                sketches += 1
                continue
            try:
                data = read_image_bytes(sample.image)
                image, (width, height) = decode_crop(sample.image, data)
            except ImageInputError as exc:
                self.on_skip(str(sample.image), exc.reason)
                continue
            report.frames += 1
            held = image.shape[0] * image.shape[1]  # decoded pixels kept (large images shrunk as they decode)
            if not budget.fits(held):
                yield Batch(report, items, crops)
                items, crops = [], []
                budget.reset()
            file_sha = sha256_bytes(data)
            box = (0.0, 0.0, float(width), float(height))
            identifier = item_id(file_sha, None, None, box)
            if identifier in self.seen:
                report.items_present += 1
                continue
            self.seen.add(identifier)
            relative, crop_sha = self.files.put_crop(data, sample.image.suffix.lower() or ".jpg")
            extra = sample.extra
            items.append(GalleryItem(
                id=identifier, source=str(sample.image.resolve()), frame=None,
                time=parse_time(extra["time"], f"{sample.image}: time") if "time" in extra else None,
                camera=sample.camera, box=box, track=None, source_sha256=file_sha, crop_sha256=crop_sha,
                resolution=extra["resolution"], crop=relative, identity=str(sample.identity),
                modality=sample.modality, attributes=extra["attributes"],
            ))
            crops.append(image)
            budget.add(held)
            if len(items) == self.options.batch_size:
                yield Batch(report, items, crops)
                items, crops = [], []
                budget.reset()
        if items:
            yield Batch(report, items, crops)
        if sketches:
            report.notes.append(f"{sketches} sketches left out: sketches are query material, not footage")

    # --------------------------------------------------------------------------------------------- crops

    def _crops(self, source: CropFolder, report: SourceReport) -> Iterator[Batch]:
        """One item per image of a crop folder: box = the whole image, crop = the image (engine.ingest.crops)."""
        items: list[GalleryItem] = []
        crops: list[np.ndarray] = []
        budget = PixelBudget()  # decoded pixels per batch, not only per image (docs/hardening.md)
        for frame in source.frames(1, report.notes, self.on_skip):
            self.tick()
            report.frames += 1
            width, height = frame.size or (frame.image.shape[1], frame.image.shape[0])  # as the file stores it
            reason = too_small(width, height)
            if reason is not None:
                report.small += 1
                self.on_skip(str(frame.file), reason)
                continue
            held = frame.image.shape[0] * frame.image.shape[1]  # decoded pixels kept (large crops shrunk)
            if not budget.fits(held):
                yield Batch(report, items, crops)
                items, crops = [], []
                budget.reset()
            box = (0.0, 0.0, float(width), float(height))
            identifier = item_id(frame.file_sha256, None, None, box)
            if identifier in self.seen:
                report.items_present += 1
                continue
            suffix = frame.file.suffix.lower()
            try:
                data = read_image_bytes(frame.file) if suffix in RAW_CROP_SUFFIXES else None
            except ImageInputError as exc:
                self.on_skip(str(frame.file), exc.reason)
                continue
            if data is None:
                ok, encoded = cv2.imencode(CROP_SUFFIX, frame.image, [cv2.IMWRITE_PNG_COMPRESSION, PNG_COMPRESSION])
                if not ok:
                    raise IngestError(f"OpenCV could not encode {frame.file} as PNG")
                data, suffix = encoded.tobytes(), CROP_SUFFIX
            self.seen.add(identifier)
            relative, crop_sha = self.files.put_crop(data, suffix)
            modality = self.options.modality
            if modality == "auto":
                modality = "ir" if looks_grey(frame.image) else "rgb"
            items.append(GalleryItem(
                id=identifier, source=str(frame.file.resolve()), frame=None, time=frame.time, camera=source.camera,
                box=box, track=None, source_sha256=frame.file_sha256, crop_sha256=crop_sha,
                resolution=level_of_height(height), crop=relative, modality=modality,
            ))
            crops.append(frame.image)  # the stored crop keeps the file's own size and format (RAW_CROP_SUFFIXES)
            budget.add(held)
            if len(items) == self.options.batch_size:
                yield Batch(report, items, crops)
                items, crops = [], []
                budget.reset()
        if items:
            yield Batch(report, items, crops)


def candidate_of(frame, box: np.ndarray, score: float, foreground: np.ndarray | None = None,
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
