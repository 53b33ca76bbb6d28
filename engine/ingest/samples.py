"""A few sharp samples per track, spread over the track's time.

Sharpness is the variance of the Laplacian of the crop in grey, after resizing it to 128 rows (area
averaging when larger, linear interpolation when smaller): one number that prefers crops that are both in
focus and large, comparable across crop sizes.

A track's observations stream in; ``TrackSamples`` keeps at most ``2·keep`` slots, each covering ``width``
consecutive observations and holding only its sharpest candidate. When the slots overflow, neighbouring
pairs merge (the sharper candidate stays) and ``width`` doubles, so memory stays bounded and the slots keep
covering the whole track evenly. At the end the track is cut into ``keep`` parts of equal observation count
and each part gives the sharpest candidate of the slots whose middle falls in it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

SHARPNESS_ROWS = 128


def sharpness(crop: np.ndarray) -> float:
    """Variance of the Laplacian of ``crop`` (BGR or grey, uint8) resized to 128 rows."""
    height, width = crop.shape[:2]
    if height == 0 or width == 0:
        return 0.0
    grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY) if crop.ndim == 3 else crop
    new_width = max(1, round(width * SHARPNESS_ROWS / height))
    interpolation = cv2.INTER_AREA if height > SHARPNESS_ROWS else cv2.INTER_LINEAR
    resized = cv2.resize(grey, (new_width, SHARPNESS_ROWS), interpolation=interpolation)
    return float(cv2.Laplacian(resized, cv2.CV_64F).var())


@dataclass
class Candidate:
    """One observation of a track: where and when, how sharp, its pixels (BGR crop) and, when known, its
    foreground silhouette (uint8, 255 = person, the crop's size) and a thumbnail of its frame; ``objects``:
    its track's carried-objects evidence (an ``AttributeEvidence``), set when the track closes."""

    frame: int
    box: tuple[float, float, float, float]
    score: float
    sharpness: float
    crop: np.ndarray
    info: dict[str, Any] = field(default_factory=dict)
    mask: np.ndarray | None = None
    scene: np.ndarray | None = None
    objects: Any = None


class TrackSamples:
    """Bounded, time-spread reservoir of a track's sharpest candidates (see the module docstring)."""

    def __init__(self, keep: int) -> None:
        if keep < 1:
            raise ValueError(f"samples per track must be at least 1, got {keep}")
        self.keep = keep
        self.width = 1
        self.seen = 0
        self._slots: list[Candidate] = []
        self._counts: list[int] = []

    def offer(self, candidate: Candidate) -> None:
        self.seen += 1
        if self._slots and self._counts[-1] < self.width:
            if candidate.sharpness > self._slots[-1].sharpness:
                self._slots[-1] = candidate
            self._counts[-1] += 1
            return
        self._slots.append(candidate)
        self._counts.append(1)
        if len(self._slots) > 2 * self.keep:
            pairs = range(0, len(self._slots), 2)
            self._slots = [max(self._slots[i : i + 2], key=lambda c: c.sharpness) for i in pairs]
            self._counts = [sum(self._counts[i : i + 2]) for i in pairs]
            self.width *= 2

    def picked(self) -> list[Candidate]:
        """At most ``keep`` candidates in time order: the track's observations are cut into ``keep`` parts of
        equal count, each slot belongs to the part holding its middle observation, each part gives the
        sharpest candidate of its slots."""
        groups: dict[int, list[Candidate]] = {}
        start = 0
        for candidate, count in zip(self._slots, self._counts, strict=True):
            middle = start + (count - 1) / 2
            groups.setdefault(int(middle * self.keep // self.seen), []).append(candidate)
            start += count
        return [max(groups[g], key=lambda c: c.sharpness) for g in sorted(groups)]
