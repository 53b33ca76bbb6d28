"""Face blurring for the report's copies of person crops (never for the evidence files themselves).

Person crops are small, so a face detector often finds nothing in them. The crop is first enlarged so that
it is at least ``DETECT_MIN_HEIGHT`` pixels tall, then OpenCV's Haar frontal-face cascade (shipped with
OpenCV, nothing downloaded) looks for faces; a detection counts only when its centre lies in the top
``FACE_ZONE`` of the crop, where a standing person's head is. Each face found is blurred with a margin;
when none is found the head is assumed to fill the top ``HEAD_HEIGHT`` of the crop across the centre
``HEAD_WIDTH`` of its width, and that region is blurred instead.

The blur is a Gaussian with σ = max(w, h) / ``SIGMA_DIVISOR`` of the region, which leaves little more than
the region's mean colour.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from app.report.errors import ReportError

CASCADE_FILE = "haarcascade_frontalface_default.xml"
DETECT_MIN_HEIGHT = 256
FACE_ZONE = 0.5
FACE_MARGIN = 0.15
HEAD_HEIGHT = 0.18
HEAD_WIDTH = 0.70
SIGMA_DIVISOR = 2.5

Box = tuple[int, int, int, int]  # x, y, w, h in pixels of the crop

_DETECT_LOCK = threading.Lock()


@dataclass(frozen=True)
class BlurResult:
    """The blurred copy, the regions blurred, and how they were found: "face" (detected) or "head"
    (the estimated head region)."""

    image: np.ndarray
    regions: tuple[Box, ...]
    method: str


@lru_cache(maxsize=1)
def _cascade() -> cv2.CascadeClassifier:
    path = Path(cv2.data.haarcascades) / CASCADE_FILE
    cascade = cv2.CascadeClassifier(str(path))
    if cascade.empty():
        raise ReportError(f"OpenCV's face cascade {path} cannot be loaded; reinstall opencv-python-headless")
    return cascade


def _grey(image: np.ndarray) -> np.ndarray:
    if image.ndim == 2:
        return image
    if image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2GRAY)
    return cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)


def _check(image: np.ndarray) -> None:
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim not in (2, 3) \
            or (image.ndim == 3 and image.shape[2] not in (3, 4)) or image.shape[0] < 1 or image.shape[1] < 1:
        shape = getattr(image, "shape", None)
        raise ReportError(f"face blurring needs a uint8 image [H, W], [H, W, 3] or [H, W, 4], got shape {shape}")


def detect_faces(image: np.ndarray) -> list[Box]:
    """Frontal faces in a person crop (BGR, BGRA or grey uint8), in the crop's pixels, top zone only."""
    _check(image)
    height, width = image.shape[:2]
    scale = max(1.0, DETECT_MIN_HEIGHT / height)
    grey = _grey(image)
    if scale > 1.0:
        grey = cv2.resize(grey, (max(1, round(width * scale)), round(height * scale)),
                          interpolation=cv2.INTER_CUBIC)
    grey = cv2.equalizeHist(grey)
    with _DETECT_LOCK:
        found = _cascade().detectMultiScale(grey, scaleFactor=1.1, minNeighbors=5, minSize=(24, 24))
    faces = []
    for x, y, w, h in (found if len(found) else ()):
        box = (int(x / scale), int(y / scale), max(1, math.ceil(w / scale)), max(1, math.ceil(h / scale)))
        if box[1] + box[3] / 2 <= FACE_ZONE * height:
            faces.append(box)
    return faces


def head_region(height: int, width: int) -> Box:
    """The estimated head of a standing person: top ``HEAD_HEIGHT`` of the crop, centre ``HEAD_WIDTH``."""
    box_w = max(1, round(width * HEAD_WIDTH))
    return ((width - box_w) // 2, 0, box_w, max(1, math.ceil(height * HEAD_HEIGHT)))


def _grow(box: Box, height: int, width: int) -> Box:
    x, y, w, h = box
    dx, dy = round(w * FACE_MARGIN), round(h * FACE_MARGIN)
    x0, y0 = max(0, x - dx), max(0, y - dy)
    x1, y1 = min(width, x + w + dx), min(height, y + h + dy)
    return x0, y0, x1 - x0, y1 - y0


def blur_region(image: np.ndarray, box: Box) -> None:
    """Blur ``box`` of ``image`` in place (σ = max(w, h) / SIGMA_DIVISOR)."""
    x, y, w, h = box
    region = image[y:y + h, x:x + w]
    if region.size == 0:
        return
    sigma = max(1.0, max(w, h) / SIGMA_DIVISOR)
    region[...] = cv2.GaussianBlur(region, (0, 0), sigmaX=sigma, sigmaY=sigma, borderType=cv2.BORDER_REPLICATE)


def blur_faces(image: np.ndarray) -> BlurResult:
    """A copy of the person crop with its faces (else its estimated head region) blurred."""
    _check(image)
    height, width = image.shape[:2]
    faces = detect_faces(image)
    regions = [_grow(face, height, width) for face in faces] or [head_region(height, width)]
    out = image.copy()
    for box in regions:
        blur_region(out, box)
    return BlurResult(out, tuple(regions), "face" if faces else "head")
