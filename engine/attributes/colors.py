"""Naming the colour of a region: soft distances in CIELAB to named colour prototypes.

Each colour name has a few prototypes (sRGB exemplars of the name: light, mid and dark shades, common
variants such as navy for blue or tan for beige, and greyish variants — faded denim, dusty pink — since
real video shows clothes at far lower chroma than their dye) converted once to CIELAB (D65, OpenCV's float
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

import cv2
import numpy as np

from engine.ontology import COLORS, ONTOLOGY

LIGHTNESS_WEIGHT = 1.0
SIGMA = 9.0
FLOOR = 0.01
FULL_PIXELS = 60
MAX_PIXELS = 384

RGB = tuple[int, int, int]

GARMENT_PROTOTYPES: dict[str, tuple[RGB, ...]] = {
    "black": ((12, 12, 12), (32, 32, 34), (45, 42, 48)),
    "white": ((252, 252, 252), (236, 236, 232), (218, 220, 224)),
    "gray": ((64, 64, 66), (100, 100, 102), (138, 138, 138), (172, 172, 172)),
    "red": ((200, 30, 40), (150, 24, 32), (110, 18, 28), (230, 64, 60)),
    "orange": ((245, 130, 30), (255, 165, 72), (210, 104, 30)),
    "yellow": ((245, 210, 40), (255, 234, 110), (205, 175, 40)),
    "green": ((40, 140, 62), (24, 90, 44), (120, 190, 100), (100, 120, 50), (84, 108, 88), (50, 84, 76)),
    "blue": ((35, 80, 180), (25, 40, 100), (110, 160, 225), (70, 100, 150), (20, 28, 68), (96, 106, 132),
             (140, 152, 178), (48, 56, 80)),
    "purple": ((115, 50, 160), (75, 34, 110), (170, 120, 200), (112, 96, 128)),
    "pink": ((245, 150, 190), (230, 100, 150), (250, 196, 206), (204, 164, 174)),
    "brown": ((115, 70, 40), (80, 50, 30), (150, 104, 64), (58, 40, 28)),
    "beige": ((215, 195, 150), (195, 175, 135), (236, 222, 192)),
}

HAIR_PROTOTYPES: dict[str, tuple[RGB, ...]] = {
    "black": ((18, 16, 16), (38, 34, 32), (54, 50, 50)),
    "brown": ((100, 62, 34), (70, 45, 30), (130, 90, 60), (88, 70, 56)),
    "blonde": ((226, 192, 118), (200, 165, 100), (240, 222, 162), (178, 150, 96)),
    "red": ((176, 72, 32), (145, 55, 30), (205, 105, 55)),
    "gray": ((150, 150, 148), (115, 115, 115), (186, 184, 180)),
    "white": ((238, 238, 234), (216, 216, 212)),
}


def lab_of_rgb(colors: np.ndarray) -> np.ndarray:
    """CIELAB (OpenCV float: L 0–100) of N×3 sRGB values in 0–255."""
    rgb = np.asarray(colors, np.float32).reshape(1, -1, 3) / 255.0
    return cv2.cvtColor(rgb, cv2.COLOR_RGB2Lab).reshape(-1, 3)


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
