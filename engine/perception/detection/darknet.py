"""``FastDetector`` (name ``"fast"``): people from the shipped Yolo-Fastest 1.1 person-only network (Darknet
cfg + weights in ``resources/models/detectors/``, YOLO licence v2) through ``cv2.dnn.readNetFromDarknet``.

The frame is stretched to ``input_size`` × ``input_size`` (320), RGB, scaled by 1/255. Each YOLO output layer
gives rows ``(cx, cy, w, h, objectness, person)`` with the box as fractions of the input; OpenCV's YOLO layer
already multiplies the class column by the objectness, so the person column is the score. Rows scoring at least
``min_score`` (0.2) are scaled to frame pixels, clipped to the frame and pass NMS at ``nms_iou``. About four
times faster than YOLOX-Nano and less thorough in crowds and at a distance (``docs/real-footage.md``);
stateless, no carried objects.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np

from engine.perception.detection.detectors import Detections, clip_boxes, suppress
from engine.perception.detection.errors import DetectorError

FAST_FILES = ("yolo-fastest-1.1_body.cfg", "yolo-fastest-1.1_body.weights")


def shipped_fast() -> tuple[Path, Path]:
    """Paths of the shipped Yolo-Fastest cfg and weights."""
    from engine.kernel.resources import resource_path

    try:
        return tuple(resource_path("models", "detectors", name) for name in FAST_FILES)  # type: ignore[return-value]
    except FileNotFoundError as exc:
        raise DetectorError(f"the shipped Yolo-Fastest detector is missing: {exc}") from None


class FastDetector:
    """Yolo-Fastest 1.1 person detector (see the module docstring)."""

    name = "fast"

    def __init__(self, *, input_size: int = 320, min_score: float = 0.2, nms_iou: float = 0.45) -> None:
        if not isinstance(input_size, int) or input_size < 32 or input_size % 32:
            raise DetectorError(f"Yolo-Fastest input size must be a multiple of 32, got {input_size!r}")
        if not 0 <= min_score <= 1:
            raise DetectorError(f"min_score must lie in [0, 1], got {min_score}")
        if not 0 < nms_iou <= 1:
            raise DetectorError(f"nms_iou must lie in (0, 1], got {nms_iou}")
        self.cfg, self.weights = shipped_fast()
        try:
            self._net = cv2.dnn.readNetFromDarknet(str(self.cfg), str(self.weights))
        except cv2.error as exc:
            raise DetectorError(f"OpenCV cannot load the Darknet detector {self.cfg}: {exc}") from None
        self._outputs = self._net.getUnconnectedOutLayersNames()
        self.input_size = input_size
        self.min_score = float(min_score)
        self.nms_iou = float(nms_iou)

    def settings(self) -> dict[str, Any]:
        from engine.kernel.hashing import sha256_file

        return {"name": self.name, "weights_sha256": sha256_file(self.weights), "input_size": self.input_size,
                "min_score": self.min_score, "nms_iou": self.nms_iou}

    def reset(self) -> None:
        """Stateless: nothing to forget."""

    def detect(self, frame: np.ndarray) -> Detections:
        if frame.ndim != 3 or frame.shape[2] != 3:
            raise DetectorError(f"the Yolo-Fastest detector needs BGR frames (H, W, 3), got shape {frame.shape}")
        height, width = frame.shape[:2]
        size = (self.input_size, self.input_size)
        self._net.setInput(cv2.dnn.blobFromImage(frame, 1.0 / 255.0, size, swapRB=True, crop=False))
        rows = np.concatenate([np.asarray(o, np.float32).reshape(-1, 6) for o in self._net.forward(self._outputs)])
        rows = rows[rows[:, 5] >= self.min_score]
        scale = np.array([width, height, width, height], np.float32)
        boxes = np.concatenate([rows[:, 0:2] - rows[:, 2:4] / 2, rows[:, 2:4]], axis=1) * scale
        return suppress(clip_boxes(boxes, width, height), rows[:, 5], self.nms_iou)
