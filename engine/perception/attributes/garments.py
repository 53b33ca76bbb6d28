"""Garment cues that pixels allow: sleeve length and leg length from visible skin, and whether a hat is worn.

Lengths (canonical values of ``top_length`` and ``bottom_length``). With ``s`` the skin share of a band and
``σ(s) = 1 / (1 + exp(−(s − θ) / τ))`` (θ = :data:`SKIN_THRESHOLD`, τ = :data:`SKIN_SOFTNESS`):

- sleeves, from the upper arms ``s_u`` and forearms ``s_f``, each less the chest's skin share: sleeveless
  ``σ(s_u)``, short_sleeve ``(1 − σ(s_u)) σ(s_f)``, long_sleeve ``(1 − σ(s_u)) (1 − σ(s_f))``;
- legs, from the thighs just above the knee ``s_t`` and the shins ``s_s``: short ``σ(s_t)``, knee
  ``(1 − σ(s_t)) σ(s_s)``, long ``(1 − σ(s_t)) (1 − σ(s_s))``;

then mixed with a uniform floor and normalised; confidence = top probability × band coverage.

Hat: the crown (0.08–0.35 head units) is compared with the rest of the head's non-skin pixels (hair at the
sides and back). A logistic score rises with (a) the crown's share of colours hair never has (green, blue,
purple, pink) and (b) the CIELAB distance ΔE between crown and the rest of the head, and falls with (c) a
bare (skin) crown:

    logit = W_NONHAIR·nonhair + W_CONTRAST·σ((ΔE − ΔE₀)/ΔE_τ) − W_BARE·bare + BIAS.

The weights are a logistic-regression fit on the synthetic world (seed 5, 200 RGB HR renders; seed 11 held
out). It is a weak cue: hats in black, grey or beige over hair of the same tone look like hair, so hat
presence scores 72–77 % against the 67–70 % of always answering "none"; a width test for brims did not
separate either.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.perception.attributes.colors import GARMENT_NAMER
from engine.perception.attributes.regions import BodyRegions

SKIN_THRESHOLD = 0.3
SKIN_SOFTNESS = 0.08
LENGTH_FLOOR = 0.03
FULL_BAND_PIXELS = 24

NON_HAIR_COLORS = ("green", "blue", "purple", "pink")
W_NONHAIR, W_CONTRAST, W_BARE, BIAS = 1.5, 1.0, 0.6, -1.3
DELTA_E0, DELTA_E_SOFTNESS = 22.0, 6.0
MIN_CROWN_PIXELS = 6

#: Canonical values in the order of the formulas above (most skin first).
SLEEVE_ORDER = ("sleeveless", "short_sleeve", "long_sleeve")
LEG_ORDER = ("short", "knee", "long")


@dataclass(frozen=True)
class Reading:
    """Evidence for one attribute: value → probability (sums to 1) and a confidence in [0, 1]."""

    probabilities: dict[str, float]
    confidence: float


def _step(share: float) -> float:
    return 1.0 / (1.0 + math.exp(-(share - SKIN_THRESHOLD) / SKIN_SOFTNESS))


def _length(values: tuple[str, str, str], upper: float, lower: float, coverage: float) -> Reading:
    su, sl = _step(upper), _step(lower)
    raw = np.array([su, (1 - su) * sl, (1 - su) * (1 - sl)])
    p = (1 - LENGTH_FLOOR) * raw / raw.sum() + LENGTH_FLOOR / 3
    return Reading({v: float(x) for v, x in zip(values, p, strict=True)}, float(coverage * p.max()))


def _band(skin: np.ndarray, region: np.ndarray) -> tuple[float, int]:
    n = int(region.sum())
    return (float((skin & region).sum()) / n if n else 0.0), n


def length_reading(skin: np.ndarray, regions: BodyRegions, upper: str, lower: str,
                   values: tuple[str, str, str], baseline: str | None = None) -> Reading | None:
    """Length evidence from the skin shares of two bands (``None`` when either band is empty), less the skin
    share of a ``baseline`` band that is garment whatever the length (so a tan or brown garment that passes
    the skin rule everywhere does not read as bare arms)."""
    s_upper, n_upper = _band(skin, regions.masks[upper])
    s_lower, n_lower = _band(skin, regions.masks[lower])
    if n_upper == 0 or n_lower == 0:
        return None
    if baseline is not None:
        s_base, n_base = _band(skin, regions.masks[baseline])
        if n_base:
            s_upper, s_lower = max(0.0, s_upper - s_base), max(0.0, s_lower - s_base)
    coverage = min(1.0, n_upper / FULL_BAND_PIXELS) * min(1.0, n_lower / FULL_BAND_PIXELS)
    return _length(values, s_upper, s_lower, coverage)


def sleeve_reading(skin: np.ndarray, regions: BodyRegions) -> Reading | None:
    """``top_length`` evidence (sleeveless / short_sleeve / long_sleeve) from skin on the arms."""
    return length_reading(skin, regions, "upper_arms", "forearms", SLEEVE_ORDER, baseline="chest")


def leg_reading(skin: np.ndarray, regions: BodyRegions) -> Reading | None:
    """``bottom_length`` evidence (short / knee / long) from skin on the thighs and shins."""
    return length_reading(skin, regions, "thighs", "shins", LEG_ORDER)


def hat_probability(lab: np.ndarray, skin: np.ndarray, regions: BodyRegions,
                    inner: np.ndarray | None = None) -> tuple[float, float] | None:
    """(probability that a hat is worn, confidence) from the crown and the rest of the head; ``None`` when
    the crown is not visible. ``inner``: the silhouette without its edge pixels, if the caller has it."""
    crown = regions.masks["crown"]
    if inner is not None and (crown & inner).sum() >= MIN_CROWN_PIXELS:
        crown = crown & inner
    n_crown = int(crown.sum())
    if n_crown < MIN_CROWN_PIXELS:
        return None
    cloth = crown & ~skin
    bare = 1.0 - float(cloth.sum()) / n_crown
    rest = regions.masks["head_lower"] & ~skin & ~regions.masks["face"]
    crown_lab = lab[cloth] if cloth.any() else lab[crown]
    reading = GARMENT_NAMER.read(crown_lab)
    nonhair = sum(reading.probabilities[c] for c in NON_HAIR_COLORS)
    if rest.sum() >= MIN_CROWN_PIXELS:
        delta_e = float(np.linalg.norm(np.median(crown_lab, axis=0) - np.median(lab[rest], axis=0)))
        contrast = 1.0 / (1.0 + math.exp(-(delta_e - DELTA_E0) / DELTA_E_SOFTNESS))
    else:
        contrast = 0.5
    logit = W_NONHAIR * nonhair + W_CONTRAST * contrast - W_BARE * bare + BIAS
    p = 1.0 / (1.0 + math.exp(-logit))
    coverage = min(1.0, n_crown / FULL_BAND_PIXELS)
    return p, coverage * abs(2 * p - 1)
