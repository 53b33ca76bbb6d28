"""Person detectors behind one small interface.

A detector sees the frames of one sequence (a video, or one camera's images) in order::

    detector.reset()                      # a new sequence starts (stateful detectors drop their history)
    found = detector.detect(frame_bgr)    # Detections: boxes [N, 4] (x, y, w, h) in frame pixels, scores [N]

``reset``/ordered frames let a stateful detector (``engine.perception.detection.motion.FusedDetector``: background
subtraction fused with HOG; it also offers ``warm_up(first frames)``, which ingest calls when a detector has it) slot in
beside the stateless ones here; ``settings()`` is what a done marker records about it. Build one by name with
``make_detector``; ``DETECTORS`` maps names to factories:

- ``"auto"`` and ``"yolox"``: ``engine.perception.detection.yolox.YoloxDetector``, the shipped YOLOX-Nano (people and
carried
  objects, tiling for large frames) — the default;
- ``"fast"``: ``engine.perception.detection.darknet.FastDetector``, the shipped person-only Yolo-Fastest 1.1;
- ``"fused"``: ``engine.perception.detection.motion.FusedDetector``; ``"hog"``: ``HogDetector`` below;
- ``"retail-0013"``, ``"adas-0002"``, ``"person-0200"``:
``engine.perception.detection.openvino_ssd.OpenVinoSsdDetector``, the
  shipped OpenVINO person detectors (people only, tiling for large frames);
- a path to an ``.onnx`` file: ``OnnxDetector`` below, or ``YoloxDetector`` when ``layout="yolox"``.

- ``HogDetector``: OpenCV's HOG + linear SVM people detector (no download). Its window is 128 px tall, so a
  frame is upscaled by ``u = min(128 / min_person_height, max(1, 1080 / frame height))`` before detection
  (people down to ``min_person_height`` px are found, frames are not blown up past 1080 rows); boxes are
  mapped back, shrunk by the window's margin around the person (15 % of the width each side, 5 % of the
  height top and bottom) and pass non-maximum suppression. Scores are SVM margins (not probabilities).
- ``OnnxDetector``: any ONNX detector OpenCV's DNN module runs, from a local file. Input: the frame stretched
  to ``input_size`` (W, H), RGB unless ``swap_rb`` is false, scaled by 1/255, NCHW float32. Output, by
  ``layout``:

  - ``"yolo"``: ``[1, N, 5 + C]`` or ``[N, 5 + C]`` rows ``(cx, cy, w, h, objectness, class scores…)``, box in
    input pixels; score = objectness × class score of ``person_class`` (objectness alone when C = 0);
  - ``"yolov8"``: ``[1, 4 + C, N]`` columns ``(cx, cy, w, h, class scores…)`` in input pixels, no objectness;
    score = class score of ``person_class``;
  - ``"ssd"``: ``[1, 1, N, 7]`` rows ``(image, class, score, x1, y1, x2, y2)`` with corners as fractions of
    the input (OpenCV's DetectionOutput layout); rows of another class are dropped;
  - ``"yolox"``: YOLOX's raw grid output, letterboxed BGR input: ``engine.perception.detection.yolox``
  (``make_detector``
    builds a ``YoloxDetector`` for it).

  Boxes scoring at least ``min_score`` are scaled to frame pixels, clipped to the frame and pass NMS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np

from engine.kernel.boxes import iou_matrix
from engine.perception.detection.errors import DetectorError

HOG_WINDOW_HEIGHT = 128
HOG_WINDOW_WIDTH = 64
HOG_MAX_UPSCALED_ROWS = 1080
HOG_MARGIN = (0.15, 0.05)  # fraction of the window's width / height around the person, each side
MAX_CLASSES = 1000  # more classes than this means the output was read in the wrong layout
ONNX_LAYOUTS: tuple[str, ...] = ("yolo", "yolov8", "ssd", "yolox")


#: COCO class index (80-class numbering, 0-based) → the ontology's ``carrying_type`` value it shows.
CARRIED_OBJECT_CLASSES: dict[int, str] = {24: "backpack", 25: "umbrella", 26: "handbag", 28: "suitcase"}


@dataclass(frozen=True)
class CarriedObjects:
    """Objects a person may carry, found in the same pass as the people: boxes (x, y, w, h) in frame pixels,
    float32 [M, 4], scores float32 [M], and per box its ontology ``carrying_type`` value (``kinds``)."""

    boxes: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.float32))
    scores: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    kinds: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        boxes = np.asarray(self.boxes, dtype=np.float32).reshape(-1, 4)
        scores = np.asarray(self.scores, dtype=np.float32).reshape(-1)
        kinds = tuple(str(k) for k in self.kinds)
        if not boxes.shape[0] == scores.shape[0] == len(kinds):
            raise DetectorError(f"carried objects need one score and one kind per box, got {boxes.shape[0]} boxes, "
                                f"{scores.shape[0]} scores and {len(kinds)} kinds")
        unknown = sorted(set(kinds) - set(CARRIED_OBJECT_CLASSES.values()))
        if unknown:
            raise DetectorError(f"carried object kinds {unknown} are not among "
                                f"{sorted(CARRIED_OBJECT_CLASSES.values())}")
        object.__setattr__(self, "boxes", boxes)
        object.__setattr__(self, "scores", scores)
        object.__setattr__(self, "kinds", kinds)

    def __len__(self) -> int:
        return int(self.boxes.shape[0])


@dataclass(frozen=True)
class Detections:
    """Boxes (x, y, w, h) in frame pixels, float32 [N, 4], and their scores, float32 [N]; ``foreground``: the
    frame's foreground mask (uint8 [H, W], 255 = moving pixels) when the detector models the background, else
    None (a person's silhouette inside a box, for reading clothing colours: ``engine.perception.attributes``);
    ``objects``: carried objects (bags, umbrellas, suitcases) when the detector finds them, else None."""

    boxes: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.float32))
    scores: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    foreground: np.ndarray | None = None
    objects: CarriedObjects | None = None

    def __post_init__(self) -> None:
        boxes = np.asarray(self.boxes, dtype=np.float32).reshape(-1, 4)
        scores = np.asarray(self.scores, dtype=np.float32).reshape(-1)
        if boxes.shape[0] != scores.shape[0]:
            raise DetectorError(f"detections need one score per box, got {boxes.shape[0]} boxes and "
                                f"{scores.shape[0]} scores")
        object.__setattr__(self, "boxes", boxes)
        object.__setattr__(self, "scores", scores)

    def __len__(self) -> int:
        return int(self.boxes.shape[0])

    def subset(self, keep: np.ndarray) -> Detections:
        """The detections selected by ``keep`` (a boolean mask or indices), with the same foreground and objects."""
        return Detections(self.boxes[keep], self.scores[keep], self.foreground, self.objects)


class PersonDetector(Protocol):
    name: str

    def settings(self) -> dict[str, Any]: ...

    def reset(self) -> None: ...

    def detect(self, frame: np.ndarray) -> Detections: ...


def clip_boxes(boxes: np.ndarray, width: int, height: int) -> np.ndarray:
    """Boxes (x, y, w, h) cut to the frame; boxes left without area get width or height 0."""
    x1 = np.clip(boxes[:, 0], 0, width)
    y1 = np.clip(boxes[:, 1], 0, height)
    x2 = np.clip(boxes[:, 0] + boxes[:, 2], 0, width)
    y2 = np.clip(boxes[:, 1] + boxes[:, 3], 0, height)
    return np.stack([x1, y1, x2 - x1, y2 - y1], axis=1).astype(np.float32)


def suppress(boxes: np.ndarray, scores: np.ndarray, iou: float, min_score: float = -np.inf) -> Detections:
    """Boxes with positive area and ``score ≥ min_score``, then greedy non-maximum suppression: best score
    first, dropping every box whose IoU with a kept one exceeds ``iou``."""
    keep = (boxes[:, 2] >= 1) & (boxes[:, 3] >= 1) & (scores >= min_score)
    boxes, scores = boxes[keep], scores[keep]
    order = np.argsort(-scores, kind="stable")
    overlap = iou_matrix(boxes[order], boxes[order])
    kept: list[int] = []
    for position in range(len(order)):
        if all(overlap[position, k] <= iou for k in kept):
            kept.append(position)
    picked = order[kept]
    return Detections(boxes[picked], scores[picked])


class HogDetector:
    """OpenCV HOG people detector (see the module docstring)."""

    name = "hog"

    def __init__(self, min_person_height: float = 64.0, hit_threshold: float = 0.0, scale: float = 1.05,
                 win_stride: int = 8, nms_iou: float = 0.5) -> None:
        if not min_person_height > 0:
            raise DetectorError(f"min_person_height must be positive, got {min_person_height}")
        if not scale > 1:
            raise DetectorError(f"HOG pyramid scale must be greater than 1, got {scale}")
        if win_stride < 1:
            raise DetectorError(f"HOG window stride must be at least 1 pixel, got {win_stride}")
        if not 0 < nms_iou <= 1:
            raise DetectorError(f"nms_iou must lie in (0, 1], got {nms_iou}")
        self.min_person_height = float(min_person_height)
        self.hit_threshold = float(hit_threshold)
        self.scale = float(scale)
        self.win_stride = int(win_stride)
        self.nms_iou = float(nms_iou)
        self._hog = cv2.HOGDescriptor()
        self._hog.setSVMDetector(cv2.HOGDescriptor_getDefaultPeopleDetector())

    def settings(self) -> dict[str, Any]:
        return {"name": self.name, "min_person_height": self.min_person_height, "hit_threshold": self.hit_threshold,
                "scale": self.scale, "win_stride": self.win_stride, "nms_iou": self.nms_iou}

    def reset(self) -> None:
        """Stateless: nothing to forget."""

    def upscale(self, frame_height: int) -> float:
        return min(HOG_WINDOW_HEIGHT / self.min_person_height, max(1.0, HOG_MAX_UPSCALED_ROWS / frame_height))

    def detect(self, frame: np.ndarray) -> Detections:
        height, width = frame.shape[:2]
        factor = max(1.0, self.upscale(height))
        if height < 1 or width < 1:
            return Detections()
        image = frame if factor == 1.0 else cv2.resize(frame, None, fx=factor, fy=factor,
                                                       interpolation=cv2.INTER_LINEAR)
        # detectMultiScale crashes (assertion or segfault) on images smaller than its 64 × 128 window: pad the
        # bottom and right with black so boxes keep their coordinates, and clip them to the frame below.
        short_rows = max(0, HOG_WINDOW_HEIGHT - image.shape[0])
        short_cols = max(0, HOG_WINDOW_WIDTH - image.shape[1])
        if short_rows or short_cols:
            image = cv2.copyMakeBorder(image, 0, short_rows, 0, short_cols, cv2.BORDER_CONSTANT, value=0)
        stride = (self.win_stride, self.win_stride)
        rects, weights = self._hog.detectMultiScale(image, hitThreshold=self.hit_threshold, winStride=stride,
                                                    padding=(8, 8), scale=self.scale)
        if len(rects) == 0:
            return Detections()
        boxes = np.asarray(rects, dtype=np.float32).reshape(-1, 4) / factor
        margin_w, margin_h = boxes[:, 2] * HOG_MARGIN[0], boxes[:, 3] * HOG_MARGIN[1]
        boxes = np.stack([boxes[:, 0] + margin_w, boxes[:, 1] + margin_h,
                          boxes[:, 2] - 2 * margin_w, boxes[:, 3] - 2 * margin_h], axis=1)
        scores = np.asarray(weights, dtype=np.float32).reshape(-1)
        return suppress(clip_boxes(boxes, width, height), scores, self.nms_iou)


class OnnxDetector:
    """An ONNX detector run by OpenCV's DNN module (input and output contract in the module docstring)."""

    name = "onnx"

    def __init__(self, path: str | Path, layout: str = "yolo", input_size: tuple[int, int] = (640, 640),
                 person_class: int = 0, min_score: float = 0.5, nms_iou: float = 0.45, swap_rb: bool = True) -> None:
        path = Path(path)
        if not path.is_file():
            raise DetectorError(f"ONNX detector file {path} does not exist")
        if layout not in ONNX_LAYOUTS:
            raise DetectorError(f"ONNX output layout must be one of {list(ONNX_LAYOUTS)}, got {layout!r}")
        if layout == "yolox":
            raise DetectorError("layout 'yolox' is read by engine.perception.detection.yolox.YoloxDetector "
                                "(make_detector "
                                "picks it for a path with layout='yolox')")
        if len(input_size) != 2 or min(input_size) < 1:
            raise DetectorError(f"ONNX input size must be two positive integers (W, H), got {input_size!r}")
        if person_class < 0:
            raise DetectorError(f"person_class must be a class index ≥ 0, got {person_class}")
        if not 0 < nms_iou <= 1:
            raise DetectorError(f"nms_iou must lie in (0, 1], got {nms_iou}")
        try:
            self._net = cv2.dnn.readNetFromONNX(str(path))
        except cv2.error as exc:
            raise DetectorError(f"OpenCV cannot load the ONNX detector {path}: {exc}") from None
        self.path = path
        self.layout = layout
        self.input_size = (int(input_size[0]), int(input_size[1]))
        self.person_class = int(person_class)
        self.min_score = float(min_score)
        self.nms_iou = float(nms_iou)
        self.swap_rb = bool(swap_rb)
        self.detect(np.zeros((self.input_size[1], self.input_size[0], 3), np.uint8))  # a wrong layout fails here

    def settings(self) -> dict[str, Any]:
        from engine.kernel.hashing import sha256_file

        return {"name": self.name, "file_sha256": sha256_file(self.path), "layout": self.layout,
                "input_size": list(self.input_size), "person_class": self.person_class, "min_score": self.min_score,
                "nms_iou": self.nms_iou, "swap_rb": self.swap_rb}

    def reset(self) -> None:
        """Stateless: nothing to forget."""

    def detect(self, frame: np.ndarray) -> Detections:
        height, width = frame.shape[:2]
        blob = cv2.dnn.blobFromImage(frame, 1.0 / 255.0, self.input_size, swapRB=self.swap_rb, crop=False)
        self._net.setInput(blob)
        try:
            output = np.asarray(self._net.forward(), dtype=np.float32)
        except cv2.error as exc:
            raise DetectorError(f"the ONNX detector {self.path} failed on a {width}×{height} frame: {exc}") from None
        boxes, scores = self.decode(output)
        in_w, in_h = self.input_size
        if self.layout == "ssd":
            boxes = boxes * np.array([width, height, width, height], dtype=np.float32)
        else:
            boxes = boxes * np.array([width / in_w, height / in_h, width / in_w, height / in_h], dtype=np.float32)
        return suppress(clip_boxes(boxes, width, height), scores, self.nms_iou, self.min_score)

    def decode(self, output: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(boxes x, y, w, h in input pixels, or input fractions for ``ssd``; scores) from the raw output."""
        shape = tuple(output.shape)
        if self.layout == "ssd":
            if output.ndim != 4 or shape[:2] != (1, 1) or shape[3] != 7:
                raise DetectorError(f"{self.path}: layout 'ssd' expects output [1, 1, N, 7], got {list(shape)}")
            rows = output[0, 0]
            rows = rows[np.rint(rows[:, 1]) == self.person_class]
            corners = rows[:, 3:7]
            return np.concatenate([corners[:, :2], corners[:, 2:] - corners[:, :2]], axis=1), rows[:, 2]
        if self.layout == "yolov8":
            if output.ndim != 3 or shape[0] != 1 or shape[1] < 5:
                raise DetectorError(f"{self.path}: layout 'yolov8' expects output [1, 4 + C, N], got {list(shape)}")
            if shape[1] - 4 > MAX_CLASSES:
                raise DetectorError(f"{self.path}: output {list(shape)} read as [1, 4 + C, N] gives {shape[1] - 4} "
                                    "classes, so it is not the 'yolov8' layout; try --onnx-layout yolo or yolox")
            rows = output[0].T
            classes = rows.shape[1] - 4
            self._check_class(classes)
            scores = rows[:, 4 + self.person_class]
        else:
            rows = output[0] if output.ndim == 3 and shape[0] == 1 else output
            if rows.ndim != 2 or rows.shape[1] < 5:
                raise DetectorError(f"{self.path}: layout 'yolo' expects output [1, N, 5 + C], got {list(shape)}")
            if rows.shape[1] - 5 > MAX_CLASSES:
                raise DetectorError(f"{self.path}: output {list(shape)} read as [1, N, 5 + C] gives "
                                    f"{rows.shape[1] - 5} classes, so it is not the 'yolo' layout; try "
                                    "--onnx-layout yolov8")
            if rows.shape[0] == grid_cells(self.input_size):
                raise DetectorError(f"{self.path}: output {list(shape)} has one row per grid cell of strides 8, 16 "
                                    "and 32 (raw grid offsets, no anchors): that is the 'yolox' layout; use "
                                    "--onnx-layout yolox")
            classes = rows.shape[1] - 5
            if classes:
                self._check_class(classes)
            scores = rows[:, 4] * rows[:, 5 + self.person_class] if classes else rows[:, 4]
        centre, size = rows[:, 0:2], rows[:, 2:4]
        return np.concatenate([centre - size / 2, size], axis=1), scores

    def _check_class(self, classes: int) -> None:
        if self.person_class >= classes:
            raise DetectorError(f"{self.path}: person_class is {self.person_class} but the output has {classes} "
                                "classes")


def grid_cells(input_size: tuple[int, int], strides: tuple[int, ...] = (8, 16, 32)) -> int:
    """Rows of an anchor-free (YOLOX) output for an input (W, H): one per cell of each stride's grid."""
    width, height = input_size
    return sum((width // s) * (height // s) for s in strides)


def parse_size(text: str) -> tuple[int, int]:
    """``"640x480"`` → (640, 480): an ONNX input size as width × height."""
    match = re.fullmatch(r"\s*(\d+)\s*[xX×]\s*(\d+)\s*", text or "")
    if not match or 0 in (int(match.group(1)), int(match.group(2))):
        raise DetectorError(f"input size must look like 640x640 (width x height), got {text!r}")
    width, height = int(match.group(1)), int(match.group(2))
    if max(width, height) > MAX_INPUT_SIDE:  # the network's input blob is allocated at this size
        raise DetectorError(f"input size {text!r} is over the limit of {MAX_INPUT_SIDE} pixels a side")
    return width, height


MAX_INPUT_SIDE = 4096
