"""Simple per-crop image statistics that tell rendered person crops from camera crops.

Each takes one RGB image (``H×W×3``, uint8 0–255 or float 0–1) and returns a float; ``crop_statistics`` gives
them all by name. They are what ``bench/realism_gap.py`` compares between real footage crops, world renders
and world renders after ``engine.lab.data.realism.RealismAugment`` (docs/training-notes.md, realism augmentation).

- ``brightness``: mean luma (0–1); ``contrast``: standard deviation of luma (0–1).
- ``saturation``: mean HSV saturation (0–1).
- ``colourfulness``: Hasler and Süsstrunk's metric on 0–255 values (opponent channels rg, yb: spread plus
  0.3 × their mean's length).
- ``high_frequency``: variance of the luma Laplacian over the variance of luma (falls with blur).
- ``noise``: Immerkær's fast noise estimate, the standard deviation (0–255 luma) of the response to a mask
  that cancels smooth and linear structure.
- ``blockiness``: mean absolute luma step across the 8×8 grid lines over the mean step elsewhere (1 = no
  grid; above 1 = JPEG-style blocks aligned to the crop's own 8-pixel grid).
- ``red_share`` / ``blue_share``: the red and blue channel means over the sum of the three (1/3 each when
  neutral): the colour cast.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

STATISTICS = ("brightness", "contrast", "saturation", "colourfulness", "high_frequency", "noise", "blockiness",
              "red_share", "blue_share")
_NOISE_MASK = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], dtype=np.float64)


class ImageStatisticsError(ValueError):
    """An image the statistics cannot read (wrong shape or type, too small)."""


def _rgb255(image: np.ndarray) -> np.ndarray:
    """The image as float64 ``H×W×3`` on the 0–255 scale, checked."""
    if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3:
        shape = getattr(image, "shape", None)
        raise ImageStatisticsError(f"expected an H×W×3 RGB array, got shape {shape}")
    if image.shape[0] < 16 or image.shape[1] < 16:
        raise ImageStatisticsError(f"image of {image.shape[0]}×{image.shape[1]} px is too small (16×16 at least)")
    if image.dtype == np.uint8:
        return image.astype(np.float64)
    if np.issubdtype(image.dtype, np.floating):
        return np.clip(image.astype(np.float64), 0.0, 1.0) * 255.0
    raise ImageStatisticsError(f"expected uint8 or float pixels, got {image.dtype}")


def _luma(rgb: np.ndarray) -> np.ndarray:
    return rgb @ np.array([0.299, 0.587, 0.114])


def brightness(image: np.ndarray) -> float:
    return float(_luma(_rgb255(image)).mean() / 255.0)


def contrast(image: np.ndarray) -> float:
    return float(_luma(_rgb255(image)).std() / 255.0)


def saturation(image: np.ndarray) -> float:
    rgb = _rgb255(image)
    high, low = rgb.max(axis=2), rgb.min(axis=2)
    return float(np.where(high > 0, (high - low) / np.maximum(high, 1e-9), 0.0).mean())


def colourfulness(image: np.ndarray) -> float:
    rgb = _rgb255(image)
    rg = rgb[..., 0] - rgb[..., 1]
    yb = 0.5 * (rgb[..., 0] + rgb[..., 1]) - rgb[..., 2]
    return float(math.hypot(rg.std(), yb.std()) + 0.3 * math.hypot(rg.mean(), yb.mean()))


def high_frequency(image: np.ndarray) -> float:
    luma = _luma(_rgb255(image))
    variance = luma.var()
    if variance <= 1e-9:
        return 0.0
    return float(cv2.Laplacian(luma, cv2.CV_64F, ksize=1).var() / variance)


def noise(image: np.ndarray) -> float:
    luma = _luma(_rgb255(image))
    response = cv2.filter2D(luma, cv2.CV_64F, _NOISE_MASK)[1:-1, 1:-1]
    height, width = luma.shape
    return float(math.sqrt(math.pi / 2) * np.abs(response).sum() / (6 * (width - 2) * (height - 2)))


def blockiness(image: np.ndarray) -> float:
    luma = _luma(_rgb255(image))
    ratios = []
    for steps in (np.abs(np.diff(luma, axis=1)), np.abs(np.diff(luma, axis=0)).T):
        on_grid = np.zeros(steps.shape[1], dtype=bool)
        on_grid[7::8] = True  # the step between pixel 8k+7 and 8k+8
        inside = steps[:, ~on_grid].mean()
        ratios.append(steps[:, on_grid].mean() / inside if inside > 1e-9 else 1.0)
    return float(np.mean(ratios))


def red_share(image: np.ndarray) -> float:
    means = _rgb255(image).reshape(-1, 3).mean(axis=0)
    return float(means[0] / max(means.sum(), 1e-9))


def blue_share(image: np.ndarray) -> float:
    means = _rgb255(image).reshape(-1, 3).mean(axis=0)
    return float(means[2] / max(means.sum(), 1e-9))


_FUNCTIONS = {"brightness": brightness, "contrast": contrast, "saturation": saturation,
              "colourfulness": colourfulness, "high_frequency": high_frequency, "noise": noise,
              "blockiness": blockiness, "red_share": red_share, "blue_share": blue_share}


def crop_statistics(image: np.ndarray) -> dict[str, float]:
    """Every statistic of :data:`STATISTICS` for one RGB crop."""
    return {name: _FUNCTIONS[name](image) for name in STATISTICS}
