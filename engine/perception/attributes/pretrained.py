"""Attribute evidence from a real pretrained network: person-attributes-recognition-crossroad-0230 (Intel Open
Model Zoo, ``engine.perception.pretrained``), the ``pretrained`` evidence source (docs/pretrained-models.md, "Attribute
evidence").

The network reads a 160×80 BGR crop and gives eight sigmoid probabilities (``OUTPUTS``) and two points where
the top and bottom colours may be read. Colours stay with the pixel reader (``engine.perception.attributes.extract``),
which names them better on the labelled real crops; the eight probabilities become distributions over the
ontology's values (``evidence_from_outputs``):

- ``is_male`` → ``gender``: male p, female 1 − p;
- ``has_backpack`` and ``has_bag`` → ``carrying_type``: none (1 − p_backpack)(1 − p_bag); backpack
  p_backpack (1 − p_bag / 2); the rest (a bag, not a backpack) shared by the bag values by ``BAG_SHARES``;
- ``has_hat`` → ``hat_type``: none 1 − p, the hat values share p (the network does not say which hat);
- ``has_longsleeves`` → ``top_length``: long_sleeve p, short sleeves and sleeveless share 1 − p by
  ``SHORT_SLEEVE_SHARES``;
- ``has_longpants`` → ``bottom_length`` (long p; knee and short share 1 − p) and ``bottom_type`` (trousers,
  jeans, leggings share p; shorts and skirt 1 − p);
- ``has_longhair`` → ``hairstyle``: long, ponytail and bun share p; short, medium and bald 1 − p;
- ``has_coat_jacket`` → ``top_type``: jacket and coat share p; the other tops 1 − p.

Shares inside a group are priors (how often each value occurs among people of that group), not readings: the
network cannot tell a cap from a hood. Each key's confidence is 1: these are probabilities, and how far each
key is to be trusted on real footage is measured separately (``engine.retrieval.evidence.reliability``), not
guessed from how decided the output looks.

Before the mapping each output is calibrated on hand-labelled real crops (Platt scaling,
p' = σ(a · logit(p) + b), fitted by ``bench/calibrate_sources.py`` and shipped in
``resources/calibration/footage_calibration.json``): the network's raw sigmoids are well ranked but not
probabilities of what a person wears in this footage (it says "short sleeves" for most people in long
sleeves). Without a shipped calibration the raw outputs are used (a = 1, b = 0); the evidence records which.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import cv2
import numpy as np

from engine.kernel.ontology import ONTOLOGY
from engine.perception.attributes.calibration import footage_calibration
from engine.perception.attributes.evidence import AttributeEvidence
from engine.perception.attributes.inputs import as_bgr
from engine.perception.pretrained import PretrainedModelError, load_shipped, shipped
from engine.perception.pretrained.registry import ATTRIBUTE_NETWORK

SOURCE = "pretrained"
OUTPUTS: tuple[str, ...] = ("is_male", "has_bag", "has_backpack", "has_hat", "has_longsleeves", "has_longpants",
                            "has_longhair", "has_coat_jacket")
DEFAULT_BATCH = 64
#: How a bag that is not a backpack splits among the carried values.
BAG_SHARES = {"handbag": 0.35, "shoulder_bag": 0.35, "plastic_bag": 0.1, "suitcase": 0.1, "umbrella": 0.1}
HAT_SHARES = {"cap": 0.4, "beanie": 0.2, "brimmed_hat": 0.15, "hood": 0.15, "helmet": 0.1}
SHORT_SLEEVE_SHARES = {"short_sleeve": 0.8, "sleeveless": 0.2}
SHORT_BOTTOM_SHARES = {"knee": 0.5, "short": 0.5}
LONG_BOTTOM_TYPES = {"trousers": 0.45, "jeans": 0.45, "leggings": 0.1}
SHORT_BOTTOM_TYPES = {"shorts": 0.5, "skirt": 0.5}
LONG_HAIR = {"long": 0.6, "ponytail": 0.25, "bun": 0.15}
SHORT_HAIR = {"short": 0.6, "medium": 0.3, "bald": 0.1}
COAT_JACKET = {"jacket": 0.65, "coat": 0.35}
OTHER_TOPS = {"t_shirt": 0.3, "shirt": 0.2, "sweater": 0.15, "hoodie": 0.1, "blouse": 0.1, "dress": 0.1,
              "vest": 0.05}


CALIBRATION_KEY = "attribute_network"
#: What each output means in the labelled ontology (the truth Platt scaling fits against): key → values that
#: make the output true.
OUTPUT_TRUTH: dict[str, tuple[str, tuple[str, ...]]] = {
    "is_male": ("gender", ("male",)),
    "has_bag": ("carrying_type", ("handbag", "shoulder_bag", "plastic_bag", "suitcase")),
    "has_backpack": ("carrying_type", ("backpack",)),
    "has_hat": ("hat_type", ("cap", "beanie", "brimmed_hat", "helmet", "hood")),
    "has_longsleeves": ("top_length", ("long_sleeve",)),
    "has_longpants": ("bottom_length", ("long",)),
    "has_longhair": ("hairstyle", ("long", "ponytail", "bun")),
    "has_coat_jacket": ("top_type", ("jacket", "coat")),
}
EPSILON = 1e-4


def logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=np.float64), EPSILON, 1 - EPSILON)
    return np.log(p / (1 - p))


def check_platt(data: object, where: str) -> dict[str, tuple[float, float]]:
    """``{output: (a, b)}`` from a calibration file's ``attribute_network.platt`` part, checked."""
    if not isinstance(data, dict):
        raise ValueError(f"{where}: {CALIBRATION_KEY}.platt must map the network's outputs to {{a, b}}")
    out = {}
    for name, entry in data.items():
        values = [entry.get(k) for k in ("a", "b")] if isinstance(entry, dict) else [None, None]
        if name not in OUTPUTS or not all(isinstance(v, int | float) and not isinstance(v, bool)
                                          and np.isfinite(v) for v in values):
            raise ValueError(f"{where}: {CALIBRATION_KEY}.platt[{name!r}] must be an output of {list(OUTPUTS)} with "
                             "finite a and b")
        out[name] = (float(values[0]), float(values[1]))
    return out


@lru_cache(maxsize=1)
def shipped_platt() -> dict[str, tuple[float, float]]:
    """The shipped Platt scaling per output (empty when no calibration ships)."""
    where, data = footage_calibration()
    part = data.get(CALIBRATION_KEY, {})
    return check_platt(part.get("platt", {}), where) if isinstance(part, dict) else {}


def calibrate(raw: np.ndarray, platt: dict[str, tuple[float, float]] | None = None) -> np.ndarray:
    """Raw outputs [..., 8] → calibrated probabilities (``platt``: default the shipped one; outputs it does not
    name pass unchanged)."""
    platt = shipped_platt() if platt is None else platt
    raw = np.asarray(raw, dtype=np.float64)
    out = raw.copy()
    for j, name in enumerate(OUTPUTS):
        if name in platt:
            a, b = platt[name]
            out[..., j] = 1.0 / (1.0 + np.exp(-(a * logit(raw[..., j]) + b)))
    return out


def _split(mass: float, shares: dict[str, float]) -> dict[str, float]:
    total = sum(shares.values())
    return {value: mass * share / total for value, share in shares.items()}


def _distribution(key: str, parts: dict[str, float]) -> dict[str, float]:
    values = ONTOLOGY.attributes[key]
    unknown = set(parts) - set(values)
    if unknown:
        raise ValueError(f"{key}: values outside the ontology {sorted(unknown)}")
    dist = {value: float(parts.get(value, 0.0)) for value in values}
    total = sum(dist.values())
    return {value: p / total for value, p in dist.items()}


def evidence_from_outputs(outputs: Sequence[float]) -> AttributeEvidence:
    """One crop's evidence from the network's eight probabilities (in ``OUTPUTS`` order); see the module."""
    p = np.clip(np.asarray(outputs, dtype=np.float64).reshape(-1), 0.0, 1.0)
    if p.shape != (len(OUTPUTS),) or not np.isfinite(p).all():
        raise ValueError(f"the attribute network gives {len(OUTPUTS)} finite probabilities per crop, got {p}")
    male, bag, backpack, hat, long_sleeves, long_pants, long_hair, coat = (float(x) for x in p)
    none = (1 - backpack) * (1 - bag)
    carried_backpack = backpack * (1 - bag / 2)
    parts = {
        "gender": {"male": male, "female": 1 - male},
        "carrying_type": {"none": none, "backpack": carried_backpack,
                          **_split(max(0.0, 1 - none - carried_backpack), BAG_SHARES)},
        "hat_type": {"none": 1 - hat, **_split(hat, HAT_SHARES)},
        "top_length": {"long_sleeve": long_sleeves, **_split(1 - long_sleeves, SHORT_SLEEVE_SHARES)},
        "bottom_length": {"long": long_pants, **_split(1 - long_pants, SHORT_BOTTOM_SHARES)},
        "bottom_type": {**_split(long_pants, LONG_BOTTOM_TYPES), **_split(1 - long_pants, SHORT_BOTTOM_TYPES)},
        "hairstyle": {**_split(long_hair, LONG_HAIR), **_split(1 - long_hair, SHORT_HAIR)},
        "top_type": {**_split(coat, COAT_JACKET), **_split(1 - coat, OTHER_TOPS)},
    }
    evidence = AttributeEvidence({}, {}, info={"source": SOURCE, "network": ATTRIBUTE_NETWORK,
                                               "outputs": {name: round(float(x), 4) for name, x in zip(OUTPUTS, p,
                                                                                                   strict=True)}})
    for key, dist in parts.items():
        evidence.probabilities[key] = _distribution(key, dist)
        evidence.confidence[key] = 1.0
    return evidence


class AttributeNetwork:
    """The shipped attribute network: ``read(crops)`` → probabilities [N, 8] and colour points [N, 2, 2];
    ``evidence(crops)`` → one ``AttributeEvidence`` per crop."""

    def __init__(self, *, threads: int | None = None, batch_size: int = DEFAULT_BATCH, device: str = "CPU") -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.model, self.net = load_shipped(ATTRIBUTE_NETWORK, threads=threads, device=device)
        self.batch_size = batch_size

    @staticmethod
    def describe() -> dict[str, str]:
        """What reports record to name the network."""
        return shipped(ATTRIBUTE_NETWORK).describe()

    def read(self, crops: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        height, width = self.net.input_size
        probabilities, points = [], []
        for start in range(0, len(crops), self.batch_size):
            part = crops[start : start + self.batch_size]
            blob = np.empty((len(part), 3, height, width), np.float32)
            for i, crop in enumerate(part):
                image = as_bgr(crop, f"crop {start + i}")
                blob[i] = cv2.resize(image, (width, height), interpolation=cv2.INTER_LINEAR).transpose(2, 0, 1)
            out = self.net.infer(blob)
            attributes, top, bottom = (out[name].reshape(len(part), -1) for name in self.model.outputs)
            if attributes.shape[1] != len(OUTPUTS):
                raise PretrainedModelError(f"{self.model.name} gives {attributes.shape[1]} attributes, expected "
                                           f"{len(OUTPUTS)}")
            probabilities.append(attributes)
            points.append(np.stack([top[:, :2], bottom[:, :2]], axis=1))
        if not probabilities:
            return np.zeros((0, len(OUTPUTS)), np.float32), np.zeros((0, 2, 2), np.float32)
        return np.concatenate(probabilities), np.concatenate(points)

    def evidence(self, crops: Sequence[np.ndarray],
                 platt: dict[str, tuple[float, float]] | None = None) -> list[AttributeEvidence]:
        """Evidence per crop from the calibrated outputs (``platt``: default the shipped calibration)."""
        raw, _ = self.read(crops)
        platt = shipped_platt() if platt is None else platt
        out = []
        for row, calibrated in zip(raw, calibrate(raw, platt), strict=True):
            evidence = evidence_from_outputs(calibrated)
            evidence.info["raw"] = {name: round(float(x), 4) for name, x in zip(OUTPUTS, row, strict=True)}
            evidence.info["calibrated"] = bool(platt)
            out.append(evidence)
        return out
