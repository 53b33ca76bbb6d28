"""Resolution level of a crop from its height in source pixels.

The world renders the four levels at 256 (HR), 128 (mild), 64 (mid) and 32 (ultra) pixels tall
(``engine.lab.world.modalities.RESOLUTIONS``). A real crop gets the level whose height is nearest, with the
boundaries at the arithmetic midpoints between neighbouring heights:

    HR     h ≥ 192
    mild   96 ≤ h < 192
    mid    48 ≤ h < 96
    ultra  h < 48

A 200-pixel crop is therefore HR: it holds more detail than a 128-pixel one, and the model (which resizes
every crop to its input size) should treat it as high resolution.
"""

from __future__ import annotations

import math

#: (lower bound in pixels, level), highest first; labels as in world manifests.
LEVEL_BOUNDS: tuple[tuple[float, str], ...] = ((192.0, "HR"), (96.0, "mild"), (48.0, "mid"), (0.0, "ultra"))


def level_of_height(height: float) -> str:
    """The resolution label (HR, mild, mid, ultra) of a crop ``height`` pixels tall."""
    if isinstance(height, bool) or not isinstance(height, int | float) or not math.isfinite(height) or height <= 0:
        raise ValueError(f"crop height must be a positive number of pixels, got {height!r}")
    return next(level for bound, level in LEVEL_BOUNDS if height >= bound)
