"""Face blurring for the report's copies of person crops (never for the evidence files themselves).

Person crops are small, so a face detector often finds nothing in them. The crop is first enlarged so that
it is at least ``DETECT_MIN_HEIGHT`` pixels tall, then OpenCV's Haar frontal-face cascade (shipped with
OpenCV, nothing downloaded) looks for faces; a detection counts only when its centre lies in the top
``FACE_ZONE`` of the crop, where a standing person's head is. Each face found is blurred with a margin.
When none is found, OpenCV's HOG people detector looks for the person inside the crop (a crop that is a
whole scene render or a loose box holds the person somewhere within it) and the head is taken as the top
``BOX_HEAD_HEIGHT`` of that person box across its centre ``BOX_HEAD_WIDTH``; when HOG finds nobody either, the
crop is taken as a tight person box: its top ``HEAD_HEIGHT`` across the centre ``HEAD_WIDTH``.

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
#: The head inside a HOG person box (the default detector's boxes carry a margin above the head).
BOX_HEAD_TOP, BOX_HEAD_HEIGHT, BOX_HEAD_WIDTH = 0.0, 0.28, 0.60
HOG_MIN_HEIGHT = 160  # HOG's window is 64 × 128: smaller crops are enlarged first
HOG_BORDER = 32  # replicated border so a person filling the crop still fits a window

Box = tuple[int, int, int, int]  # x, y, w, h in pixels of the crop

_DETECT_LOCK = threading.Lock()


@dataclass(frozen=True)
class BlurResult:
    """The blurred copy, the regions blurred, and how they were found: "face" (detected), "person" (the head
    of a HOG person box) or "head" (the top of the crop taken as a tight person box)."""

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


@lru_cache(maxsize=1)
def _hog() -> cv2.HOGDescriptor:
    hog = cv2.HOGDescriptor()
    hog.setSVMDetector(cv2.HOGDescriptor_getDefaultPeopleDetector())
    return hog


def detect_person(image: np.ndarray) -> Box | None:
    """The most confident HOG person box in the crop, in the crop's pixels (clipped), or None."""
    _check(image)
    height, width = image.shape[:2]
    scale = max(1.0, HOG_MIN_HEIGHT / height)
    work = image if image.ndim == 3 and image.shape[2] == 3 else cv2.cvtColor(_grey(image), cv2.COLOR_GRAY2BGR)
    if scale > 1.0:
        work = cv2.resize(work, (max(1, round(width * scale)), round(height * scale)), interpolation=cv2.INTER_CUBIC)
    pad = HOG_BORDER
    work = cv2.copyMakeBorder(work, pad, pad, pad, pad, cv2.BORDER_REPLICATE)
    with _DETECT_LOCK:
        boxes, weights = _hog().detectMultiScale(work, winStride=(4, 4), padding=(8, 8), scale=1.05)
    if len(boxes) == 0:
        return None
    x, y, w, h = (float(v) for v in boxes[int(np.argmax(np.asarray(weights).reshape(-1)))])
    x0, y0 = max(0.0, (x - pad) / scale), max(0.0, (y - pad) / scale)
    x1, y1 = min(float(width), (x - pad + w) / scale), min(float(height), (y - pad + h) / scale)
    if x1 - x0 < 2 or y1 - y0 < 2:
        return None
    return round(x0), round(y0), round(x1 - x0), round(y1 - y0)


def head_in_person(person: Box, height: int, width: int) -> Box:
    """The head region of a HOG person box (top ``BOX_HEAD_HEIGHT``, centre ``BOX_HEAD_WIDTH``), clipped."""
    x, y, w, h = person
    box_w = max(1, round(w * BOX_HEAD_WIDTH))
    x0 = max(0, x + (w - box_w) // 2)
    y0 = max(0, y + round(h * BOX_HEAD_TOP))
    x1, y1 = min(width, x0 + box_w), min(height, y0 + max(1, math.ceil(h * BOX_HEAD_HEIGHT)))
    return x0, y0, max(1, x1 - x0), max(1, y1 - y0)


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
    if faces:
        regions, method = [_grow(face, height, width) for face in faces], "face"
    else:
        person = detect_person(image)
        if person is not None:
            regions, method = [head_in_person(person, height, width)], "person"
        else:
            regions, method = [head_region(height, width)], "head"
    out = image.copy()
    for box in regions:
        blur_region(out, box)
    return BlurResult(out, tuple(regions), method)
