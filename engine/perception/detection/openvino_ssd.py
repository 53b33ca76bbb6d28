"""``OpenVinoSsdDetector``: people from the three person detectors Lineup ships from Intel's Open Model Zoo
(``engine.perception.pretrained``: ``resources/models/openvino/``, Apache-2.0; docs/pretrained-models.md), by short
name:

- ``"retail-0013"``: ``person-detection-retail-0013`` (SSD, MobileNetV2, input 544 × 320, W × H), indoor and
  retail scenes;
- ``"adas-0002"``: ``pedestrian-detection-adas-0002`` (SSD, MobileNet, 672 × 384), pedestrians seen from a car;
- ``"person-0200"``: ``person-detection-0200`` (SSD, MobileNetV2, 256 × 256).

``SSD_DETECTORS`` is the one list of them (the factory registers each name from it). One pass over an image
region (the whole frame, or a tile):

1. The region is resized (no letterbox: its aspect ratio is not kept) to the network's input, BGR, float 0–255,
   NCHW (mean and scale are inside the graph).
2. The output ``detection_out`` ``[1, 1, 200, 7]`` holds rows ``[image_id, label, score, x_min, y_min, x_max,
   y_max]`` with corners as fractions of the input; the first row with ``image_id`` < 0 ends the list (the rows
   after it are padding). ``decode_ssd`` keeps rows of the network's person label (1 for the two retail/ADAS
   networks, 0 for ``person-0200``) scoring at least ``min_score``, scales the corners to the region's pixels,
   shifts them by its origin and clips them to the frame.

Tiles as YOLOX uses them (``engine.perception.detection.tiles``: ``tiles="auto"|"off"|"RxC"``, the whole frame always
runs too, the passes are merged there: cut boxes dropped or joined, then NMS at ``nms_iou``). For ``auto`` the tile
sides are ``tile_scale`` × the network's input (W across, H down) and frames are tiled once they are over
``min_ratio`` × the input along a side. Each network's defaults (``SsdSpec``) were chosen by measurement
(docs/real-footage.md, section "Shipped OpenVINO detectors"): 720p frames run whole, a 1080p frame gets 3 × 3
tiles (``retail-0013``: tiles 1.5 × 544 × 320; ``adas-0002``: 1.5 × 672 × 384) or 3 × 5 (``person-0200``:
2 × 256): on the synthetic 1080p crowd, the plans with the fewest passes that keep recall near 0.75 or more at
precision over 0.8; score ≥ 0.5 (Intel's demos' threshold), ≥ 0.4 for ``person-0200`` (better on both the
labelled clips and the crowd). Stateless; people only (no carried objects).
Inference runs on the CPU through OpenVINO (``LINEUP_OPENVINO_DEVICE`` names another device), ``threads``
inference threads (default: OpenVINO's choice).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from engine.perception.detection.detectors import Detections, clip_boxes
from engine.perception.detection.errors import DetectorError
from engine.perception.detection.tiles import Region, cut_by_tile, merge_passes, parse_tiles, plan_tiles
from engine.perception.pretrained.errors import PretrainedModelError

SSD_OUTPUT = "detection_out"


@dataclass(frozen=True)
class SsdSpec:
    """One shipped SSD person detector: its ``network`` (the Open Model Zoo name in ``engine.perception.pretrained``),
    the
    ``person_label`` its rows carry, and its defaults: ``min_score``, and for ``tiles="auto"`` the tile side
    (``tile_scale`` × the input) and the frame size that starts tiling (``min_ratio`` × the input)."""

    name: str
    network: str
    person_label: int
    min_score: float
    tile_scale: float
    min_ratio: float
    summary: str


SSD_DETECTORS: dict[str, SsdSpec] = {spec.name: spec for spec in (
    SsdSpec("retail-0013", "person-detection-retail-0013", 1, 0.5, 1.5, 3.0,
            "OpenVINO person-detection-retail-0013: SSD, 544×320, indoor and retail scenes"),
    SsdSpec("adas-0002", "pedestrian-detection-adas-0002", 1, 0.5, 1.5, 2.5,
            "OpenVINO pedestrian-detection-adas-0002: SSD, 672×384, street scenes from a car"),
    SsdSpec("person-0200", "person-detection-0200", 0, 0.4, 2.0, 5.0,
            "OpenVINO person-detection-0200: SSD, 256×256"),
)}


def decode_ssd(output: np.ndarray, region: Region, frame_size: tuple[int, int], person_label: int,
               min_score: float, source: str = "the network") -> tuple[np.ndarray, np.ndarray]:
    """(boxes x, y, w, h in frame pixels [N, 4], clipped to the frame; scores [N]) from a ``detection_out``
    ``[1, 1, K, 7]`` of one pass over ``region`` (x, y, w, h) of a frame ``frame_size`` (W, H): rows up to the
    first with image_id < 0, of label ``person_label``, scoring ≥ ``min_score``."""
    shape = list(np.shape(output))
    if len(shape) != 4 or shape[:2] != [1, 1] or shape[3] != 7:
        raise DetectorError(f"{source}: {SSD_OUTPUT} must be [1, 1, K, 7], got {shape}")
    rows = np.asarray(output, np.float32)[0, 0]
    ended = np.flatnonzero(rows[:, 0] < 0)
    if len(ended):
        rows = rows[: ended[0]]
    rows = rows[(np.rint(rows[:, 1]) == person_label) & (rows[:, 2] >= min_score)]
    x, y, w, h = region
    corners = rows[:, 3:7] * np.array([w, h, w, h], np.float32) + np.array([x, y, x, y], np.float32)
    boxes = np.concatenate([corners[:, :2], corners[:, 2:] - corners[:, :2]], axis=1)
    return clip_boxes(boxes, *frame_size), rows[:, 2].copy()


class OpenVinoSsdDetector:
    """One of the shipped OpenVINO SSD person detectors, by its short name (see the module docstring)."""

    def __init__(self, network: str = "retail-0013", *, min_score: float | None = None, nms_iou: float = 0.45,
                 tiles: str = "auto", tile_scale: float | None = None, min_ratio: float | None = None,
                 threads: int | None = None) -> None:
        spec = SSD_DETECTORS.get(network)
        if spec is None:
            raise DetectorError(f"no shipped OpenVINO detector is called {network!r}; use one of "
                                f"{sorted(SSD_DETECTORS)}")
        self.spec = spec
        self.name = spec.name
        min_score = spec.min_score if min_score is None else min_score
        tile_scale = spec.tile_scale if tile_scale is None else tile_scale
        min_ratio = spec.min_ratio if min_ratio is None else min_ratio
        if isinstance(min_score, bool) or not isinstance(min_score, int | float) or not 0 <= min_score <= 1:
            raise DetectorError(f"detector {self.name!r}: min_score must lie in [0, 1], got {min_score!r}")
        if isinstance(nms_iou, bool) or not isinstance(nms_iou, int | float) or not 0 < nms_iou <= 1:
            raise DetectorError(f"detector {self.name!r}: nms_iou must lie in (0, 1], got {nms_iou!r}")
        if isinstance(tile_scale, bool) or not isinstance(tile_scale, int | float) or not tile_scale > 0:
            raise DetectorError(f"detector {self.name!r}: tile_scale must be positive, got {tile_scale!r}")
        if isinstance(min_ratio, bool) or not isinstance(min_ratio, int | float) or not min_ratio >= 1:
            raise DetectorError(f"detector {self.name!r}: min_ratio must be at least 1, got {min_ratio!r}")
        try:
            self.tiles = parse_tiles(tiles) if isinstance(tiles, str) else parse_tiles(f"{tiles[0]}x{tiles[1]}")
        except (DetectorError, TypeError, IndexError) as exc:
            raise DetectorError(f"detector {self.name!r}: {exc}") from None
        self.min_score = float(min_score)
        self.nms_iou = float(nms_iou)
        self.tile_scale = float(tile_scale)
        self.min_ratio = float(min_ratio)
        from engine.perception.pretrained.runtime import device_of, load_shipped

        try:
            self.model, self.net = load_shipped(spec.network, threads=threads, device=device_of(None),
                                                dynamic_batch=False)
        except PretrainedModelError as exc:
            raise DetectorError(f"detector {self.name!r}: {exc}") from None
        self.threads = threads
        height, width = self.net.input_size
        self.input_size = (width, height)  # W, H

    def settings(self) -> dict[str, Any]:
        tiles = self.tiles if isinstance(self.tiles, str) else f"{self.tiles[0]}x{self.tiles[1]}"
        return {"name": self.name, "network": self.model.describe(), "xml_sha256": self.model.xml_sha256,
                "bin_sha256": self.model.bin_sha256, "input_size": list(self.input_size),
                "min_score": self.min_score, "nms_iou": self.nms_iou, "tiles": tiles, "tile_scale": self.tile_scale,
                "min_ratio": self.min_ratio, "person_label": self.spec.person_label}

    def reset(self) -> None:
        """Stateless: nothing to forget."""

    def regions(self, width: int, height: int) -> list[Region]:
        """The whole frame, then the tiles (``engine.perception.detection.tiles``)."""
        return [(0, 0, width, height), *plan_tiles(width, height, self.tiles, self.input_size,
                                                   min_ratio=self.min_ratio, scale=self.tile_scale)]

    def _infer(self, image: np.ndarray) -> np.ndarray:
        width, height = self.input_size
        shrink = image.shape[1] > width or image.shape[0] > height
        resized = cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)
        batch = resized.transpose(2, 0, 1)[None].astype(np.float32)
        try:
            return self.net.infer(batch)[SSD_OUTPUT]
        except PretrainedModelError as exc:
            raise DetectorError(f"detector {self.name!r}: {exc}") from None

    def detect(self, frame: np.ndarray) -> Detections:
        if frame.ndim != 3 or frame.shape[2] != 3:
            raise DetectorError(f"detector {self.name!r} needs BGR frames (H, W, 3), got shape {frame.shape}")
        height, width = frame.shape[:2]
        if height < 1 or width < 1:
            return Detections()
        found: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        for index, region in enumerate(self.regions(width, height)):
            x, y, w, h = region
            boxes, scores = decode_ssd(self._infer(frame[y : y + h, x : x + w]), region, (width, height),
                                       self.spec.person_label, self.min_score, self.model.name)
            cut = cut_by_tile(boxes, region, width, height) if index else np.zeros(len(boxes), bool)
            found.append((boxes, scores, np.full(len(boxes), index), cut))
        boxes, scores, passes, cut = (np.concatenate(parts) for parts in zip(*found, strict=True))
        return merge_passes(boxes, scores, passes, cut, self.nms_iou)
