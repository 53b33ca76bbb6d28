"""Body regions of a silhouette: head, hair, crown, torso, arms, legs and shoes as mask ∩ row band.

The bands are fixed fractions of a *head unit* ``u`` measured from the top of the head, after the usual
figure canon: an adult is 7.4 heads tall, the chin is at 1 u, the shoulder line at ≈ 1.3–1.5 u, the crotch
at ≈ 3.8 u, the knee at ≈ 5.5 u and the ankle at ≈ 7.2 u (:data:`BANDS`).

``u`` comes from the silhouette's vertical profile (row widths):

- shoulder width ``S``: the 90th percentile of row widths over the upper half (arms included, ≈ 2 u);
- top row ``t`` and bottom row ``b``: the first and last rows at least :data:`MIN_ROW_WIDTH` · ``S`` wide
  (a pole or a thin strip of scene stuck to the head does not count);
  the crop is a person box, so ``b`` is at least the crop's bottom row less :data:`BOX_BOTTOM_MARGIN`
  (segmentation loses dark legs and feet far more often than the box is loose);
- a whole figure has ``u = (b − t + 1) / 7.4``. A figure cut off by the crop's bottom edge (an upper body,
  a seated person behind a desk) is wide where it meets that edge: when the silhouette's mean width over the
  bottom :data:`CUT_ROWS` of the crop is at least :data:`CUT_WIDTH` · ``S`` (feet are far narrower), ``u``
  is the larger of that and ``S /`` :data:`SHOULDER_WIDTH_UNITS`. Bands past ``b`` are empty and their
  attributes get no evidence.

The face is the lower head band within :data:`FACE_HALF_WIDTH` · ``u`` of the head's centre column (a skin
reference when the person faces the camera). Arm bands keep only the lateral parts of the silhouette
(farther than :data:`ARM_OFFSET` · ``S`` from the torso's centre column) so sleeves are judged on arms, not
on the chest; the chest band keeps the central part (within :data:`CHEST_HALF_WIDTH` · ``S``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

ADULT_HEADS = 7.4
SHOULDER_WIDTH_UNITS = 2.1
MIN_ROW_WIDTH = 0.2
CUT_WIDTH = 0.55
CUT_ROWS = 0.03
BOX_BOTTOM_MARGIN = 0.03
ARM_OFFSET = 0.28
FACE_HALF_WIDTH = 0.25

#: Region → (start, end) in head units from the top of the head.
BANDS: dict[str, tuple[float, float]] = {
    "head": (0.0, 1.0),
    "hair": (0.0, 0.4),
    "crown": (0.08, 0.35),
    "head_lower": (0.45, 1.0),
    "top": (1.45, 3.5),
    "upper_arms": (1.5, 2.6),
    "forearms": (2.7, 3.6),
    "chest": (1.9, 3.0),
    "bottom": (3.9, 6.9),
    "thighs": (4.7, 5.3),
    "shins": (5.9, 6.8),
    "shoes": (7.0, 7.4),
}
LATERAL = ("upper_arms", "forearms")
CENTRAL = ("chest",)
CHEST_HALF_WIDTH = 0.2


@dataclass(frozen=True)
class BodyRegions:
    """Region masks (boolean, crop size) and the measured frame of the figure (rows, unit, centre)."""

    shape: tuple[int, int]
    top_row: int
    bottom_row: int
    unit: float
    center_x: float
    shoulder_width: float
    truncated: bool
    masks: dict[str, np.ndarray] = field(repr=False)

    def box(self, name: str) -> tuple[int, int, int, int] | None:
        """``(x, y, w, h)`` bounding box of a region, ``None`` when it is empty or unknown."""
        m = self.masks.get(name)
        return None if m is None else mask_box(m)

    def pixels(self, name: str) -> int:
        m = self.masks.get(name)
        return 0 if m is None else int(m.sum())


def mask_box(mask: np.ndarray) -> tuple[int, int, int, int] | None:
    """Bounding box ``(x, y, w, h)`` of a boolean mask, ``None`` when it is empty."""
    if not mask.any():
        return None
    rows = np.flatnonzero(mask.any(axis=1))
    cols = np.flatnonzero(mask.any(axis=0))
    return int(cols[0]), int(rows[0]), int(cols[-1] - cols[0] + 1), int(rows[-1] - rows[0] + 1)


def _first(values: np.ndarray) -> int | None:
    idx = np.flatnonzero(values)
    return int(idx[0]) if idx.size else None


def figure_frame(mask: np.ndarray, box_bottom: bool = True) -> tuple[int, int, float, float, float, bool] | None:
    """``(top, bottom, unit, centre_x, shoulder_width, truncated)`` of a boolean silhouette; ``None`` if empty.

    ``box_bottom``: the crop is a person box, so the figure reaches (nearly) its bottom edge even where the
    silhouette stops short (feet and dark legs are what segmentation loses most often).
    """
    h, _ = mask.shape
    widths = mask.sum(axis=1).astype(np.float64)
    if not widths.any():
        return None
    nonzero = np.flatnonzero(widths)
    first, last = int(nonzero[0]), int(nonzero[-1])
    shoulder = float(np.percentile(widths[first: first + max(1, (last - first + 1) // 2)], 90))
    active = widths >= max(1.0, MIN_ROW_WIDTH * shoulder)
    top = _first(active)
    bottom = h - 1 - _first(active[::-1])
    if box_bottom:
        bottom = max(bottom, h - 1 - int(BOX_BOTTOM_MARGIN * h))
    height = bottom - top + 1
    unit = height / ADULT_HEADS
    edge_rows = widths[max(top, h - max(1, int(round(CUT_ROWS * h)))):]
    truncated = bool(edge_rows.size) and float(edge_rows.mean()) >= CUT_WIDTH * shoulder
    if truncated:
        unit = max(unit, shoulder / SHOULDER_WIDTH_UNITS)
    band = mask[int(top + BANDS["top"][0] * unit): int(top + BANDS["top"][1] * unit) + 1]
    xs = np.nonzero(band if band.any() else mask)[1]
    center = float(np.median(xs))
    return top, bottom, float(unit), center, shoulder, truncated


def body_regions(mask: np.ndarray, box_bottom: bool = True) -> BodyRegions:
    """Regions of a boolean silhouette (all empty when the silhouette is empty); ``box_bottom`` as in
    :func:`figure_frame`."""
    h, w = mask.shape
    frame = figure_frame(mask, box_bottom)
    if frame is None:
        empty = {name: np.zeros((h, w), bool) for name in (*BANDS, "face")}
        return BodyRegions((h, w), 0, h - 1, h / ADULT_HEADS, (w - 1) / 2, 0.0, False, empty)
    top, bottom, unit, center, shoulder, truncated = frame
    xs = np.arange(w)
    lateral = np.abs(xs - center) > ARM_OFFSET * shoulder
    central = np.abs(xs - center) <= CHEST_HALF_WIDTH * shoulder
    masks: dict[str, np.ndarray] = {}
    for name, (start, end) in BANDS.items():
        r0 = max(top, int(round(top + start * unit)))
        r1 = min(bottom + 1, int(round(top + end * unit)))
        region = np.zeros((h, w), bool)
        if r1 > r0:
            region[r0:r1] = mask[r0:r1]
            if name in LATERAL:
                region[r0:r1] &= lateral[None, :]
            elif name in CENTRAL:
                region[r0:r1] &= central[None, :]
        masks[name] = region
    head = masks["head_lower"]
    head_cols = np.nonzero(head)[1]
    head_center = float(np.median(head_cols)) if head_cols.size else center
    half = max(1.0, FACE_HALF_WIDTH * unit)
    masks["face"] = head & (np.abs(xs - head_center) <= half)[None, :]
    return BodyRegions((h, w), top, bottom, unit, center, shoulder, truncated, masks)
