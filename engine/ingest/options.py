"""How an ingest runs (``IngestOptions``, recorded in done markers by ``settings``) and the rules its items
follow: a stable id from the source file's hash, frame, track and box; grey footage read as infrared; crops
stored as PNG."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.ingest.appearance import APPEARANCE_CHOICES
from engine.ingest.crops import (
    MIN_CROP_HEIGHT,
    MIN_CROP_WIDTH,
)
from engine.ingest.errors import IngestError
from engine.ingest.tracking import TrackerSettings
from engine.perception.detection.detectors import PersonDetector

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
    appearance: str = "auto"  # the appearance view of a new gallery: auto | none | fast | balanced | accurate
    pretrained_attributes: bool = True  # the pretrained attribute network's evidence for footage and crops

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
        if self.appearance not in APPEARANCE_CHOICES:
            raise IngestError(f"appearance must be one of {list(APPEARANCE_CHOICES)}, got {self.appearance!r}")
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
