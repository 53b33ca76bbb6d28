"""Tiles of a large frame for a detector with a small input, and the merging of what the passes find.

A network with a 416-pixel input sees a 1920×1080 frame shrunk 4.6 times: a person 60 px tall becomes 13 px,
below what it finds. Tiling runs it on overlapping parts of the frame as well, each shrunk far less.

Which tiles (``plan_tiles``), by the ``tiles`` setting:

- ``"off"``: none, the whole frame only;
- ``"RxC"`` (e.g. ``"2x3"``): R rows × C columns of equal tiles spread over the frame so that neighbours
  overlap by at least ``overlap`` (20 %) of a tile;
- ``"auto"``: none while the frame's long side is at most ``min_ratio`` (3.5) × the network input (at 416: up
  to 1456 px, so 720p runs whole at full speed); above that, tiles about ``scale`` (1.0) × the input on a
  side: C = ⌈(W − o·T) / ((1 − o)·T)⌉ columns and likewise R rows for a tile side T and overlap o, then spread
  as above (at input 416 a 1920×1080 frame gets 3 × 6 tiles). The threshold trades speed for small people:
  a 720p frame shrinks 3× at 416 (a 90-px person stays findable), a 1080p frame 4.6× (a crowded street's
  50-px people vanish without tiles). Scale 1.0 because on shrunk labelled frames YOLOX-Nano lost most people
  under about 50 network pixels tall: a tile must not shrink them further (``docs/real-footage.md``).
  A network with a non-square input (W × H, e.g. the shipped OpenVINO SSDs fed a plain resize) passes
  ``(W, H)``: tiles are planned when the frame is over ``min_ratio`` × the input along either side, with tile
  sides of ``scale`` × W across and ``scale`` × H down (a square input gives the rule above).

The whole frame is always run too (people too big for a tile). Merging (``merge_passes``): a box that touches a
tile's inner edge (an edge that is not the frame's; within 3 % of the tile's side) is *cut*; a cut box mostly
covered (``covered``, 0.7, of its area) by an uncut box of the whole frame or of another tile is dropped, and so
is any tile box mostly covered by a whole-frame box at least twice its size (a part of a person the whole frame
found whole: a head, an upper body); two cut boxes of different tiles that overlap and share at least ``join``
(0.6) of the shorter one's extent across the cut are joined into their union (one person split by a tile edge);
then greedy non-maximum suppression over everything.
"""

from __future__ import annotations

import math
import re

import numpy as np

from engine.kernel.boxes import coverage_matrix
from engine.perception.detection.detectors import Detections, suppress
from engine.perception.detection.errors import DetectorError

TILE_OVERLAP = 0.2
TILE_MIN_RATIO = 3.5
TILE_SCALE = 1.0
EDGE_MARGIN = 0.03  # of the tile's side: a box this close to a tile's inner edge is cut by it
COVERED = 0.7
JOIN = 0.6

Region = tuple[int, int, int, int]  # x, y, w, h in frame pixels


MAX_TILES_PER_SIDE = 16


def parse_tiles(text: str) -> str | tuple[int, int]:
    """``"auto"`` or ``"off"`` as they are, ``"RxC"`` → (rows, columns); anything else is a named error."""
    value = (text or "").strip().lower()
    if value in ("auto", "off"):
        return value
    match = re.fullmatch(r"(\d+)\s*[x×]\s*(\d+)", value)
    if not match or 0 in (int(match.group(1)), int(match.group(2))):
        raise DetectorError(f"tiles must be auto, off or ROWSxCOLUMNS (e.g. 2x3), got {text!r}")
    rows, columns = int(match.group(1)), int(match.group(2))
    if max(rows, columns) > MAX_TILES_PER_SIDE:  # each tile is a detector run: 99999x99999 would never end
        raise DetectorError(f"tiles {text!r}: at most {MAX_TILES_PER_SIDE} rows and {MAX_TILES_PER_SIDE} columns")
    return rows, columns


def _spread(length: int, count: int, overlap: float) -> list[tuple[int, int]]:
    """(start, size) of ``count`` equal spans covering ``length`` with neighbours overlapping ≥ ``overlap``."""
    if count == 1:
        return [(0, length)]
    size = min(length, math.ceil(length / (count - (count - 1) * overlap)))
    starts = np.linspace(0, length - size, count).round().astype(int)
    return [(int(start), size) for start in starts]


def plan_tiles(width: int, height: int, tiles: str | tuple[int, int], input_size: int | tuple[int, int],
               overlap: float = TILE_OVERLAP, min_ratio: float = TILE_MIN_RATIO,
               scale: float = TILE_SCALE) -> list[Region]:
    """Tiles (x, y, w, h) of a ``width`` × ``height`` frame, by the rule of the module docstring; [] for none.
    ``input_size``: the network's square input side, or its (W, H)."""
    if tiles == "off":
        return []
    if tiles == "auto":
        in_w, in_h = (input_size, input_size) if isinstance(input_size, int | float) else input_size
        if width <= min_ratio * in_w and height <= min_ratio * in_h:
            return []
        side_w, side_h = scale * in_w, scale * in_h
        columns = max(1, math.ceil((width - overlap * side_w) / ((1 - overlap) * side_w)))
        rows = max(1, math.ceil((height - overlap * side_h) / ((1 - overlap) * side_h)))
    else:
        rows, columns = tiles
    if rows == columns == 1:
        return []
    return [(x, y, w, h) for y, h in _spread(height, rows, overlap) for x, w in _spread(width, columns, overlap)]


def cut_by_tile(boxes: np.ndarray, region: Region, width: int, height: int,
                margin: float = EDGE_MARGIN) -> np.ndarray:
    """Which boxes (x, y, w, h, frame pixels) come within ``margin`` × the tile's side of an edge of ``region``
    that lies inside the frame."""
    x, y, w, h = region
    near_x, near_y = max(2.0, margin * w), max(2.0, margin * h)
    cut = np.zeros(len(boxes), bool)
    if x > 0:
        cut |= boxes[:, 0] <= x + near_x
    if y > 0:
        cut |= boxes[:, 1] <= y + near_y
    if x + w < width:
        cut |= boxes[:, 0] + boxes[:, 2] >= x + w - near_x
    if y + h < height:
        cut |= boxes[:, 1] + boxes[:, 3] >= y + h - near_y
    return cut


def _pieces_of_one(a: np.ndarray, b: np.ndarray, join: float) -> bool:
    """Two boxes that overlap, and along one axis share at least ``join`` of the shorter one's extent."""
    shared = [min(a[k] + a[k + 2], b[k] + b[k + 2]) - max(a[k], b[k]) for k in (0, 1)]
    ratios = [shared[k] / max(min(a[k + 2], b[k + 2]), 1e-6) for k in (0, 1)]
    return min(shared) > 0 and max(ratios) >= join


def merge_passes(boxes: np.ndarray, scores: np.ndarray, passes: np.ndarray, cut: np.ndarray, nms_iou: float,
                 covered: float = COVERED, join: float = JOIN) -> Detections:
    """One set of boxes from several passes: ``passes`` [N] says which pass (0 = whole frame, k = tile k) found
    each box, ``cut`` [N] whether its tile's inner edge cuts it (module docstring)."""
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    scores = np.asarray(scores, np.float32).reshape(-1)
    passes = np.asarray(passes).reshape(-1)
    cut = np.asarray(cut, bool).reshape(-1)
    if not len(boxes):
        return Detections()
    whole = ~cut
    keep = np.ones(len(boxes), bool)
    if cut.any() and whole.any():
        inside = coverage_matrix(boxes[cut], boxes[whole])
        other = passes[cut][:, None] != passes[whole][None, :]
        keep[np.flatnonzero(cut)[((inside >= covered) & other).any(axis=1)]] = False
    tiled, first = np.flatnonzero(passes != 0), np.flatnonzero(passes == 0)
    if len(tiled) and len(first):
        inside = coverage_matrix(boxes[tiled], boxes[first])
        bigger = (boxes[first, 2] * boxes[first, 3])[None, :] >= 2 * (boxes[tiled, 2] * boxes[tiled, 3])[:, None]
        keep[tiled[((inside >= covered) & bigger).any(axis=1)]] = False
    pieces = np.flatnonzero(cut & keep)
    boxes, scores = boxes.copy(), scores.copy()
    if len(pieces) > 1:
        for i, a in enumerate(pieces):
            if not keep[a]:
                continue
            for j in range(i + 1, len(pieces)):
                b = pieces[j]
                if keep[b] and passes[a] != passes[b] and _pieces_of_one(boxes[a], boxes[b], join):
                    x1, y1 = np.minimum(boxes[a, :2], boxes[b, :2])
                    x2, y2 = np.maximum(boxes[a, :2] + boxes[a, 2:], boxes[b, :2] + boxes[b, 2:])
                    boxes[a] = (x1, y1, x2 - x1, y2 - y1)
                    scores[a] = max(scores[a], scores[b])
                    keep[b] = False
    return suppress(boxes[keep], scores[keep], nms_iou)
