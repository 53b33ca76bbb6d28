"""Geometry of axis-aligned boxes (x, y, w, h) in pixels, shared by detectors, tiling and carried objects."""

from __future__ import annotations

import numpy as np


def intersection_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Area of the intersection of every box in ``a`` [N, 4] with every box in ``b`` [M, 4]: [N, M]."""
    x1 = np.maximum(a[:, None, 0], b[None, :, 0])
    y1 = np.maximum(a[:, None, 1], b[None, :, 1])
    x2 = np.minimum(a[:, None, 0] + a[:, None, 2], b[None, :, 0] + b[None, :, 2])
    y2 = np.minimum(a[:, None, 1] + a[:, None, 3], b[None, :, 1] + b[None, :, 3])
    return np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)


def iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Intersection over union of every box in ``a`` [N, 4] with every box in ``b`` [M, 4]."""
    inter = intersection_matrix(a, b)
    union = (a[:, 2] * a[:, 3])[:, None] + (b[:, 2] * b[:, 3])[None, :] - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def coverage_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Share of each box of ``a`` [N, 4] that lies inside each box of ``b`` [M, 4] (0 for boxes of no area)."""
    inter = intersection_matrix(a, b)
    area = (a[:, 2] * a[:, 3])[:, None]
    return np.where(area > 0, inter / np.where(area > 0, area, 1.0), 0.0)
