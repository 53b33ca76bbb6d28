"""Multi-object tracking of detections within one sequence, by norfair (IoU distance, Kalman filter).

``PersonTracker.update(detections)`` is called once per sampled frame and says which detection each live
object took this frame (objects still being confirmed included, so the first detections of a track are not
lost), which objects are confirmed tracks (with their track number), and which objects ended. An object is
confirmed after ``confirm_hits`` consecutive detections; it ends after ``max_missed`` sampled frames
without one. Unconfirmed objects that end are false alarms and are dropped by the caller.

``SeparateDetections`` has the same interface and makes every detection its own finished object (no
tracking: one item per detection, track number ``None``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.ingest.errors import IngestError
from engine.perception.detection.detectors import Detections


@dataclass(frozen=True)
class TrackerSettings:
    min_iou: float = 0.3  # a detection continues an object when their boxes overlap at least this much
    max_missed: int = 12  # sampled frames an object survives without a detection
    confirm_hits: int = 2  # consecutive detections before an object is a track

    def __post_init__(self) -> None:
        if not 0 < self.min_iou < 1:
            raise IngestError(f"tracker min_iou must lie in (0, 1), got {self.min_iou}")
        if self.max_missed < 1:
            raise IngestError(f"tracker max_missed must be at least 1 frame, got {self.max_missed}")
        if not 1 <= self.confirm_hits <= self.max_missed:
            raise IngestError(f"tracker confirm_hits must lie in 1..max_missed ({self.max_missed}), "
                              f"got {self.confirm_hits}")

    def to_dict(self) -> dict[str, Any]:
        return {"name": "norfair-iou", "min_iou": self.min_iou, "max_missed": self.max_missed,
                "confirm_hits": self.confirm_hits}


@dataclass
class TrackStep:
    matches: list[tuple[int, int]] = field(default_factory=list)  # (object key, detection index) this frame
    tracks: dict[int, int | None] = field(default_factory=dict)  # object key → track number, confirmed ones
    ended: list[int] = field(default_factory=list)  # object keys that are gone (confirmed or not)


class PersonTracker:
    """norfair's tracker over box corners with IoU distance; object keys are its initialising ids."""

    def __init__(self, settings: TrackerSettings | None = None) -> None:
        self.settings = settings or TrackerSettings()
        self.reset()

    def reset(self) -> None:
        from norfair import Tracker

        # A Kalman-predicted box can turn inside out for a frame when an object shrinks fast; norfair's IoU then
        # gives it distance 1 (no match), which is right, but it logs a warning per frame: keep those quiet.
        logging.getLogger("norfair.distances").setLevel(logging.ERROR)
        self._tracker = Tracker(distance_function="iou", distance_threshold=1.0 - self.settings.min_iou,
                                hit_counter_max=self.settings.max_missed,
                                initialization_delay=self.settings.confirm_hits - 1)
        self._frame = 0
        self._alive: set[int] = set()

    def update(self, detections: Detections) -> TrackStep:
        from norfair import Detection

        self._frame += 1
        corners = np.concatenate([detections.boxes[:, :2], detections.boxes[:, :2] + detections.boxes[:, 2:]], axis=1)
        found = [Detection(points=c.reshape(2, 2).astype(np.float64), data=(self._frame, i))
                 for i, c in enumerate(corners)]
        self._tracker.update(detections=found)
        step = TrackStep()
        alive = set()
        for obj in self._tracker.tracked_objects:
            key = obj.initializing_id
            alive.add(key)
            frame, index = obj.last_detection.data
            if frame == self._frame:
                step.matches.append((key, index))
            if obj.id is not None:
                step.tracks[key] = obj.id
        step.ended = sorted(self._alive - alive)
        self._alive = alive
        return step

    def finish(self) -> list[int]:
        """Keys of the objects still alive at the end of the sequence (they end now)."""
        ended, self._alive = sorted(self._alive), set()
        return ended


class SeparateDetections:
    """No tracking: each detection is an object of its own that ends at once (track number None)."""

    settings = None

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._next = 0

    def update(self, detections: Detections) -> TrackStep:
        keys = list(range(self._next, self._next + len(detections)))
        self._next += len(detections)
        return TrackStep(matches=[(k, i) for i, k in enumerate(keys)], tracks=dict.fromkeys(keys), ended=keys)

    def finish(self) -> list[int]:
        return []
