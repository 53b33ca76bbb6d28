"""Colour constancy: estimate the scene's illuminant colour and divide it out (von Kries diagonal model).

Shades of grey (Finlayson & Trezzi 2004): the illuminant is the Minkowski ``p``-mean of the reference
pixels per channel, ``e_c = (mean I_c^p)^(1/p)`` (``p = 1`` is grey-world, ``p → ∞`` max-RGB; ``p = 6``
here). The per-channel gains ``g_c = ē / e_c`` (``ē`` the mean of the three) are clipped to
[:data:`GAIN_MIN`, :data:`GAIN_MAX`] so a scene dominated by one colour cannot repaint the person.

Reference pixels, best first: the whole scene (frame) when the caller gives it; else the crop's own
background (outside the silhouette, dilated); else the whole crop. Clipped (any channel ≥ 250) and
near-black (all channels < 8) pixels carry no illuminant information and are left out.

Black level (:func:`black_level`): a near-black percentile of the scene (or, without one, of the whole
crop, person included: a background alone often has no dark pixel at all) is subtracted first, so a hazy
or low-contrast video does not lift black clothes to grey and wash out every colour.

Exposure (:func:`exposure_gain`): one more global gain maps the reference's bright end to near white, so a
dim camera does not turn a white shirt grey (white-patch idea, on a high percentile rather than the max).
"""

from __future__ import annotations

import cv2
import numpy as np

MINKOWSKI_P = 6.0
GAIN_MIN, GAIN_MAX = 0.75, 1.33
MIN_REFERENCE_PIXELS = 64
SCENE_MAX_SIDE = 160
BLACK_PERCENTILE = 0.5
BLACK_MAX = 64.0
MAX_REFERENCE_PIXELS = 2048
WHITE_PERCENTILE = 98.0
WHITE_LEVEL = 245.0
EXPOSURE_MIN, EXPOSURE_MAX = 0.9, 1.5


def black_level(pixels_bgr: np.ndarray) -> np.ndarray:
    """Black point of the reference (0–255, the same for B, G, R): the smallest of its per-channel
    :data:`BLACK_PERCENTILE`-th percentiles, capped at :data:`BLACK_MAX` (one offset for all channels: a
    per-channel one would also shift hues, which is the illuminant's job). Haze, glare on the lens and
    lifted video blacks add this veil to every pixel; it is subtracted before the illuminant is estimated
    (``I − k``: the airlight term of the haze model ``I = J·t + A·(1 − t)``, taken as constant)."""
    px = np.asarray(pixels_bgr, np.float32).reshape(-1, 3)
    if len(px) < MIN_REFERENCE_PIXELS:
        return np.zeros(3, np.float32)
    rank = int(len(px) * BLACK_PERCENTILE / 100.0)
    low = float(np.partition(px, rank, axis=0)[rank].min())
    return np.full(3, min(low, BLACK_MAX), np.float32)


def shades_of_grey(pixels_bgr: np.ndarray, p: float = MINKOWSKI_P) -> np.ndarray:
    """Per-channel gains (B, G, R) that make the ``p``-mean of ``pixels_bgr`` (N×3, 0–255) grey."""
    px = np.asarray(pixels_bgr, np.float32).reshape(-1, 3)
    peak = px.max(axis=1)
    usable = (peak < 250) & (peak >= 8)
    if usable.sum() < MIN_REFERENCE_PIXELS:
        return np.ones(3, np.float32)
    px = px[usable] * (1.0 / 255.0)
    powered = px * px * px * px * px * px if p == 6.0 else np.power(px, p)
    e = np.power(powered.mean(axis=0), 1.0 / p)
    if not np.all(e > 1e-4):
        return np.ones(3, np.float32)
    gains = e.mean() / e
    return np.clip(gains, GAIN_MIN, GAIN_MAX).astype(np.float32)


def exposure_gain(pixels_bgr: np.ndarray, gains: np.ndarray) -> float:
    """A global gain that brings the reference's bright end (the :data:`WHITE_PERCENTILE`-th percentile of
    the colour-corrected max channel) to :data:`WHITE_LEVEL`, clipped to [:data:`EXPOSURE_MIN`,
    :data:`EXPOSURE_MAX`] (a white-patch exposure estimate; dim cameras turn white shirts grey)."""
    px = np.asarray(pixels_bgr, np.float32).reshape(-1, 3)
    if len(px) < MIN_REFERENCE_PIXELS:
        return 1.0
    peaks = (px * gains[None, :]).max(axis=1)
    rank = min(len(peaks) - 1, int(len(peaks) * WHITE_PERCENTILE / 100.0))
    bright = float(np.partition(peaks, rank)[rank])
    if bright <= 1.0:
        return 1.0
    return float(np.clip(WHITE_LEVEL / bright, EXPOSURE_MIN, EXPOSURE_MAX))


def reference_pixels(crop_bgr: np.ndarray, person: np.ndarray, scene_bgr: np.ndarray | None) -> np.ndarray:
    """The pixels the illuminant is estimated from (N×3 uint8): scene, else crop background, else crop;
    at most :data:`MAX_REFERENCE_PIXELS` of them (an even stride)."""
    px = _reference(crop_bgr, person, scene_bgr)
    step = -(-len(px) // MAX_REFERENCE_PIXELS)
    return px[::step]


def scene_thumbnail(scene_bgr: np.ndarray) -> np.ndarray:
    """The scene as colour constancy reads it: shrunk (area averaging) so its longer side is at most
    :data:`SCENE_MAX_SIDE`; a thumbnail passes unchanged, so ingest can keep one per frame instead of the frame."""
    h, w = scene_bgr.shape[:2]
    scale = min(1.0, SCENE_MAX_SIDE / max(h, w))
    if scale >= 1.0:
        return scene_bgr
    size = (max(1, int(w * scale)), max(1, int(h * scale)))
    return cv2.resize(scene_bgr, size, interpolation=cv2.INTER_AREA)


def _reference(crop_bgr: np.ndarray, person: np.ndarray, scene_bgr: np.ndarray | None) -> np.ndarray:
    if scene_bgr is not None:
        return scene_thumbnail(scene_bgr).reshape(-1, 3)
    h, w = person.shape
    k = max(1, int(round(min(h, w) * 0.06))) | 1
    grown = cv2.dilate(person.astype(np.uint8), np.ones((k, k), np.uint8)) > 0
    background = crop_bgr[~grown]
    if len(background) >= max(MIN_REFERENCE_PIXELS, 0.1 * h * w):
        return background
    return crop_bgr.reshape(-1, 3)


def apply_gains(image_bgr: np.ndarray, gains: np.ndarray, black: np.ndarray | None = None) -> np.ndarray:
    """``(image_bgr − black) · gains`` per channel (``image_bgr`` uint8), as float32 BGR in [0, 1]."""
    out = image_bgr.astype(np.float32)
    if black is not None:
        out -= black.astype(np.float32)
    out *= gains.astype(np.float32) / 255.0
    return np.clip(out, 0.0, 1.0, out=out)
