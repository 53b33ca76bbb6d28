"""What pixels say about a person crop: per-attribute probabilities, confidences and the regions used.

``AttributeEvidence`` is stored per gallery item, so ``to_dict`` gives plain JSON types and ``from_dict``
checks what it reads: ontology keys and canonical values only, each distribution summing to 1, confidences in
[0, 1]. Region masks are kept in memory for debugging but never serialised (boxes are).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from engine.kernel.ontology import ONTOLOGY

FORMAT_VERSION = 1
SUM_TOLERANCE = 1e-6


class AttributeEvidenceError(ValueError):
    """A stored evidence record that is malformed (names the field and the problem)."""


@dataclass
class AttributeEvidence:
    """Evidence for a subset of the ontology's attributes.

    - ``probabilities``: attribute key → canonical value → probability (each inner dict sums to 1);
    - ``confidence``: attribute key → confidence in [0, 1] (same keys as ``probabilities``);
    - ``regions``: region name → ``[x, y, w, h]`` box in crop pixels (empty regions are left out);
    - ``info``: how the evidence was made (mask source, illuminant gains, head unit, …), JSON types only;
    - ``masks``: region name → boolean mask at analysis scale (``info["analysis_scale"]`` × crop size);
      in memory only, ``None`` after ``from_dict``.
    """

    probabilities: dict[str, dict[str, float]]
    confidence: dict[str, float]
    regions: dict[str, list[int]] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    masks: dict[str, np.ndarray] | None = field(default=None, compare=False, repr=False)

    def best(self, key: str) -> str | None:
        """The most probable value of ``key``, ``None`` when there is no evidence for it."""
        dist = self.probabilities.get(key)
        return max(dist, key=dist.__getitem__) if dist else None

    def region_mask(self, name: str, crop_shape: tuple[int, int]) -> np.ndarray | None:
        """A region's mask resized to the crop's ``(height, width)``; ``None`` when not in memory."""
        if self.masks is None or name not in self.masks:
            return None
        m = self.masks[name].astype(np.uint8)
        h, w = crop_shape
        return cv2.resize(m, (w, h), interpolation=cv2.INTER_NEAREST) > 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": FORMAT_VERSION,
            "probabilities": {k: dict(v) for k, v in self.probabilities.items()},
            "confidence": dict(self.confidence),
            "regions": {k: [int(x) for x in v] for k, v in self.regions.items()},
            "info": dict(self.info),
        }

    @classmethod
    def from_dict(cls, data: Any) -> AttributeEvidence:
        if not isinstance(data, dict):
            raise AttributeEvidenceError(f"evidence must be a dict, got {type(data).__name__}")
        if data.get("version") != FORMAT_VERSION:
            raise AttributeEvidenceError(f"evidence version {data.get('version')!r} is not {FORMAT_VERSION}")
        probabilities = _probabilities(data.get("probabilities"))
        confidence = _confidence(data.get("confidence"), probabilities)
        regions = data.get("regions", {})
        if not isinstance(regions, dict) or not all(
            isinstance(v, list) and len(v) == 4 and all(isinstance(x, int) for x in v) for v in regions.values()
        ):
            raise AttributeEvidenceError("regions must map names to [x, y, w, h] integer lists")
        info = data.get("info", {})
        if not isinstance(info, dict):
            raise AttributeEvidenceError("info must be a dict")
        return cls(probabilities, confidence, {k: list(v) for k, v in regions.items()}, dict(info))


def _probabilities(raw: Any) -> dict[str, dict[str, float]]:
    if not isinstance(raw, dict):
        raise AttributeEvidenceError("probabilities must be a dict of attribute → value → probability")
    out: dict[str, dict[str, float]] = {}
    for key, dist in raw.items():
        if key not in ONTOLOGY.attributes:
            raise AttributeEvidenceError(f"probabilities: unknown attribute key {key!r}")
        if not isinstance(dist, dict) or not dist:
            raise AttributeEvidenceError(f"probabilities[{key!r}] must be a non-empty dict")
        bad = [v for v in dist if v not in ONTOLOGY.attributes[key]]
        if bad:
            raise AttributeEvidenceError(f"probabilities[{key!r}] has values outside the ontology: {bad}")
        values = {v: float(p) for v, p in dist.items()}
        if any(not math.isfinite(p) or p < 0 for p in values.values()):
            raise AttributeEvidenceError(f"probabilities[{key!r}] must be finite and ≥ 0")
        total = sum(values.values())
        if abs(total - 1.0) > SUM_TOLERANCE:
            raise AttributeEvidenceError(f"probabilities[{key!r}] sums to {total}, not 1")
        out[key] = values
    return out


def _confidence(raw: Any, probabilities: dict[str, dict[str, float]]) -> dict[str, float]:
    if not isinstance(raw, dict) or set(raw) != set(probabilities):
        raise AttributeEvidenceError("confidence must have exactly the keys of probabilities")
    out = {k: float(v) for k, v in raw.items()}
    bad = [k for k, v in out.items() if not (0.0 <= v <= 1.0)]
    if bad:
        raise AttributeEvidenceError(f"confidence outside [0, 1] for {bad}")
    return out
