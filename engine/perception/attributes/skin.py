"""Skin pixels in YCrCb: a generic box rule narrowed to the person's own skin tone when the face shows it.

Generic rule (Chai & Ngan 1999): ``133 ≤ Cr ≤ 173`` and ``77 ≤ Cb ≤ 127`` (uint8 YCrCb), plus ``Y ≥``
:data:`Y_MIN` so black pixels with noisy chroma do not pass, and ``Cr − Cb ≥`` :data:`MIN_CR_MINUS_CB` (skin
of every tone is clearly redder than blue; the box's corner near grey is where washed-out greys and
whites of a hazy video fall). That box also holds beige, tan and brown
fabrics, so when at least :data:`MIN_FACE_SHARE` of the face region passes it, the person's reference tone
is the median (Y, Cr, Cb) of those face pixels and a pixel is skin only within :data:`CHROMA_TOLERANCE` of
the reference chroma and between :data:`Y_RATIO` times its luma (shading changes luma far more than chroma).
"""

from __future__ import annotations

import numpy as np

CR_RANGE = (133, 173)
CB_RANGE = (77, 127)
Y_MIN = 30
MIN_CR_MINUS_CB = 15
MIN_FACE_SHARE = 0.3
MIN_FACE_PIXELS = 6
CHROMA_TOLERANCE = 11.0
Y_RATIO = (0.55, 1.6)


def skin_candidates(ycrcb: np.ndarray) -> np.ndarray:
    """The generic YCrCb skin rule on an ``H×W×3`` uint8 YCrCb image (boolean ``H×W``)."""
    y, cr, cb = ycrcb[..., 0], ycrcb[..., 1], ycrcb[..., 2]
    return ((cr >= CR_RANGE[0]) & (cr <= CR_RANGE[1]) & (cb >= CB_RANGE[0]) & (cb <= CB_RANGE[1])
            & (y >= Y_MIN) & (cr.astype(np.int16) - cb >= MIN_CR_MINUS_CB))


def skin_reference(ycrcb: np.ndarray, candidates: np.ndarray, face: np.ndarray) -> np.ndarray | None:
    """Median (Y, Cr, Cb) of the face's skin candidates, or ``None`` when the face shows too little skin."""
    in_face = candidates & face
    count = int(in_face.sum())
    if count < MIN_FACE_PIXELS or count < MIN_FACE_SHARE * max(1, int(face.sum())):
        return None
    return np.median(ycrcb[in_face].astype(np.float32), axis=0)


def skin_mask(ycrcb: np.ndarray, face: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """(skin mask, person reference tone or ``None``) for a uint8 YCrCb image and a face region mask."""
    candidates = skin_candidates(ycrcb)
    reference = skin_reference(ycrcb, candidates, face)
    if reference is None:
        return candidates, None
    px = ycrcb.astype(np.float32)
    close = (np.abs(px[..., 1] - reference[1]) <= CHROMA_TOLERANCE) & (
        np.abs(px[..., 2] - reference[2]) <= CHROMA_TOLERANCE)
    luma = (px[..., 0] >= Y_RATIO[0] * reference[0]) & (px[..., 0] <= Y_RATIO[1] * reference[0])
    return candidates & close & luma, reference
