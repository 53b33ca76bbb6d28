"""A person's look: appearance details that are not attributes (skin, hair and garment shades, beard, which
hand carries) but must stay fixed for one person and one outfit; ``make_look`` draws them from the
attributes and the person's and outfit's random streams.

Palettes (how a colour name becomes a shade): ``reference`` paints each name as one reference colour with a
small jitter (:func:`engine.lab.world.modalities.jitter_color`); ``wide`` paints any shade the pixel reader would
give that name (:mod:`engine.kernel.colour_names`: one of the name's prototypes, moved by :data:`WIDE_SPREAD` ΔE per
CIELAB axis, kept only if it still reads as the name), so the world has navy, olive or faded denim as real
clothes do (``docs/training-notes.md``, "A wide palette").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.kernel.colour_names import GARMENT_REGIONS, HAIR_REGIONS
from engine.lab.world.identities import pick
from engine.lab.world.modalities import COLOR_RGB, HAIR_RGB, SKIN_RGB, jitter_color, shade

_SHOE_COLORS = {
    "sneakers": {"white": 0.34, "black": 0.24, "gray": 0.14, "blue": 0.1, "red": 0.08, "pink": 0.05, "green": 0.05},
    "boots": {"black": 0.45, "brown": 0.4, "beige": 0.15},
    "sandals": {"brown": 0.45, "black": 0.3, "beige": 0.25},
    "leather_shoes": {"black": 0.6, "brown": 0.4},
    "high_heels": {"black": 0.4, "red": 0.25, "beige": 0.2, "white": 0.1, "pink": 0.05},
    "slippers": {"pink": 0.25, "gray": 0.25, "blue": 0.2, "white": 0.15, "brown": 0.15},
}


PALETTES: tuple[str, ...] = ("reference", "wide")
WIDE_SPREAD = 8.0


def _mix(a: tuple[float, ...], b: tuple[float, ...], t: float) -> tuple[float, ...]:
    return tuple(x * (1 - t) + y * t for x, y in zip(a, b, strict=True))



def _lum(rgb: tuple[float, ...]) -> float:
    return 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]



@dataclass(frozen=True)
class Look:
    """Appearance details that are not attributes but must stay fixed for a person (and an outfit)."""

    skin_rgb: tuple[float, ...]
    hair_rgb: tuple[float, ...]
    lips_rgb: tuple[float, ...]
    beard: bool
    body_heat: float
    shoulder_k: float
    head_k: float
    hair_part: int
    top_rgb: tuple[float, ...]
    bottom_rgb: tuple[float, ...]
    shoe_rgb: tuple[float, ...]
    sole_rgb: tuple[float, ...]
    hat_rgb: tuple[float, ...] | None
    carry_rgb: tuple[float, ...] | None
    inner_rgb: tuple[float, ...]
    accent_rgb: tuple[float, ...]
    stitch_rgb: tuple[float, ...]
    umbrella_open: bool
    carry_side: int
    pompom: bool
    belt: bool



def make_look(attrs: dict[str, str], person_rng: np.random.Generator, outfit_rng: np.random.Generator,
              palette: str = "reference") -> Look:
    """Draw a look: body details from ``person_rng`` (same for all outfits), clothing details from ``outfit_rng``;
    hair and garment shades from ``palette`` (one of :data:`PALETTES`)."""
    if palette not in PALETTES:
        raise ValueError(f"palette {palette!r} is not one of {list(PALETTES)}")
    wide = palette == "wide"

    def garment(name: str, rng: np.random.Generator) -> tuple[float, ...]:
        return GARMENT_REGIONS.sample(name, rng, WIDE_SPREAD) if wide else jitter_color(COLOR_RGB[name], rng)

    skin = jitter_color(SKIN_RGB[attrs["skin_color"]], person_rng, 0.05)
    hair = (HAIR_REGIONS.sample(attrs["hair_color"], person_rng, WIDE_SPREAD) if wide
            else jitter_color(HAIR_RGB[attrs["hair_color"]], person_rng, 0.06))
    female = attrs["gender"] == "female"
    lips = _mix(skin, (196.0, 62.0, 86.0), 0.55) if female else shade(skin, 0.78)
    beard = (not female) and attrs["age"] != "child" and person_rng.random() < 0.28
    body_heat = float(person_rng.uniform(-8, 8))
    shoulder_k = float(person_rng.uniform(0.96, 1.04))
    head_k = float(person_rng.uniform(0.97, 1.03))
    hair_part = 1 if person_rng.random() < 0.5 else -1

    r = outfit_rng
    top = garment(attrs["top_color"], r)
    bottom = garment(attrs["bottom_color"], r)
    shoe = garment(pick(r, _SHOE_COLORS[attrs["shoe_type"]]), r)
    if attrs["shoe_type"] == "sneakers":
        sole = (238.0, 238.0, 234.0) if r.random() < 0.9 else (186.0, 146.0, 96.0)
    else:
        sole = shade(shoe, 0.45) if _lum(shoe) > 60 else (58.0, 54.0, 50.0)
    hat = garment(attrs["hat_color"], r) if "hat_color" in attrs else None
    carry = garment(attrs["carrying_color"], r) if "carrying_color" in attrs else None
    inner = (44.0, 44.0, 48.0) if _lum(top) > 140 else (228.0, 228.0, 224.0)
    if attrs["top_type"] == "shirt":
        accent = (236.0, 236.0, 230.0) if _lum(top) < 150 else (60.0, 60.0, 64.0)
    else:
        accent = (70.0, 46.0, 30.0) if _lum(top) > 90 else (170.0, 170.0, 170.0)
    if attrs["bottom_type"] == "jeans":
        stitch = (206.0, 156.0, 82.0)
    else:
        stitch = shade(bottom, 1.4) if _lum(bottom) < 60 else shade(bottom, 0.7)
    return Look(skin, hair, lips, beard, body_heat, shoulder_k, head_k, hair_part, top, bottom, shoe, sole, hat,
                carry, inner, accent, stitch, umbrella_open=bool(r.random() < 0.35),
                carry_side=1 if r.random() < 0.5 else -1, pompom=bool(r.random() < 0.45),
                belt=bool(r.random() < 0.5))
