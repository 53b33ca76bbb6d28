"""What each colour name covers: sRGB prototypes per name, shared by the pixel reader and the world.

Each garment and hair colour name has a few prototypes (light, mid and dark shades, common variants such as
navy for blue or olive for green, and greyish variants such as faded denim or dusty pink, since real video
shows clothes at far lower chroma than their dye). The pixel reader (``engine.perception.attributes.colors``) names a
pixel by its nearest prototype in CIELAB; the world's ``wide`` palette (``engine.lab.world.look``) paints a
garment of a name in any shade whose nearest prototype belongs to that name, so the model learns the same
boundaries the reader uses (``docs/training-notes.md``, "A wide palette").
"""

from __future__ import annotations

import cv2
import numpy as np

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


def rgb_of_lab(lab: np.ndarray) -> np.ndarray:
    """sRGB (0–255 floats, clipped) of N×3 CIELAB values (OpenCV float: L 0–100)."""
    rgb = cv2.cvtColor(np.asarray(lab, np.float32).reshape(1, -1, 3), cv2.COLOR_Lab2RGB).reshape(-1, 3)
    return np.clip(rgb * 255.0, 0.0, 255.0)


class NameRegions:
    """The colour names of one prototype table as regions of CIELAB: a colour belongs to its nearest prototype's
    name (CIE76 distance)."""

    def __init__(self, prototypes: dict[str, tuple[RGB, ...]]):
        self.prototypes = prototypes
        self._owners = [name for name, protos in prototypes.items() for _ in protos]
        self._table = lab_of_rgb(np.array([p for protos in prototypes.values() for p in protos]))

    def names_of(self, colors: np.ndarray) -> list[str]:
        """The name of each N×3 sRGB colour (0–255)."""
        lab = lab_of_rgb(colors)
        d2 = ((lab[:, None, :] - self._table[None, :, :]) ** 2).sum(axis=2)
        return [self._owners[i] for i in d2.argmin(axis=1)]

    def sample(self, name: str, rng: np.random.Generator, spread: float, tries: int = 16) -> tuple[float, ...]:
        """A shade of ``name``: one of its prototypes at random, moved by a normal step of ``spread`` ΔE per
        CIELAB axis; the first of ``tries`` such shades that still belongs to ``name`` (the prototype if none)."""
        protos = self.prototypes.get(name)
        if not protos:
            raise ValueError(f"colour {name!r} has no prototypes; known: {sorted(self.prototypes)}")
        base = np.array(protos[int(rng.integers(len(protos)))], np.float64)
        lab = lab_of_rgb(base[None, :])[0] + rng.normal(0.0, spread, (tries, 3))
        shades = rgb_of_lab(lab)
        for shade, owner in zip(shades, self.names_of(shades), strict=True):
            if owner == name:
                return tuple(float(v) for v in shade)
        return tuple(float(v) for v in base)


GARMENT_REGIONS = NameRegions(GARMENT_PROTOTYPES)
HAIR_REGIONS = NameRegions(HAIR_PROTOTYPES)
