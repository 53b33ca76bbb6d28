"""How far each evidence source is to be trusted on real footage, per attribute key: a reliability r ∈ [0, 1]
measured on hand-labelled real crops, which scales the source's stored confidence before the hybrid ranking
pools the sources (docs/pretrained-models.md, "Trusting each source as far as it measured").

The agreement of a key (``engine.retrieval.evidence.agreement``) reads a source's probability p of the stated value
through its confidence c, as p̃ = c·p + (1 − c)/|V|. With reliability r the ranking uses r·c instead of c. r is
fitted per (source, key) by maximum likelihood on labelled crops: the r that maximises the mean
log(r·c·p_true + (1 − r·c)/|V|), p_true being the probability the source gave the crop's true value. The
log-likelihood is concave in r, so the maximum on [0, 1] is found by a fine grid refined once. r = 0: the
source's reading of that key is no better than "no idea" on real people; r = 1: as sure as it says.

Reliabilities are measured for footage galleries only (``resources/calibration/footage_calibration.json``,
written by ``bench/calibrate_sources.py --write``); keys with fewer than ``MIN_SAMPLES`` labelled crops are
not recorded and keep r = 1. Galleries of built worlds use none: their people are what the checkpoint's heads
were trained on.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np

from engine.index.evidence_table import SOURCES
from engine.kernel.ontology import ONTOLOGY
from engine.perception.attributes.calibration import footage_calibration

FORMAT_VERSION = 1
MIN_SAMPLES = 10
GRID = 201

Reliabilities = Mapping[str, Mapping[str, float]]  # source → key → r


def log_likelihood(r: np.ndarray | float, p_true: np.ndarray, confidence: np.ndarray, size: int) -> np.ndarray:
    """Mean log(r·c·p + (1 − r·c)/|V|) over samples, for each r given."""
    r = np.atleast_1d(np.asarray(r, dtype=np.float64))[:, None]
    c = np.clip(np.asarray(confidence, dtype=np.float64), 0.0, 1.0)[None, :]
    p = np.clip(np.asarray(p_true, dtype=np.float64), 0.0, 1.0)[None, :]
    tempered = r * c * p + (1.0 - r * c) / size
    return np.log(np.maximum(tempered, 1e-12)).mean(axis=1)


def fit_reliability(p_true: np.ndarray, confidence: np.ndarray, size: int) -> float:
    """The maximum-likelihood r ∈ [0, 1] (see the module docstring)."""
    p_true = np.asarray(p_true, dtype=np.float64)
    if p_true.size == 0:
        raise ValueError("fit_reliability needs at least one labelled sample")
    if size < 2:
        raise ValueError(f"an attribute needs at least two values, got {size}")
    grid = np.linspace(0.0, 1.0, GRID)
    best = float(grid[int(np.argmax(log_likelihood(grid, p_true, confidence, size)))])
    step = 1.0 / (GRID - 1)
    fine = np.clip(np.linspace(best - step, best + step, 41), 0.0, 1.0)
    return float(fine[int(np.argmax(log_likelihood(fine, p_true, confidence, size)))])


def check_table(data: Any, where: str) -> dict[str, dict[str, float]]:
    """The ``reliability`` part of a calibration file, checked: source → key → r in [0, 1]."""
    if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION:
        raise ValueError(f"{where}: not a reliability calibration of format {FORMAT_VERSION}")
    table = data.get("reliability")
    if not isinstance(table, dict):
        raise ValueError(f"{where}: 'reliability' must map sources to keys to numbers")
    out: dict[str, dict[str, float]] = {}
    for source, keys in table.items():
        if source not in SOURCES or not isinstance(keys, dict):
            raise ValueError(f"{where}: unknown evidence source {source!r} (known: {list(SOURCES)})")
        for key, entry in keys.items():
            value = entry.get("r") if isinstance(entry, dict) else None
            if key not in ONTOLOGY.attributes or isinstance(value, bool) or not isinstance(value, int | float) \
                    or not math.isfinite(value) or not 0.0 <= value <= 1.0:
                raise ValueError(f"{where}: reliability of {source}/{key} must be an ontology key with r in [0, 1]")
            out.setdefault(source, {})[key] = float(value)
    return out


@lru_cache(maxsize=1)
def footage_reliability() -> dict[str, dict[str, float]]:
    """The shipped reliabilities for footage galleries (empty when none ship)."""
    where, data = footage_calibration()
    return check_table(data, where) if data else {}


def for_domain(domain: str | None) -> dict[str, dict[str, float]]:
    """The reliabilities a gallery of ``domain`` ranks with (footage: the shipped table; others: none)."""
    return footage_reliability() if domain == "footage" else {}


def scale_confidence(confidence: np.ndarray, attributes, sources, reliability: Reliabilities | None) -> np.ndarray:
    """``confidence`` [n, K, S] with each (key, source) column multiplied by its reliability (1 when unknown)."""
    if not reliability:
        return confidence
    factors = np.ones((1, len(attributes), len(sources)), dtype=confidence.dtype)
    for s, source in enumerate(sources):
        keys = reliability.get(source, {})
        for j, (key, _) in enumerate(attributes):
            factors[0, j, s] = keys.get(key, 1.0)
    return confidence * factors


def footage_measurements() -> dict[str, dict[str, dict[str, float]]]:
    """What the shipped calibration measured per source and key on the labelled real crops: source → key →
    {"accuracy", "majority" (always guessing the commonest true value), "samples", "r" (the reliability the
    ranking applies)}; keys measured without an accuracy are left out (empty when no calibration ships)."""
    where, data = footage_calibration()
    table = check_table(data, where) if data else {}
    out: dict[str, dict[str, dict[str, float]]] = {}
    for source, keys in (data.get("reliability") or {}).items():
        for key, entry in keys.items():
            if not isinstance(entry, dict) or not all(isinstance(entry.get(f), int | float) and
                                                      not isinstance(entry.get(f), bool)
                                                      for f in ("accuracy", "majority", "n")):
                continue
            out.setdefault(source, {})[key] = {"accuracy": float(entry["accuracy"]),
                                               "majority": float(entry["majority"]), "samples": int(entry["n"]),
                                               "r": table[source][key]}
    return out


def measured_on() -> dict[str, Any]:
    """The shipped calibration's ``measured_on`` part (labelled crops, people, command; {} when none ships)."""
    _, data = footage_calibration()
    found = data.get("measured_on") if data else None
    return dict(found) if isinstance(found, dict) else {}
