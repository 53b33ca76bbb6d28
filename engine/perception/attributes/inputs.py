"""Checking and normalising the images handed to attribute extraction (crop, foreground mask, scene).

Every image is a ``numpy.ndarray`` of ``uint8``: a crop or scene is ``H×W×3`` BGR (``H×W`` grey and
``H×W×4`` BGRA are accepted and converted), a mask is ``H×W`` (or ``H×W×1``) of the crop's size where
255 marks foreground (``bool`` masks are accepted). Anything else raises :class:`AttributeInputError`
naming the input and the problem.
"""

from __future__ import annotations

import numpy as np

#: The smallest crop that still has a head, a torso and legs a few pixels high.
MIN_CROP_HEIGHT, MIN_CROP_WIDTH = 16, 8


class AttributeInputError(ValueError):
    """A crop, mask or scene that cannot be read as an image (names the input and the problem)."""


def _describe(value: object) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    return f"a {type(value).__name__}"


def as_bgr(value: object, name: str, min_height: int = 1, min_width: int = 1) -> np.ndarray:
    """``value`` as a contiguous ``H×W×3`` uint8 BGR image, or :class:`AttributeInputError`."""
    if not isinstance(value, np.ndarray):
        raise AttributeInputError(f"{name} must be a numpy uint8 image (H×W×3 BGR), got {_describe(value)}")
    if value.dtype != np.uint8:
        raise AttributeInputError(f"{name} must have dtype uint8, got {_describe(value)}")
    if value.ndim == 3 and value.shape[2] == 1:
        value = value[:, :, 0]
    if value.ndim == 2:
        value = np.repeat(value[:, :, None], 3, axis=2)
    elif value.ndim == 3 and value.shape[2] == 4:
        value = value[:, :, :3]
    elif value.ndim != 3 or value.shape[2] != 3:
        raise AttributeInputError(f"{name} must be H×W×3 (BGR), H×W or H×W×4, got {_describe(value)}")
    h, w = value.shape[:2]
    if h == 0 or w == 0:
        raise AttributeInputError(f"{name} is empty ({h}×{w} pixels)")
    if h < min_height or w < min_width:
        raise AttributeInputError(f"{name} is {h}×{w} pixels; it needs at least {min_height}×{min_width}")
    return np.ascontiguousarray(value)


def as_mask(value: object, shape: tuple[int, int], name: str = "mask") -> np.ndarray:
    """``value`` as an ``H×W`` uint8 mask of ``shape`` (bool → 0/255), or :class:`AttributeInputError`."""
    if not isinstance(value, np.ndarray):
        raise AttributeInputError(f"{name} must be a numpy uint8 array (H×W, 255 = foreground), got {_describe(value)}")
    if value.ndim == 3 and value.shape[2] == 1:
        value = value[:, :, 0]
    if value.ndim != 2:
        raise AttributeInputError(f"{name} must be H×W, got {_describe(value)}")
    if value.dtype == np.bool_:
        value = value.astype(np.uint8) * 255
    elif value.dtype != np.uint8:
        raise AttributeInputError(f"{name} must have dtype uint8 or bool, got {_describe(value)}")
    if value.shape != tuple(shape):
        raise AttributeInputError(f"{name} is {value.shape[0]}×{value.shape[1]} but the crop is {shape[0]}×{shape[1]}")
    return np.ascontiguousarray(value)
