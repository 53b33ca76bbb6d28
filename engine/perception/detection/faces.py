"""Faces inside a person crop, found by the shipped face detector ``face-detection-retail-0005`` (Intel Open Model
Zoo, Apache-2.0; ``engine.perception.pretrained``): what report redaction blurs (``app.report.blur``).

The network takes one ``[1, 3, 300, 300]`` BGR image (0–255, plain resize) and answers ``[1, 1, 200, 7]`` rows
``[image_id, label, score, x_min, y_min, x_max, y_max]`` with coordinates as fractions of its input; a row whose
image_id is negative ends the list (the rest is padding). It finds frontal and near-frontal faces, but a face
15 pixels tall in a person crop 150 pixels tall stays that small when the whole crop is fitted to the input;
the crop is searched in two passes, each through a square *window* of the crop's pixel
plane (the part of the window outside the crop is mid-grey, so nothing is stretched):

1. the head window: the top ``width × width`` square of the crop (where a standing person's head is),
   enlarged to the network's input (a 50 × 150 crop's top 50 × 50 becomes 300 × 300: the face six times
   bigger); a crop at least as wide as it is tall has no separate head window and goes straight to pass 2;
2. when the head window holds no face: the whole crop, in the square of its longer side, centred.

``decode_faces`` maps the rows back: a fraction ``f`` of the window is ``window.x + f · window.side`` pixels of
the crop (likewise in y); boxes are clipped to the part of the crop the window covers, widened outwards to whole
pixels, and rows under ``min_score`` (``FACE_MIN_SCORE``, 0.3: redaction prefers a blurred shirt to a missed
face) or empty after clipping are dropped. Measured on the hand-labelled faces of the real clips in
docs/real-footage.md ("Face redaction").
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import cv2
import numpy as np

from engine.perception.detection.errors import DetectorError
from engine.perception.pretrained.errors import PretrainedModelError
from engine.perception.pretrained.registry import FACE_NETWORK
from engine.perception.pretrained.runtime import DEFAULT_DEVICE, IRModel, load_shipped

FACE_MIN_SCORE = 0.3
FACE_OUTPUT = "527"
PAD_VALUE = 128
HEAD_PASS, CROP_PASS = "head", "crop"
SNAP = 1e-3  # px: float32 fractions land this close to a whole pixel and still count as on it

Box = tuple[int, int, int, int]  # x, y, w, h in pixels of the crop


@dataclass(frozen=True)
class Window:
    """A square of the crop's pixel plane fed to the network: top-left ``x``, ``y`` and ``side`` in crop pixels
    (it may reach past the crop's edges, where the network sees mid-grey)."""

    x: float
    y: float
    side: float


@dataclass(frozen=True)
class Face:
    """One face: ``box`` (x, y, w, h in crop pixels), the network's ``score``, and the pass that found it
    (``"head"`` or ``"crop"``)."""

    box: Box
    score: float
    found_in: str


def head_window(height: int, width: int) -> Window:
    """The top ``width × width`` square of a crop taller than wide; else the whole crop's square."""
    if width < height:
        return Window(0.0, 0.0, float(width))
    return crop_window(height, width)


def crop_window(height: int, width: int) -> Window:
    """The square of the crop's longer side, centred on the crop."""
    side = float(max(height, width))
    return Window((width - side) / 2.0, (height - side) / 2.0, side)


def window_input(image: np.ndarray, window: Window, size: tuple[int, int]) -> np.ndarray:
    """The network's input for ``window`` of a BGR ``image``: float32 ``[1, 3, H, W]``, mid-grey outside the
    crop. The visible part is resized once (area interpolation when shrinking, linear when enlarging)."""
    net_h, net_w = size
    height, width = image.shape[:2]
    sx, sy = net_w / window.side, net_h / window.side
    canvas = np.full((net_h, net_w, 3), PAD_VALUE, np.uint8)
    x0, y0 = max(0, math.floor(window.x)), max(0, math.floor(window.y))
    x1, y1 = min(width, math.ceil(window.x + window.side)), min(height, math.ceil(window.y + window.side))
    if x1 > x0 and y1 > y0:
        left, top = round((x0 - window.x) * sx), round((y0 - window.y) * sy)
        right, bottom = min(net_w, round((x1 - window.x) * sx)), min(net_h, round((y1 - window.y) * sy))
        if right > left and bottom > top:
            part = image[y0:y1, x0:x1]
            shrink = (right - left) < part.shape[1]
            canvas[top:bottom, left:right] = cv2.resize(
                part, (right - left, bottom - top), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)
    return canvas.transpose(2, 0, 1)[None].astype(np.float32)


def decode_faces(output: np.ndarray, window: Window, height: int, width: int, *, min_score: float = FACE_MIN_SCORE,
                 found_in: str = HEAD_PASS) -> list[Face]:
    """Faces of one network answer (``[1, 1, N, 7]`` or ``[N, 7]``) for ``window`` of a ``height × width`` crop,
    in crop pixels, best first (see the module docstring)."""
    rows = np.asarray(output, dtype=np.float64)
    if rows.ndim < 2 or rows.shape[-1] != 7:
        raise DetectorError(f"the face detector's output must have rows of 7 values, got shape {list(rows.shape)}")
    rows = rows.reshape(-1, 7)
    left, top = max(0.0, window.x), max(0.0, window.y)
    right, bottom = min(float(width), window.x + window.side), min(float(height), window.y + window.side)
    faces = []
    for image_id, _label, score, fx0, fy0, fx1, fy1 in rows:
        if image_id < 0:
            break
        if not score >= min_score:  # NaN scores are dropped too
            continue
        x0 = max(left, window.x + min(fx0, fx1) * window.side)
        y0 = max(top, window.y + min(fy0, fy1) * window.side)
        x1 = min(right, window.x + max(fx0, fx1) * window.side)
        y1 = min(bottom, window.y + max(fy0, fy1) * window.side)
        if not (x1 > x0 and y1 > y0):
            continue
        bx, by = math.floor(x0 + SNAP), math.floor(y0 + SNAP)
        faces.append(Face((bx, by, math.ceil(x1 - SNAP) - bx, math.ceil(y1 - SNAP) - by), float(score), found_in))
    faces.sort(key=lambda face: -face.score)
    return faces


def as_bgr(image: np.ndarray) -> np.ndarray:
    """A uint8 crop ``[H, W]``, ``[H, W, 3]`` or ``[H, W, 4]`` as BGR; ``DetectorError`` for anything else."""
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim not in (2, 3) \
            or (image.ndim == 3 and image.shape[2] not in (3, 4)) or image.shape[0] < 1 or image.shape[1] < 1:
        shape = getattr(image, "shape", None)
        dtype = getattr(image, "dtype", type(image).__name__)
        raise DetectorError(f"face detection needs a non-empty uint8 image [H, W], [H, W, 3] or [H, W, 4], got "
                            f"shape {shape} of {dtype}")
    if image.ndim == 2:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    return image


class FaceDetector:
    """Faces in person crops with the shipped ``face-detection-retail-0005`` (see the module docstring).

    ``FaceDetector()`` loads and checks the network (``PretrainedModelError`` names a missing or altered file);
    ``model`` replaces it with any object whose ``infer(batch)`` answers ``{"527": rows}`` (tests). Safe to share
    between threads: the network runs one request at a time."""

    def __init__(self, *, min_score: float = FACE_MIN_SCORE, threads: int | None = None,
                 device: str = DEFAULT_DEVICE, model: IRModel | None = None) -> None:
        if not 0.0 <= min_score <= 1.0:
            raise DetectorError(f"the face detector's min_score must lie in [0, 1], got {min_score}")
        self.min_score = float(min_score)
        if model is None:
            _, model = load_shipped(FACE_NETWORK, threads=threads, device=device, dynamic_batch=False)
        self.model = model
        self.input_size = tuple(getattr(model, "input_size", (300, 300)))
        self._lock = threading.Lock()

    def search(self, image: np.ndarray, window: Window, found_in: str = HEAD_PASS) -> list[Face]:
        """Faces the network finds in one window of a crop, in crop pixels."""
        bgr = as_bgr(image)
        height, width = bgr.shape[:2]
        batch = window_input(bgr, window, self.input_size)
        try:
            with self._lock:
                output = self.model.infer(batch)[FACE_OUTPUT]
        except PretrainedModelError as exc:
            raise DetectorError(str(exc)) from None
        return decode_faces(output, window, height, width, min_score=self.min_score, found_in=found_in)

    def detect(self, image: np.ndarray) -> list[Face]:
        """Faces in a person crop (BGR, BGRA or grey uint8): the head window first, the whole crop when the head
        window holds none; empty when neither does."""
        bgr = as_bgr(image)
        height, width = bgr.shape[:2]
        head, whole = head_window(height, width), crop_window(height, width)
        if head != whole:
            faces = self.search(bgr, head, HEAD_PASS)
            if faces:
                return faces
        return self.search(bgr, whole, CROP_PASS)
