"""``YoloxDetector`` (name ``"yolox"``): people and carried objects from a YOLOX ONNX network through OpenCV's DNN
module; by default the shipped YOLOX-Nano (``resources/models/detectors/``, Apache-2.0, Megvii), or any file
with the same layout by path.

One pass over an image region:

1. Letterbox (``letterbox``): the region is resized keeping its aspect ratio so that its long side is
   ``input_size`` (416), and padded with grey 114 on the bottom and right up to the next multiples of 32 (the
   network is fully convolutional: a 16:9 frame runs as 416 × 256, not 416 × 416). BGR, 0–255, no
   normalisation.
2. Output ``[1, N, 5 + C]``, one row per grid cell of the strides 8, 16 and 32 in turn (each row-major, y then
   x): ``cx = (o0 + gx)·s``, ``cy = (o1 + gy)·s``, ``w = exp(o2)·s``, ``h = exp(o3)·s`` in input pixels,
   objectness ``o4``, class scores ``o5…`` (``decode_yolox``). A class's score is objectness × class score.
3. People: class ``person_class`` (COCO 0) with score ≥ ``min_score`` (0.15: on the labelled clips it keeps
   the partial people at a fisheye frame's edge that 0.25 loses, at the same precision; ``docs/real-footage.md``);
   carried objects: the COCO classes of
   ``CARRIED_OBJECT_CLASSES`` (backpack, umbrella, handbag, suitcase) with score ≥ ``object_min_score`` (0.3).
   Boxes are divided by the letterbox scale and shifted by the region's origin.

The whole frame is one pass; large frames add tiles (``engine.perception.detection.tiles``:
``tiles="auto"|"off"|"RxC"``), and
the passes are merged there (cut boxes dropped or joined, then NMS at ``nms_iou``). Carried objects pass NMS per
kind. With ``foreground=True`` (ingest's default for videos) a background model
(``engine.perception.detection.motion``'s
KNN foreground step, on frames shrunk to ``foreground_height`` rows) hands each frame's foreground mask along
(``Detections.foreground``), the person silhouettes attribute reading cuts from; it then also has
``warm_up``. Otherwise the detector keeps no state between frames.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from engine.perception.detection.detectors import (
    CARRIED_OBJECT_CLASSES,
    CarriedObjects,
    Detections,
    clip_boxes,
    suppress,
)
from engine.perception.detection.errors import DetectorError
from engine.perception.detection.motion import FusedDetector
from engine.perception.detection.tiles import TILE_SCALE, Region, cut_by_tile, merge_passes, parse_tiles, plan_tiles

YOLOX_STRIDES: tuple[int, ...] = (8, 16, 32)
LETTERBOX_PAD = 114
YOLOX_FILE = ("models", "detectors", "yolox_nano.onnx")


def shipped_yolox() -> Path:
    """Path of the shipped YOLOX-Nano file."""
    from engine.kernel.resources import resource_path

    try:
        return resource_path(*YOLOX_FILE)
    except FileNotFoundError as exc:
        raise DetectorError(f"the shipped YOLOX-Nano detector is missing: {exc}") from None


def input_shape(width: int, height: int, input_size: int) -> tuple[float, int, int]:
    """(scale, network width, network height) for a ``width`` × ``height`` image letterboxed to ``input_size``."""
    scale = input_size / max(width, height)
    stride = YOLOX_STRIDES[-1]
    net_w = max(stride, math.ceil(round(width * scale) / stride) * stride)
    net_h = max(stride, math.ceil(round(height * scale) / stride) * stride)
    return scale, net_w, net_h


def letterbox(image: np.ndarray, input_size: int) -> tuple[np.ndarray, float]:
    """The image resized so its long side is ``input_size``, padded with 114 bottom/right to multiples of 32;
    and the scale (network pixels per image pixel)."""
    height, width = image.shape[:2]
    scale, net_w, net_h = input_shape(width, height, input_size)
    new_w, new_h = max(1, round(width * scale)), max(1, round(height * scale))
    interpolation = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    resized = cv2.resize(image, (new_w, new_h), interpolation=interpolation)
    canvas = np.full((net_h, net_w, 3), LETTERBOX_PAD, np.uint8)
    canvas[:new_h, :new_w] = resized
    return canvas, scale


@lru_cache(maxsize=16)
def _grid(net_w: int, net_h: int) -> tuple[np.ndarray, np.ndarray]:
    """Per output row: the cell's (gx, gy) [N, 2] and its stride [N]."""
    cells, strides = [], []
    for stride in YOLOX_STRIDES:
        gy, gx = np.mgrid[0 : net_h // stride, 0 : net_w // stride]
        cells.append(np.stack([gx.reshape(-1), gy.reshape(-1)], axis=1))
        strides.append(np.full(gx.size, stride))
    return np.concatenate(cells).astype(np.float32), np.concatenate(strides).astype(np.float32)


def decode_yolox(output: np.ndarray, net_w: int, net_h: int, source: str = "the network") -> tuple[np.ndarray,
                                                                                                  np.ndarray]:
    """(boxes x, y, w, h in network pixels [N, 4], class scores = objectness × class [N, C]) from a raw YOLOX
    output ``[1, N, 5 + C]`` of a ``net_w`` × ``net_h`` input; another shape is a ``DetectorError``."""
    cells, strides = _grid(net_w, net_h)
    shape = list(np.shape(output))
    if len(shape) != 3 or shape[0] != 1 or shape[1] != len(cells) or shape[2] < 6:
        raise DetectorError(f"{source}: layout 'yolox' expects output [1, {len(cells)}, 5 + C] for a {net_w}×{net_h} "
                            f"input (grid cells of strides {list(YOLOX_STRIDES)}), got {shape}")
    rows = np.asarray(output, np.float32)[0]
    centre = (rows[:, 0:2] + cells) * strides[:, None]
    size = np.exp(np.minimum(rows[:, 2:4], 20.0)) * strides[:, None]
    boxes = np.concatenate([centre - size / 2, size], axis=1)
    return boxes, rows[:, 4:5] * rows[:, 5:]


class YoloxDetector:
    """People (and carried objects) from a YOLOX-layout ONNX network (see the module docstring)."""

    name = "yolox"

    def __init__(self, path: str | Path | None = None, *, input_size: int = 416, min_score: float = 0.15,
                 nms_iou: float = 0.45, tiles: str = "auto", object_min_score: float = 0.3, person_class: int = 0,
                 foreground: bool = False, foreground_height: int = 180, tile_scale: float = TILE_SCALE) -> None:
        if not isinstance(input_size, int) or input_size < 32:
            raise DetectorError(f"YOLOX input size must be a whole number of pixels ≥ 32, got {input_size!r}")
        if not 0 <= min_score <= 1 or not 0 <= object_min_score <= 1:
            raise DetectorError(f"min_score and object_min_score must lie in [0, 1], got {min_score} and "
                                f"{object_min_score}")
        if not 0 < nms_iou <= 1:
            raise DetectorError(f"nms_iou must lie in (0, 1], got {nms_iou}")
        if person_class < 0:
            raise DetectorError(f"person_class must be a class index ≥ 0, got {person_class}")
        if not tile_scale > 0:
            raise DetectorError(f"tile_scale must be positive, got {tile_scale}")
        self.tile_scale = float(tile_scale)
        self.tiles = parse_tiles(tiles) if isinstance(tiles, str) else parse_tiles(f"{tiles[0]}x{tiles[1]}")
        self.path = Path(path) if path is not None else shipped_yolox()
        if not self.path.is_file():
            raise DetectorError(f"YOLOX detector file {self.path} does not exist")
        self.input_size = input_size
        self.min_score = float(min_score)
        self.nms_iou = float(nms_iou)
        self.object_min_score = float(object_min_score)
        self.person_class = int(person_class)
        self._nets: dict[tuple[int, int], Any] = {}
        self._sha256: str | None = None
        self._classes = self._check()
        self.foreground: FusedDetector | None = None
        if foreground:
            self.foreground = FusedDetector(max_height=foreground_height)

    def _net(self, net_w: int, net_h: int):
        """One network per input shape (OpenCV re-plans a network whose input shape changes)."""
        key = (net_w, net_h)
        if key not in self._nets:
            try:
                self._nets[key] = cv2.dnn.readNetFromONNX(str(self.path))
            except cv2.error as exc:
                raise DetectorError(f"OpenCV cannot load the ONNX detector {self.path}: {exc}") from None
        return self._nets[key]

    def _forward(self, canvas: np.ndarray) -> np.ndarray:
        net_h, net_w = canvas.shape[:2]
        net = self._net(net_w, net_h)
        net.setInput(cv2.dnn.blobFromImage(canvas, 1.0, (net_w, net_h), swapRB=False, crop=False))
        try:
            return np.asarray(net.forward(), np.float32)
        except cv2.error as exc:
            raise DetectorError(f"the ONNX detector {self.path} failed on a {net_w}×{net_h} input (is it a YOLOX "
                                f"network?): {exc}") from None

    def _check(self) -> int:
        """Run the network once on a grey input: its output must have the YOLOX layout; returns C."""
        _, net_w, net_h = input_shape(self.input_size, self.input_size, self.input_size)
        canvas = np.full((net_h, net_w, 3), LETTERBOX_PAD, np.uint8)
        _, scores = decode_yolox(self._forward(canvas), net_w, net_h, str(self.path))
        classes = scores.shape[1]
        if self.person_class >= classes:
            raise DetectorError(f"{self.path}: person_class is {self.person_class} but the output has {classes} "
                                "classes")
        return classes

    def settings(self) -> dict[str, Any]:
        from engine.kernel.hashing import sha256_file

        if self._sha256 is None:
            self._sha256 = sha256_file(self.path)
        tiles = self.tiles if isinstance(self.tiles, str) else f"{self.tiles[0]}x{self.tiles[1]}"
        out = {"name": self.name, "file_sha256": self._sha256, "layout": "yolox",
               "input_size": self.input_size, "min_score": self.min_score, "nms_iou": self.nms_iou, "tiles": tiles,
               "tile_scale": self.tile_scale,
               "object_min_score": self.object_min_score, "person_class": self.person_class,
               "foreground": None}
        if self.foreground is not None:
            out["foreground"] = {"subtractor": "knn", "max_height": self.foreground.max_height,
                                 "warmup_frames": self.foreground.warmup_frames, "seed": self.foreground.seed}
        return out

    def reset(self) -> None:
        """A new sequence: the background model (when there is one) starts afresh."""
        if self.foreground is not None:
            self.foreground.reset()

    def warm_up(self, frames: Iterable[np.ndarray]) -> int:
        """Feed the sequence's first frames to the background model (``engine.perception.detection.motion``); 0 without
        one
        (then ``frames`` is not read)."""
        return 0 if self.foreground is None else self.foreground.warm_up(frames)

    def regions(self, width: int, height: int) -> list[Region]:
        """The whole frame, then the tiles (``engine.perception.detection.tiles``)."""
        return [(0, 0, width, height), *plan_tiles(width, height, self.tiles, self.input_size,
                                                   scale=self.tile_scale)]

    def detect(self, frame: np.ndarray) -> Detections:
        if frame.ndim != 3 or frame.shape[2] != 3:
            raise DetectorError(f"the YOLOX detector needs BGR frames (H, W, 3), got shape {frame.shape}")
        height, width = frame.shape[:2]
        people: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        things: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        for index, region in enumerate(self.regions(width, height)):
            x, y, w, h = region
            canvas, scale = letterbox(frame[y : y + h, x : x + w], self.input_size)
            boxes, scores = decode_yolox(self._forward(canvas), canvas.shape[1], canvas.shape[0], str(self.path))
            boxes = boxes / scale + np.array([x, y, 0, 0], np.float32)
            person = scores[:, self.person_class]
            found = person >= self.min_score
            cut = cut_by_tile(boxes[found], region, width, height) if index else np.zeros(int(found.sum()), bool)
            people.append((boxes[found], person[found], np.full(int(found.sum()), index), cut))
            for label in CARRIED_OBJECT_CLASSES:
                if label < scores.shape[1]:
                    hit = scores[:, label] >= self.object_min_score
                    things.append((boxes[hit], scores[hit, label], np.full(int(hit.sum()), label)))
        boxes, scores, passes, cut = (np.concatenate(parts) for parts in zip(*people, strict=True))
        merged = merge_passes(clip_boxes(boxes, width, height), scores, passes, cut, self.nms_iou)
        mask = None
        if self.foreground is not None:
            mask = self.foreground.mask(frame)
        return Detections(merged.boxes, merged.scores, mask, self._objects(things, width, height))

    def _objects(self, found: list[tuple[np.ndarray, np.ndarray, np.ndarray]], width: int,
                 height: int) -> CarriedObjects:
        """Carried objects of every pass, NMS per kind, best first."""
        if not found:
            return CarriedObjects()
        boxes, scores, labels = (np.concatenate(parts) for parts in zip(*found, strict=True))
        out_boxes, out_scores, kinds = [], [], []
        for label, kind in CARRIED_OBJECT_CLASSES.items():
            picked = labels == label
            if not picked.any():
                continue
            kept = suppress(clip_boxes(boxes[picked], width, height), scores[picked], self.nms_iou)
            out_boxes.append(kept.boxes)
            out_scores.append(kept.scores)
            kinds.extend([kind] * len(kept))
        if not kinds:
            return CarriedObjects()
        boxes, scores = np.concatenate(out_boxes), np.concatenate(out_scores)
        order = np.argsort(-scores, kind="stable")
        return CarriedObjects(boxes[order], scores[order], tuple(kinds[i] for i in order))
