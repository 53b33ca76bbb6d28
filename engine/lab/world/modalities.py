"""How one drawn figure becomes an RGB, infrared or sketch image, and the four resolution levels.

The figure code (``engine.lab.world.figure``) paints *materials* ("skin", "top", "shoe", …), never colours.
A modality is a table from material to paint (fill value, edge value) plus a finishing step:

- ``rgb``: named ontology colours with small per-outfit jitter, a darker edge, camera colour cast and
  lighting, sensor noise, occasional blur.
- ``ir``: thermal look (white-hot): skin warmest, clothing by fabric thickness only (no colour at all),
  cold dark scene, soft optics, sensor noise and column pattern noise; one grey channel.
- ``sketch``: a police artist's line drawing: white paper, every shape outlined in dark pencil, pencil
  shading only for hair and complexion, no background, no colour; one grey channel.

Grey modalities are drawn on one channel and returned replicated to three channels, so every image a
caller gets is ``H×W×3 uint8`` and IR/sketch channels are exactly equal.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

#: Resolution level → (height, width). Low levels are area-downsampled from HR and kept at native size.
RESOLUTIONS: dict[str, tuple[int, int]] = {"HR": (256, 128), "mild": (128, 64), "mid": (64, 32), "ultra": (32, 16)}

#: Reference RGB of each ontology colour name (garments, hats, bags).
COLOR_RGB: dict[str, tuple[int, int, int]] = {
    "black": (30, 30, 33), "white": (238, 238, 234), "gray": (128, 128, 130), "red": (200, 30, 38),
    "orange": (240, 124, 26), "yellow": (242, 208, 38), "green": (40, 142, 62), "blue": (34, 78, 180),
    "purple": (116, 52, 160), "pink": (244, 150, 188), "brown": (112, 70, 38), "beige": (216, 196, 152),
}
SKIN_RGB: dict[str, tuple[int, int, int]] = {
    "light": (240, 202, 176), "medium": (198, 144, 102), "dark": (106, 68, 46)}
HAIR_RGB: dict[str, tuple[int, int, int]] = {
    "black": (24, 22, 22), "brown": (100, 62, 34), "blonde": (226, 192, 118), "red": (176, 72, 32),
    "gray": (150, 150, 148), "white": (236, 236, 232)}

#: Infrared temperature (0–255, white-hot) of each top type: thin fabric lets body heat through.
IR_TOP: dict[str, int] = {"t_shirt": 178, "shirt": 170, "blouse": 176, "sweater": 150, "hoodie": 146,
                          "jacket": 124, "coat": 116, "vest": 182, "dress": 172}
IR_BOTTOM: dict[str, int] = {"trousers": 148, "jeans": 142, "shorts": 166, "skirt": 160, "leggings": 172}
IR_CARRY: dict[str, int] = {"backpack": 96, "handbag": 100, "shoulder_bag": 100, "suitcase": 70,
                            "umbrella": 78, "plastic_bag": 112, "none": 90}


@dataclass(frozen=True)
class Paint:
    """What a material looks like: ``fill`` for areas, ``edge`` for outlines (``None`` = no outline)."""

    fill: tuple[float, ...]
    edge: tuple[float, ...] | None


def shade(rgb: tuple[float, ...], factor: float) -> tuple[float, ...]:
    """Scale a colour towards black (factor < 1) or white (factor > 1), staying in 0–255."""
    if factor <= 1.0:
        return tuple(max(0.0, c * factor) for c in rgb)
    return tuple(min(255.0, c + (255.0 - c) * (factor - 1.0)) for c in rgb)


def jitter_color(rgb: tuple[int, int, int], rng: np.random.Generator, amount: float = 0.08) -> tuple[float, ...]:
    """A small, name-preserving variation of a reference colour (brightness and per-channel)."""
    gain = 1.0 + float(rng.uniform(-amount, amount))
    offsets = rng.uniform(-7, 7, 3).tolist()
    return tuple(min(255.0, max(0.0, c * gain + o)) for c, o in zip(rgb, offsets, strict=True))


def _rgb_paint(rgb: tuple[float, ...], edge: float = 0.55) -> Paint:
    dark = sum(rgb) / 3 < 50
    return Paint(tuple(rgb), shade(rgb, 1.22) if dark else shade(rgb, edge))


def rgb_materials(attrs: dict[str, str], look) -> dict[str, Paint | None]:
    """Material table for RGB: colours from the attribute values, exact tints from the look."""
    skin, hair = look.skin_rgb, look.hair_rgb
    top, bottom, shoe = look.top_rgb, look.bottom_rgb, look.shoe_rgb
    hat = look.hat_rgb or (128.0, 128.0, 128.0)
    carry = look.carry_rgb or (90.0, 90.0, 90.0)
    dark_hair = sum(hair) / 3 < 70
    return {
        "skin": _rgb_paint(skin, 0.62), "skin_shade": Paint(shade(skin, 0.82), None),
        "skin_line": Paint(shade(skin, 0.6), None),
        "hair": Paint(hair, shade(hair, 1.2) if dark_hair else shade(hair, 0.6)),
        "hair_line": Paint(shade(hair, 1.15) if dark_hair else shade(hair, 0.8), None),
        "brow": Paint(shade(hair, 0.75) if not dark_hair else hair, None),
        "top": _rgb_paint(top), "top_shade": Paint(shade(top, 0.78), None),
        "top_line": Paint(shade(top, 1.45) if sum(top) / 3 < 50 else shade(top, 0.62), None),
        "top_accent": _rgb_paint(look.accent_rgb),
        "inner": _rgb_paint(look.inner_rgb),
        "bottom": _rgb_paint(bottom), "bottom_shade": Paint(shade(bottom, 0.78), None),
        "bottom_hi": Paint(shade(bottom, 1.22), None),
        "bottom_line": Paint(look.stitch_rgb, None),
        "shoe": _rgb_paint(shoe), "shoe_line": Paint(shade(shoe, 1.5) if sum(shoe) / 3 < 60 else shade(shoe, 0.6),
                                                     None),
        "sole": _rgb_paint(look.sole_rgb, 0.7),
        "hat": _rgb_paint(hat), "hat_shade": Paint(shade(hat, 0.72), None),
        "hat_line": Paint(shade(hat, 1.5) if sum(hat) / 3 < 50 else shade(hat, 0.6), None),
        "carry": _rgb_paint(carry), "carry_shade": Paint(shade(carry, 0.75), None),
        "carry_line": Paint(shade(carry, 1.5) if sum(carry) / 3 < 50 else shade(carry, 0.6), None),
        "metal": _rgb_paint((150.0, 152.0, 158.0)), "dark": _rgb_paint((36.0, 36.0, 38.0)),
        "eye_white": Paint((236.0, 236.0, 230.0), None), "pupil": Paint((30.0, 26.0, 24.0), None),
        "lips": Paint(look.lips_rgb, shade(look.lips_rgb, 0.7)), "mouth": Paint(shade(skin, 0.5), None),
        "shadow": Paint((20.0, 20.0, 24.0), None), "highlight": Paint((250.0, 250.0, 250.0), None),
    }


def ir_materials(attrs: dict[str, str], look) -> dict[str, Paint | None]:
    """Material table for infrared: temperatures by body part and fabric, never by colour."""
    body = look.body_heat

    def p(value: float, edge: float = 24.0) -> Paint:
        v = float(np.clip(value, 0, 255))
        return Paint((v,), (max(0.0, v - edge),))

    top = IR_TOP[attrs["top_type"]] + body
    bottom = IR_BOTTOM[attrs["bottom_type"]] + body
    carry = IR_CARRY[attrs["carrying_type"]]
    hat = {"hood": top - 10, "helmet": 84}.get(attrs["hat_type"], 118 + body)
    return {
        "skin": p(232 + body, 18), "skin_shade": Paint((214.0 + body,), None), "skin_line": Paint((200.0,), None),
        "hair": p(112 + body), "hair_line": Paint((92.0 + body,), None), "brow": Paint((150.0,), None),
        "top": p(top), "top_shade": Paint((top - 14,), None), "top_line": Paint((top - 22,), None),
        "top_accent": p(top - 8), "inner": p(top + 20),
        "bottom": p(bottom), "bottom_shade": Paint((bottom - 14,), None),
        "bottom_hi": Paint((bottom + 6,), None), "bottom_line": Paint((bottom - 20,), None),
        "shoe": p(86), "shoe_line": Paint((70.0,), None), "sole": p(70),
        "hat": p(hat), "hat_shade": Paint((hat - 12,), None), "hat_line": Paint((hat - 20,), None),
        "carry": p(carry), "carry_shade": Paint((carry - 10,), None), "carry_line": Paint((carry - 18,), None),
        "metal": p(60), "dark": p(64),
        "eye_white": Paint((205.0,), None), "pupil": Paint((170.0,), None),
        "lips": Paint((240.0,), None), "mouth": Paint((205.0,), None),
        "shadow": None, "highlight": None,
    }


def sketch_materials(attrs: dict[str, str], look) -> dict[str, Paint | None]:
    """Material table for the sketch: white fills, dark pencil edges, shading only for hair and complexion."""
    ink, soft = (34.0,), (92.0,)
    paper = (255.0,)
    hair_tone = {"black": 150.0, "brown": 178.0, "red": 196.0, "blonde": 236.0, "gray": 214.0, "white": 246.0}
    skin_tone = {"light": 255.0, "medium": 240.0, "dark": 212.0}[attrs["skin_color"]]
    hair = (hair_tone[attrs["hair_color"]],)
    white = Paint(paper, ink)
    return {
        "skin": Paint((skin_tone,), ink), "skin_shade": None, "skin_line": Paint(soft, None),
        "hair": Paint(hair, ink), "hair_line": Paint((70.0,), None), "brow": Paint(ink, None),
        "top": white, "top_shade": None, "top_line": Paint(soft, None), "top_accent": white, "inner": white,
        "bottom": white, "bottom_shade": None, "bottom_hi": None, "bottom_line": Paint(soft, None),
        "shoe": white, "shoe_line": Paint(soft, None), "sole": white,
        "hat": white, "hat_shade": None, "hat_line": Paint(soft, None),
        "carry": white, "carry_shade": None, "carry_line": Paint(soft, None),
        "metal": white, "dark": Paint((120.0,), ink),
        "eye_white": Paint(paper, None), "pupil": Paint(ink, None),
        "lips": Paint((skin_tone,), ink), "mouth": Paint(ink, None),
        "shadow": None, "highlight": None,
    }


_FAR_BASES = ("skin", "top", "bottom", "shoe", "sole", "carry", "hair", "inner")


def materials(modality: str, attrs: dict[str, str], look) -> dict[str, Paint | None]:
    """The full material table of a modality, including ``*_far`` variants for limbs on the far side."""
    table = {"rgb": rgb_materials, "ir": ir_materials, "sketch": sketch_materials}[modality](attrs, look)
    for base in _FAR_BASES:
        paint = table[base]
        if paint is None or modality == "sketch":
            table[base + "_far"] = paint
        elif modality == "rgb":
            table[base + "_far"] = Paint(shade(paint.fill, 0.8), paint.edge)
        else:
            table[base + "_far"] = Paint((max(0.0, paint.fill[0] - 10),), paint.edge)
    return table


@dataclass(frozen=True)
class NoiseBank:
    """A fixed block of Gaussian noise; images take random windows of it (fast, deterministic)."""

    block: np.ndarray  # int16, N(0, 1) × 32 (so a sigma in 1/8 steps scales it exactly in int16)

    def window(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        h, w = shape[:2]
        bh, bw = self.block.shape[:2]
        y = int(rng.integers(0, bh - h + 1))
        x = int(rng.integers(0, bw - w + 1))
        win = self.block[y:y + h, x:x + w]
        return win if len(shape) == 3 else win[..., 0]


_NOISE: NoiseBank | None = None


def noise_bank() -> NoiseBank:
    global _NOISE
    if _NOISE is None:
        gen = np.random.default_rng(20240917)
        _NOISE = NoiseBank((gen.standard_normal((448, 320, 3)) * 32).astype(np.int16))
    return _NOISE


def add_noise(img: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Add zero-mean Gaussian sensor noise of standard deviation ``sigma`` (grey levels)."""
    if sigma <= 0:
        return img
    win = noise_bank().window(rng, img.shape)
    scaled = (win * np.int16(round(sigma * 8)) + 128) >> 8    # N(0, 1)·32 · 8σ / 256 = N(0, σ), rounded
    return cv2.add(img, scaled, dtype=cv2.CV_8U)


def downsample(img: np.ndarray, resolution: str) -> np.ndarray:
    """Area-downsample an HR image to a resolution level's native size (HR is returned unchanged)."""
    if resolution not in RESOLUTIONS:
        raise ValueError(f"resolution {resolution!r} is not one of {list(RESOLUTIONS)}")
    h, w = RESOLUTIONS[resolution]
    if img.shape[:2] == (h, w):
        return img
    return cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA)


def to_three_channels(img: np.ndarray) -> np.ndarray:
    """Grey ``H×W`` (or ``H×W×1``) → ``H×W×3`` with identical channels; RGB passes through."""
    if img.ndim == 3 and img.shape[2] == 3:
        return img
    grey = img.reshape(img.shape[0], img.shape[1])
    return np.repeat(grey[:, :, None], 3, axis=2)
