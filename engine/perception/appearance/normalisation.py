"""How a crop becomes the input tensor of a user's appearance network: channel order, a divisor, and a
per-channel mean and standard deviation (``x = (pixel / divide - mean) / std``).

The default is the OSNet/torchreid one (ImageNet statistics): RGB, /255, mean (0.485, 0.456, 0.406), std
(0.229, 0.224, 0.225). ``parse_normalisation`` reads the command line's spelling: ``imagenet`` (the default),
or ``key=value`` pairs separated by ``;`` or spaces, any of ``order=rgb|bgr``, ``divide=255``,
``mean=0.485,0.456,0.406``, ``std=0.229,0.224,0.225`` (keys left out keep their default).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from engine.perception.appearance.errors import AppearanceModelError

CHANNEL_ORDERS: tuple[str, ...] = ("rgb", "bgr")
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
PRESETS: tuple[str, ...] = ("imagenet",)


@dataclass(frozen=True)
class Normalisation:
    order: str = "rgb"
    divide: float = 255.0
    mean: tuple[float, float, float] = IMAGENET_MEAN
    std: tuple[float, float, float] = IMAGENET_STD

    def __post_init__(self) -> None:
        if self.order not in CHANNEL_ORDERS:
            raise AppearanceModelError(f"channel order must be one of {list(CHANNEL_ORDERS)}, got {self.order!r}")
        if not (math.isfinite(self.divide) and self.divide > 0):
            raise AppearanceModelError(f"the divisor must be a positive number, got {self.divide!r}")
        for name, values in (("mean", self.mean), ("std", self.std)):
            if len(values) != 3 or not all(math.isfinite(v) for v in values):
                raise AppearanceModelError(f"{name} needs three finite numbers (one per channel), got {values!r}")
        if any(v <= 0 for v in self.std):
            raise AppearanceModelError(f"std must be positive per channel, got {self.std!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"order": self.order, "divide": self.divide, "mean": list(self.mean), "std": list(self.std)}

    def describe(self) -> str:
        mean = ",".join(f"{v:g}" for v in self.mean)
        std = ",".join(f"{v:g}" for v in self.std)
        return f"order={self.order};divide={self.divide:g};mean={mean};std={std}"


def _three(text: str, key: str) -> tuple[float, float, float]:
    try:
        values = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise AppearanceModelError(f"normalisation {key}={text!r}: give three numbers separated by commas") from None
    if len(values) != 3:
        raise AppearanceModelError(f"normalisation {key}={text!r}: give three numbers (one per channel)")
    return values  # type: ignore[return-value]


def parse_normalisation(text: str | None) -> Normalisation:
    """A ``Normalisation`` from ``imagenet``/None or ``key=value`` pairs (see the module docstring)."""
    if text is None or text.strip().lower() in PRESETS or not text.strip():
        return Normalisation()
    fields: dict[str, Any] = {}
    for pair in (p for p in re.split(r"[;\s]+", text.strip()) if p):
        key, sep, value = pair.partition("=")
        key = key.strip().lower()
        if not sep or not value:
            raise AppearanceModelError(f"normalisation {text!r}: {pair!r} is not key=value "
                                       f"(keys: order, divide, mean, std; or the preset 'imagenet')")
        if key == "order":
            fields["order"] = value.lower()
        elif key == "divide":
            try:
                fields["divide"] = float(value)
            except ValueError:
                raise AppearanceModelError(f"normalisation divide={value!r} is not a number") from None
        elif key in ("mean", "std"):
            fields[key] = _three(value, key)
        else:
            raise AppearanceModelError(f"normalisation {text!r}: unknown key {key!r} (use order, divide, mean, std)")
    return Normalisation(**fields)
