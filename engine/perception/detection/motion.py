"""``FusedDetector`` (name ``"fused"``): people in video from background subtraction fused with HOG.

It sees the frames of one sequence in order: ``reset()``, optionally ``warm_up(first frames)``, then
``detect(frame)`` per frame. Frames taller than ``max_height`` rows are shrunk to it first (``INTER_AREA``) and
boxes are mapped back. In a (shrunk) frame of height H:

1. Foreground: OpenCV's KNN background subtractor (squared colour distance ``dist2_threshold``, shadow
   detection on, ``shadow_threshold``); shadow pixels (value 127) count as background. Opening with a 3×3
   square removes speckle; closing with an ellipse of ``close_size`` × H (width, height) joins the pieces of one
   body (low-contrast clothes break a person into pieces).
2. Scene change: when more than ``max_foreground`` of the frame is foreground (an exposure jump, a moved
   camera), the frame's motion is void (empty foreground) and the model relearns it at ``relearn_rate``.
3. Motion proposals: connected components at least ``min_height`` × H tall, filling at least ``min_fill`` of
   their box, with height / width in [``min_aspect``, ``max_aspect``] (a person is taller than wide); one that
   touches the top or bottom edge may go down to ``edge_aspect`` (a person cut off there shows less height).
4. HOG candidates: ``HogDetector`` at ``hit_threshold = hog_floor`` (below its usual 0, to hear weak answers)
   with ``min_person_height = hog_min_height`` (shrunk-frame pixels). Each box is stretched up and down over
   the rows where the foreground covers at least ``extend_level`` of its middle half of columns, by at most
   ``extend_reach`` of its height each way (HOG boxes often stop short of the feet).
5. One score for both kinds, ``s = m + motion_weight · (f_in − f_out)``: f_in is the foreground fraction of
   the box, f_out that of the bands of ``surround`` × its height just above and below it (a box on part of a
   moving body has foreground there too), m the HOG margin: a candidate's own; for a motion proposal the best
   margin of the HOG candidates that overlap it with IoU ≥ 0.5 (HOG confirms and rescores it), else
   ``no_hog_margin``. So a HOG window needs motion support unless its margin alone reaches ``min_score``, and a
   blob needs HOG support unless its shape and fill alone do.
6. Boxes with ``s ≥ min_score`` pass greedy non-maximum suppression (best first, IoU above ``nms_iou``
   dropped).

The detections carry step 1's cleaned foreground mask, at frame size (``Detections.foreground``): ingest cuts
each crop's silhouette from it for the attribute evidence.

Warm-up: a background model needs frames before it can tell a person from the scene. ``warm_up(frames)``
feeds the sequence's own first ``warmup_frames`` frames (read ahead) to the model at OpenCV's automatic rate
before the detection pass, so a person in view from frame 0 who moves later is foreground in frame 0 already.
Without a warm-up the model learns on the fly, at the automatic rate over the first ``warmup_frames`` frames.
After it, the rate is ``learning_rate`` per frame: a person standing still fades into the background after
about 0.36 / ``learning_rate`` frames (the KNN model's short-term sample window); HOG, which needs no motion,
still answers for them when its margin alone reaches ``min_score``.

The KNN model replaces its samples at random from OpenCV's RNG; ``reset`` seeds it with ``seed``, so one
sequence gives the same boxes every time (on one OpenCV build and thread count).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import cv2
import numpy as np

from engine.perception.detection.detectors import Detections, HogDetector, clip_boxes, iou_matrix, suppress
from engine.perception.detection.errors import DetectorError

FOREGROUND = 255  # KNN mask values: 0 background, 127 shadow, 255 foreground
KNN_HISTORY = 500
HOG_CONFIRM_IOU = 0.5
EXTEND_CORE = 0.25  # the middle half of a HOG box's columns decides how far it stretches


def _positive(name: str, value: float) -> float:
    if not value > 0:
        raise DetectorError(f"{name} must be positive, got {value}")
    return float(value)


def _fraction(name: str, value: float, zero_ok: bool = False) -> float:
    if not ((0 <= value <= 1) if zero_ok else (0 < value <= 1)):
        raise DetectorError(f"{name} must lie in {'[0' if zero_ok else '(0'}, 1], got {value}")
    return float(value)


class FusedDetector:
    """Background subtraction + HOG person detector for video (see the module docstring)."""

    name = "fused"

    def __init__(self, *, dist2_threshold: float = 100.0, shadow_threshold: float = 0.5, warmup_frames: int = 60,
                 learning_rate: float = 0.002, relearn_rate: float = 0.5, max_foreground: float = 0.4,
                 close_size: tuple[float, float] = (0.055, 0.17), min_height: float = 0.1, min_fill: float = 0.3,
                 min_aspect: float = 1.2, max_aspect: float = 6.0, edge_aspect: float = 0.6,
                 hog_floor: float = -1.0, hog_min_height: float = 128.0, extend_level: float = 0.25,
                 extend_reach: float = 0.3, motion_weight: float = 3.0, no_hog_margin: float = -1.0,
                 surround: float = 0.25, min_score: float = 0.25, nms_iou: float = 0.4, max_height: int = 360,
                 seed: int = 0) -> None:
        self.dist2_threshold = _positive("dist2_threshold", dist2_threshold)
        self.shadow_threshold = _fraction("shadow_threshold", shadow_threshold)
        if warmup_frames < 0:
            raise DetectorError(f"warmup_frames must be ≥ 0, got {warmup_frames}")
        self.warmup_frames = int(warmup_frames)
        self.learning_rate = _fraction("learning_rate", learning_rate)
        self.relearn_rate = _fraction("relearn_rate", relearn_rate)
        self.max_foreground = _fraction("max_foreground", max_foreground)
        if len(close_size) != 2:
            raise DetectorError(f"close_size must be (width, height) as fractions of the frame height, got "
                                f"{close_size!r}")
        self.close_size = (_fraction("close_size width", close_size[0]),
                           _fraction("close_size height", close_size[1]))
        self.min_height = _fraction("min_height", min_height)
        self.min_fill = _fraction("min_fill", min_fill, zero_ok=True)
        self.min_aspect = _positive("min_aspect", min_aspect)
        self.max_aspect = _positive("max_aspect", max_aspect)
        if self.max_aspect < self.min_aspect:
            raise DetectorError(f"max_aspect ({max_aspect}) must not be below min_aspect ({min_aspect})")
        self.edge_aspect = _positive("edge_aspect", edge_aspect)
        self.extend_level = _fraction("extend_level", extend_level)
        self.extend_reach = _fraction("extend_reach", extend_reach, zero_ok=True)
        if not motion_weight >= 0:
            raise DetectorError(f"motion_weight must be ≥ 0, got {motion_weight}")
        self.motion_weight = float(motion_weight)
        self.no_hog_margin = float(no_hog_margin)
        self.surround = _fraction("surround", surround, zero_ok=True)
        self.min_score = float(min_score)
        self.nms_iou = _fraction("nms_iou", nms_iou)
        if max_height < 32:
            raise DetectorError(f"max_height must be at least 32 rows, got {max_height}")
        self.max_height = int(max_height)
        self.seed = int(seed)
        self.hog = HogDetector(min_person_height=hog_min_height, hit_threshold=hog_floor)
        self.reset()

    def settings(self) -> dict[str, Any]:
        return {"name": self.name, "subtractor": "knn", "dist2_threshold": self.dist2_threshold,
                "shadow_threshold": self.shadow_threshold, "warmup_frames": self.warmup_frames,
                "learning_rate": self.learning_rate, "relearn_rate": self.relearn_rate,
                "max_foreground": self.max_foreground, "close_size": list(self.close_size),
                "min_height": self.min_height, "min_fill": self.min_fill, "min_aspect": self.min_aspect,
                "max_aspect": self.max_aspect, "edge_aspect": self.edge_aspect, "extend_level": self.extend_level,
                "extend_reach": self.extend_reach, "motion_weight": self.motion_weight,
                "no_hog_margin": self.no_hog_margin, "surround": self.surround, "min_score": self.min_score,
                "nms_iou": self.nms_iou, "max_height": self.max_height, "seed": self.seed, "hog": self.hog.settings()}

    # ------------------------------------------------------------------------------------------- state

    def reset(self) -> None:
        """A new sequence: a fresh background model (RNG seeded), not warmed up, any frame size."""
        cv2.setRNGSeed(self.seed)
        self._model = cv2.createBackgroundSubtractorKNN(history=KNN_HISTORY, dist2Threshold=self.dist2_threshold,
                                                        detectShadows=True)
        self._model.setShadowThreshold(self.shadow_threshold)
        self._seen = 0  # frames detected since reset
        self._warmed = False
        self._size: tuple[int, int] | None = None  # (width, height) of the sequence's frames; a frame of another
        # size starts afresh (reset, no warm-up)

    def warm_up(self, frames: Iterable[np.ndarray]) -> int:
        """Feed the first ``warmup_frames`` of ``frames`` (the sequence's own first frames, read ahead) to the
        background model; returns how many it took. Call after ``reset`` and before the first ``detect``."""
        if self._seen:
            raise DetectorError("warm_up must come before the first detect of a sequence (call reset first)")
        taken = 0
        for frame in frames:
            if taken >= self.warmup_frames:
                break
            self._model.apply(self._work(frame), learningRate=-1)
            taken += 1
        self._warmed = taken > 0
        return taken

    # ------------------------------------------------------------------------------------------ detect

    def detect(self, frame: np.ndarray) -> Detections:
        height, width = frame.shape[:2]
        work = self._work(frame)
        mask = self.foreground(work)
        self._seen += 1
        foreground = mask * np.uint8(FOREGROUND)
        if foreground.shape != (height, width):
            foreground = cv2.resize(foreground, (width, height), interpolation=cv2.INTER_NEAREST)
        boxes, margins = self._candidates(work, mask)
        if not len(boxes):
            return Detections(foreground=foreground)
        scores = self._scores(boxes, margins, mask)
        kept = suppress(boxes, scores, self.nms_iou, self.min_score)
        if not len(kept):
            return Detections(foreground=foreground)
        factor = np.array([width / work.shape[1], height / work.shape[0]] * 2, np.float32)
        return Detections(clip_boxes(kept.boxes * factor, width, height), kept.scores, foreground)

    def mask(self, frame: np.ndarray) -> np.ndarray:
        """The frame's cleaned foreground alone (step 1), at frame size (uint8, 255 = moving): the background
        model another detector borrows for silhouettes (``engine.perception.detection.yolox``). Counts as a detected
        frame."""
        height, width = frame.shape[:2]
        foreground = self.foreground(self._work(frame)) * np.uint8(FOREGROUND)
        self._seen += 1
        if foreground.shape != (height, width):
            foreground = cv2.resize(foreground, (width, height), interpolation=cv2.INTER_NEAREST)
        return foreground

    def _work(self, frame: np.ndarray) -> np.ndarray:
        if frame.ndim != 3 or frame.shape[2] != 3:
            raise DetectorError(f"the fused detector needs BGR frames (H, W, 3), got shape {frame.shape}")
        height, width = frame.shape[:2]
        if self._size != (width, height):
            if self._size is not None:  # another camera (an image folder of mixed sizes): a new scene
                self.reset()
            self._size = (width, height)
        if height <= self.max_height:
            return frame
        factor = self.max_height / height
        return cv2.resize(frame, (max(1, round(width * factor)), self.max_height), interpolation=cv2.INTER_AREA)

    def _rate(self) -> float:
        """This frame's learning rate: OpenCV's automatic one while a model without warm-up is young."""
        if not self._warmed and self._seen < self.warmup_frames:
            return -1.0
        return self.learning_rate

    def foreground(self, work: np.ndarray) -> np.ndarray:
        """Cleaned foreground mask (uint8, 0/1) of a (shrunk) frame; the model learns the frame meanwhile."""
        raw = self._model.apply(work, learningRate=self._rate())
        mask = (raw == FOREGROUND).astype(np.uint8)  # shadow (127) and background (0) pixels dropped
        if mask.mean() > self.max_foreground:
            self._model.apply(work, learningRate=self.relearn_rate)
            return np.zeros_like(mask)
        mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        size = tuple(max(3, round(f * work.shape[0]) | 1) for f in self.close_size)
        return cv2.morphologyEx(mask, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, size))

    def _candidates(self, work: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Boxes (work pixels) of the stretched HOG candidates then the motion proposals, with their margins."""
        found = self.hog.detect(work)
        hog_boxes = np.array([self._stretch(box, mask) for box in found.boxes], np.float32).reshape(-1, 4)
        blobs = self.proposals(mask)
        support = np.full(len(blobs), self.no_hog_margin, np.float32)
        if len(blobs) and len(hog_boxes):
            confirms = iou_matrix(blobs, hog_boxes) >= HOG_CONFIRM_IOU
            best = np.where(confirms, found.scores[None, :], -np.inf).max(axis=1)
            support = np.maximum(support, best).astype(np.float32)
        return np.concatenate([hog_boxes, blobs]), np.concatenate([found.scores, support])

    def _scores(self, boxes: np.ndarray, margins: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """``m + motion_weight · (f_in − f_out)`` (step 5 of the module docstring)."""
        height, width = mask.shape
        table = cv2.integral(mask)
        inner = _covered(table, boxes, width, height) / np.maximum(_area(boxes, width, height), 1)
        band = boxes[:, 3] * np.float32(self.surround)
        above = np.stack([boxes[:, 0], boxes[:, 1] - band, boxes[:, 2], band], axis=1)
        below = np.stack([boxes[:, 0], boxes[:, 1] + boxes[:, 3], boxes[:, 2], band], axis=1)
        outside = _covered(table, above, width, height) + _covered(table, below, width, height)
        outer = outside / np.maximum(_area(above, width, height) + _area(below, width, height), 1)
        return (margins + self.motion_weight * (inner - outer)).astype(np.float32)

    def _stretch(self, box: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """``box`` stretched up and down over the rows where the foreground covers its middle columns."""
        height, width = mask.shape
        x, y, w, h = (float(v) for v in box)
        left, right = int(max(0, x + EXTEND_CORE * w)), int(min(width, x + (1 - EXTEND_CORE) * w))
        if right <= left:
            return np.asarray(box, np.float32)
        top, bottom = int(round(max(0.0, y))), int(round(min(float(height), y + h)))
        top_limit = int(max(0.0, y - self.extend_reach * h))
        bottom_limit = int(min(float(height), y + (1 + self.extend_reach) * h))
        covered = mask[:, left:right].mean(axis=1) >= self.extend_level
        while top - 1 >= top_limit and covered[top - 1]:
            top -= 1
        while bottom < bottom_limit and covered[bottom]:
            bottom += 1
        return np.array([x, top, w, bottom - top], np.float32)

    def proposals(self, mask: np.ndarray) -> np.ndarray:
        """Person-shaped connected components of a foreground mask: boxes (x, y, w, h), float32 [N, 4]."""
        height, width = mask.shape
        count, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        out = []
        for x, y, w, h, area in stats[1:count]:
            if h < self.min_height * height or area < self.min_fill * w * h:
                continue
            at_edge = y == 0 or y + h == height  # cut by the top or bottom edge: only part of the height shows
            lowest = min(self.min_aspect, self.edge_aspect) if at_edge else self.min_aspect
            if lowest <= h / w <= self.max_aspect:
                out.append((x, y, w, h))
        return np.array(out, np.float32).reshape(-1, 4)


def _corners(boxes: np.ndarray, width: int, height: int) -> tuple[np.ndarray, ...]:
    """Integer pixel bounds (x0, y0, x1, y1) of boxes (x, y, w, h), cut to the frame."""
    x0 = np.clip(np.floor(boxes[:, 0]), 0, width).astype(int)
    y0 = np.clip(np.floor(boxes[:, 1]), 0, height).astype(int)
    x1 = np.clip(np.ceil(boxes[:, 0] + boxes[:, 2]), 0, width).astype(int)
    y1 = np.clip(np.ceil(boxes[:, 1] + boxes[:, 3]), 0, height).astype(int)
    return x0, y0, np.maximum(x1, x0), np.maximum(y1, y0)


def _area(boxes: np.ndarray, width: int, height: int) -> np.ndarray:
    """In-frame pixel count of each box."""
    x0, y0, x1, y1 = _corners(boxes, width, height)
    return ((x1 - x0) * (y1 - y0)).astype(np.float32)


def _covered(table: np.ndarray, boxes: np.ndarray, width: int, height: int) -> np.ndarray:
    """Foreground pixel count inside each box, from the mask's summed-area table ``table``."""
    x0, y0, x1, y1 = _corners(boxes, width, height)
    return (table[y1, x1] - table[y0, x1] - table[y1, x0] + table[y0, x0]).astype(np.float32)
