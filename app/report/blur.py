"""Face blurring for the report's copies of person crops (never for the evidence files themselves).

Faces are found by the shipped face detector ``face-detection-retail-0005`` (``engine.perception.detection.faces``):
first in the crop's head window (its top ``width × width`` square, enlarged to the network's input so that the small
face of a whole-body crop is big enough to be found), then, when the head window holds none, in the whole
crop. Every face found is blurred, grown by ``FACE_MARGIN`` of its size on each side.

A report must never show a face because the detector missed it, so the blur errs towards too much:

- ``method == "face"``: the network found at least one face whose centre lies in the top ``FACE_ZONE`` of the
  crop (where a standing person's head is); those faces, and any others it found, are blurred.
- ``method == "face+head"``: the network found faces, but none in the top ``FACE_ZONE`` (a false detection on
  clothing, or a person low in a loose crop): they are blurred *and* the head region below is.
- ``method == "head"``: the network found nothing (a face turned away, too small, too dark): the head region
  is blurred, the crop taken as a tight person box: its top ``max(HEAD_HEIGHT · height, HEAD_SQUARE · width)``
  rows across the centre ``HEAD_WIDTH`` (the height term fits a whole standing body, the width term an upper
  body or a close-up, whose head takes a larger share of the crop).

What is left unblurred can still hold a face: one the network scored under ``FACE_MIN_SCORE`` outside the head
region (a second person in a loose crop, a face on a poster), or, with ``"face"``, the person's own face when
the network missed it but took something else in the top half for a face; docs/real-footage.md ("Face
redaction") measures the share of hand-labelled faces each step covers. The blur is a Gaussian with σ =
max(w, h) / ``SIGMA_DIVISOR`` of the region, which leaves little more than the region's mean colour. The network
is loaded once per process and runs on the CPU, in whichever thread runs the export. A crop that is not a
non-empty uint8 image, or a network that cannot be loaded, raises ``ReportError`` (the report then shows no
thumbnail for that crop, with a warning, rather than an unblurred one).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import cv2
import numpy as np

from app.report.errors import ReportError
from engine.perception.detection.errors import DetectorError
from engine.perception.detection.faces import Face, FaceDetector, as_bgr
from engine.perception.pretrained.errors import PretrainedModelError

FACE_MARGIN = 0.2
FACE_ZONE = 0.5
HEAD_HEIGHT = 0.18
HEAD_SQUARE = 0.5
HEAD_WIDTH = 0.70
SIGMA_DIVISOR = 2.5
FACE, FACE_AND_HEAD, HEAD = "face", "face+head", "head"
METHODS = (FACE, FACE_AND_HEAD, HEAD)

Box = tuple[int, int, int, int]  # x, y, w, h in pixels of the crop

_LOAD_LOCK = threading.Lock()
_DETECTOR: FaceDetector | None = None


@dataclass(frozen=True)
class BlurResult:
    """The blurred copy, the regions blurred, how they were found (``METHODS``: "face", "face+head" or "head",
    see the module docstring) and the faces the network found."""

    image: np.ndarray
    regions: tuple[Box, ...]
    method: str
    faces: tuple[Face, ...] = ()


def face_detector() -> FaceDetector:
    """The process's face detector (loaded on first use); ``ReportError`` when the shipped network cannot be
    loaded."""
    global _DETECTOR
    with _LOAD_LOCK:
        if _DETECTOR is None:
            try:
                _DETECTOR = FaceDetector()
            except (PretrainedModelError, DetectorError) as exc:
                raise ReportError(f"faces cannot be blurred: the face detector cannot be loaded ({exc})") from None
        return _DETECTOR


def _check(image: np.ndarray) -> np.ndarray:
    try:
        return as_bgr(image)
    except DetectorError:
        shape = getattr(image, "shape", None)
        dtype = getattr(image, "dtype", type(image).__name__)
        raise ReportError(f"face blurring needs a non-empty uint8 image [H, W], [H, W, 3] or [H, W, 4], got shape "
                          f"{shape} of {dtype}") from None


def detect_faces(image: np.ndarray, detector: FaceDetector | None = None) -> list[Face]:
    """Faces in a person crop (BGR, BGRA or grey uint8), in the crop's pixels, best first."""
    bgr = _check(image)
    try:
        return (detector or face_detector()).detect(bgr)
    except DetectorError as exc:
        raise ReportError(f"faces cannot be blurred: {exc}") from None


def head_region(height: int, width: int) -> Box:
    """The estimated head of a person filling the crop: its top ``max(HEAD_HEIGHT · height, HEAD_SQUARE ·
    width)`` rows (at most all of them) across the centre ``HEAD_WIDTH``."""
    box_w = max(1, round(width * HEAD_WIDTH))
    box_h = min(height, max(1, math.ceil(height * HEAD_HEIGHT), math.ceil(width * HEAD_SQUARE)))
    return (width - box_w) // 2, 0, box_w, box_h


def grow(box: Box, height: int, width: int, margin: float = FACE_MARGIN) -> Box:
    """``box`` grown by ``margin`` of its width and height on each side, clipped to the crop."""
    x, y, w, h = box
    dx, dy = math.ceil(w * margin), math.ceil(h * margin)
    x0, y0 = max(0, x - dx), max(0, y - dy)
    x1, y1 = min(width, x + w + dx), min(height, y + h + dy)
    return x0, y0, x1 - x0, y1 - y0


def in_head_zone(box: Box, height: int) -> bool:
    """Whether a face's centre lies in the top ``FACE_ZONE`` of a crop ``height`` pixels tall."""
    return box[1] + box[3] / 2 <= FACE_ZONE * height


def blur_region(image: np.ndarray, box: Box) -> None:
    """Blur ``box`` of ``image`` in place (σ = max(w, h) / SIGMA_DIVISOR)."""
    x, y, w, h = box
    region = image[y:y + h, x:x + w]
    if region.size == 0:
        return
    sigma = max(1.0, max(w, h) / SIGMA_DIVISOR)
    region[...] = cv2.GaussianBlur(region, (0, 0), sigmaX=sigma, sigmaY=sigma, borderType=cv2.BORDER_REPLICATE)


def plan_regions(faces: list[Face], height: int, width: int) -> tuple[list[Box], str]:
    """The regions to blur and the method (see the module docstring) for the faces found in a crop."""
    regions = [grow(face.box, height, width) for face in faces]
    if any(in_head_zone(face.box, height) for face in faces):
        return regions, FACE
    if faces:
        return [*regions, head_region(height, width)], FACE_AND_HEAD
    return [head_region(height, width)], HEAD


def blur_faces(image: np.ndarray, *, detector: FaceDetector | None = None) -> BlurResult:
    """A copy of the person crop with the faces the network finds (else, or also, its head region) blurred."""
    _check(image)
    height, width = image.shape[:2]
    faces = detect_faces(image, detector)
    regions, method = plan_regions(faces, height, width)
    out = image.copy()
    for box in regions:
        blur_region(out, box)
    return BlurResult(out, tuple(regions), method, tuple(faces))
