"""Naming the colour of a region: soft distances in CIELAB to named colour prototypes.

Each colour name has a few prototypes (sRGB exemplars of the name, :mod:`engine.kernel.colour_names`, the table the
world's wide palette paints from too) converted once to CIELAB (D65, OpenCV's float
transform: ``L`` in 0–100). A pixel's distance to a name is its distance to that name's nearest prototype,

    d²(x, c) = min_k [ (w_L ΔL)² + Δa² + Δb² ],       w_L = :data:`LIGHTNESS_WEIGHT`

(``w_L = 1`` is the CIE76 ΔE; a smaller weight would discount shading, but on the synthetic world it
confused black with grey more than it helped), and the pixel's probability of each
name is a softmax of ``−d² / 2σ²``. A region's distribution is the mean over its pixels (the share of the
region each name explains), mixed with a small uniform floor :data:`FLOOR` so no name is impossible.
Its confidence is the top probability times the pixel coverage ``min(1, n / FULL_PIXELS)``. Regions of
more than :data:`MAX_PIXELS` pixels are read on an evenly strided subset of that size (deterministic).

Low chroma separates black / gray / white by lightness alone; hue and lightness separate red / orange /
brown / pink and yellow / beige. :data:`GARMENT_PROTOTYPES` name the 12 ontology colours (tops, bottoms,
hats, bags); :data:`HAIR_PROTOTYPES` name the 6 hair colours.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.kernel.colour_names import GARMENT_PROTOTYPES, HAIR_PROTOTYPES, RGB, lab_of_rgb
from engine.kernel.ontology import COLORS, ONTOLOGY

LIGHTNESS_WEIGHT = 1.0
SIGMA = 9.0
FLOOR = 0.01
FULL_PIXELS = 60
MAX_PIXELS = 384


@dataclass(frozen=True)
class ColorReading:
    """One region's colour evidence: name → probability (sums to 1), confidence in [0, 1], pixels used."""

    probabilities: dict[str, float]
    confidence: float
    pixels: int

    @property
    def best(self) -> str:
        return max(self.probabilities, key=self.probabilities.__getitem__)


class ColorNamer:
    """Soft naming of CIELAB pixels against a table of named sRGB prototypes."""

    def __init__(self, prototypes: dict[str, tuple[RGB, ...]], names: tuple[str, ...] | None = None,
                 sigma: float = SIGMA, lightness_weight: float = LIGHTNESS_WEIGHT):
        self.names = tuple(names if names is not None else prototypes)
        missing = [n for n in self.names if not prototypes.get(n)]
        if missing:
            raise ValueError(f"colour names without prototypes: {missing}")
        rows, owners = [], []
        for index, name in enumerate(self.names):
            rows.extend(prototypes[name])
            owners.extend([index] * len(prototypes[name]))
        self._weights = np.array([lightness_weight, 1.0, 1.0], np.float32)
        self._protos = lab_of_rgb(np.array(rows)) * self._weights
        self._proto_norms = (self._protos ** 2).sum(axis=1)
        self._starts = np.flatnonzero(np.r_[True, np.diff(owners) != 0])
        self._inv_two_sigma2 = 1.0 / (2.0 * sigma * sigma)

    def pixel_probabilities(self, lab: np.ndarray) -> np.ndarray:
        """N×K probabilities of the K names for N CIELAB pixels (rows sum to 1)."""
        x = np.asarray(lab, np.float32).reshape(-1, 3) * self._weights
        d2 = (x * x).sum(axis=1, keepdims=True) - 2.0 * (x @ self._protos.T) + self._proto_norms[None, :]
        per_name = np.minimum.reduceat(d2, self._starts, axis=1)
        logits = -(per_name - per_name.min(axis=1, keepdims=True)) * self._inv_two_sigma2
        p = np.exp(logits)
        return p / p.sum(axis=1, keepdims=True)

    def read(self, lab: np.ndarray) -> ColorReading:
        """The colour evidence of a region's CIELAB pixels (uniform with confidence 0 when there are none)."""
        lab = np.asarray(lab, np.float32).reshape(-1, 3)
        k = len(self.names)
        if len(lab) == 0:
            return ColorReading({n: 1.0 / k for n in self.names}, 0.0, 0)
        step = -(-len(lab) // MAX_PIXELS)
        mean = self.pixel_probabilities(lab[::step]).mean(axis=0, dtype=np.float64)
        mean = (1.0 - FLOOR) * mean / mean.sum() + FLOOR / k
        mean = mean / mean.sum()
        probs = {n: float(p) for n, p in zip(self.names, mean, strict=True)}
        coverage = min(1.0, len(lab) / FULL_PIXELS)
        return ColorReading(probs, float(coverage * mean.max()), int(len(lab)))


GARMENT_NAMER = ColorNamer(GARMENT_PROTOTYPES, COLORS)
HAIR_NAMER = ColorNamer(HAIR_PROTOTYPES, ONTOLOGY.attributes["hair_color"])
