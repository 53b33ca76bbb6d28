"""The attribute oracle of the query modes: the ceiling a query modality allows (docs/training-notes.md).

For every query of ``modalities.json`` the oracle knows the true attributes of the outfit its text, sketch
and IR image show, but only those the modality can show (``VISIBLE``): a text can state every attribute,
a sketch or an infrared frame shows no colour. It scores each gallery image by the number of those
attributes it shares with the query and ranks by that score, ties broken by a seeded random order. Its
R@1 on the benchmark is what a model that reads every visible attribute perfectly, and nothing else,
could reach: gallery people who differ only in colour are indistinguishable to a sketch or IR query.

``anytime_oracle`` does the same for the Uni-AT scenarios (docs/training-notes.md, "The clothing-change
ceiling"): a same-clothes (ST) query may use every attribute both images show, a clothing-change (LT) query
only the biometrics (the outfit changed), and whenever an infrared image is on either side no colour. The
renders also carry person-level details that are not attributes (skin and hair shade, beard, shoulder and head
proportions, body heat), so a model can in principle go above this ceiling; it is what reading the attributes
alone allows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from engine.kernel.ontology import ATTRIBUTE_KEYS, COLOR_KEYS
from engine.lab.evaluation.errors import EvaluationError
from engine.lab.evaluation.scoring import block, empty_metrics, score
from engine.lab.world.benchmarks import SCENARIOS, anytime_masks
from engine.lab.world.identities import BIOMETRIC_KEYS

#: Query mode → the attributes that modality can show.
VISIBLE: dict[str, tuple[str, ...]] = {
    "T": ATTRIBUTE_KEYS,
    "S": tuple(key for key in ATTRIBUTE_KEYS if key not in COLOR_KEYS),
    "IR": tuple(key for key in ATTRIBUTE_KEYS if key not in COLOR_KEYS),
}


def _codes(rows: Sequence[Mapping[str, str]], keys: Sequence[str], side: str) -> np.ndarray:
    out = np.empty((len(rows), len(keys)), dtype=object)
    for i, attributes in enumerate(rows):
        if not isinstance(attributes, Mapping):
            raise EvaluationError(f"{side} {i} has no attributes; rebuild the benchmark (lineup world benchmarks)")
        for k, key in enumerate(keys):
            out[i, k] = attributes.get(key)
    return out


def matching_attributes(query: Sequence[Mapping[str, str]], gallery: Sequence[Mapping[str, str]],
                        keys: Sequence[str]) -> np.ndarray:
    """Q×G count of the ``keys`` on which query and gallery attributes agree (an attribute absent on
    either side never agrees)."""
    q, g = _codes(query, keys, "query"), _codes(gallery, keys, "gallery item")
    counts = np.zeros((len(query), len(gallery)), dtype=np.int32)
    for k in range(len(keys)):
        counts += (q[:, k][:, None] == g[:, k][None, :]) & (q[:, k][:, None] != None)  # noqa: E711
    return counts


def attribute_oracle(bench: Mapping[str, Any], relevance: np.ndarray, seed: int = 0) -> dict[str, Any]:
    """{"visible": {mode: keys}, "tie_break", "by": {mode: metric block}} for T, S and IR."""
    queries, gallery = bench["queries"], bench["gallery"]
    query_attributes = [q.get("attributes") for q in queries]
    gallery_attributes = [g.get("attributes") for g in gallery]
    rng = np.random.default_rng(seed)
    by = {}
    for mode, keys in VISIBLE.items():
        counts = matching_attributes(query_attributes, gallery_attributes, keys)
        jitter = rng.random(counts.shape) * 0.5  # below one agreement: only breaks ties
        by[mode] = block(score((counts + jitter) / (len(keys) + 1), relevance))
    return {"visible": {mode: list(keys) for mode, keys in VISIBLE.items()},
            "tie_break": f"seeded random order among equal scores (seed {seed})", "by": by}


def anytime_visible(scenario: str) -> tuple[str, ...]:
    """The attributes an any-time scenario's query and gallery images both show and that identify the person:
    every attribute for same clothes, the biometrics for a clothing change, no colour where IR is involved."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown any-time scenario {scenario!r}; scenarios: {list(SCENARIOS)}")
    time_mode, clothes_mode = scenario.split("-")
    keys = ATTRIBUTE_KEYS if clothes_mode == "ST" else BIOMETRIC_KEYS
    if time_mode != "DT":
        keys = tuple(key for key in keys if key not in COLOR_KEYS)
    return tuple(keys)


def anytime_oracle(bench: Mapping[str, Any], seed: int = 0) -> dict[str, Any]:
    """{"visible": {scenario: keys}, "tie_break", "by": {scenario: metric block}} on ``anytime.json``, scored under
    the protocol's own masks (``anytime_masks``); ``EvaluationError`` when its items carry no attributes."""
    query, gallery = bench["query"], bench["gallery"]
    query_attributes = [q.get("attributes") for q in query]
    gallery_attributes = [g.get("attributes") for g in gallery]
    rng = np.random.default_rng(seed)

    def similarity(rows: np.ndarray, columns: np.ndarray, keys: tuple[str, ...]) -> np.ndarray:
        counts = matching_attributes([query_attributes[i] for i in rows],
                                     [gallery_attributes[j] for j in columns], keys)
        jitter = rng.random(counts.shape) * 0.5  # below one agreement: only breaks ties
        return (counts + jitter) / (len(keys) + 1)

    return {"visible": {scenario: list(anytime_visible(scenario)) for scenario in SCENARIOS},
            "tie_break": f"seeded random order among equal scores (seed {seed})",
            "by": score_scenarios(query, gallery, similarity)}


def score_scenarios(query: Sequence[Mapping[str, Any]], gallery: Sequence[Mapping[str, Any]],
                    similarity: Callable[[np.ndarray, np.ndarray, tuple[str, ...]], np.ndarray]) -> dict[str, Any]:
    """{scenario: metric block}: each any-time scenario scored under its own masks, ``similarity(rows, columns,
    keys)`` giving the scores of those query rows against those gallery columns on the scenario's visible keys."""
    by = {}
    for scenario in SCENARIOS:
        valid, positive = anytime_masks(query, gallery, scenario)
        rows, columns = np.flatnonzero(valid.any(axis=1)), np.flatnonzero(valid.any(axis=0))
        if rows.size == 0:
            by[scenario] = empty_metrics()
            continue
        grid = np.ix_(rows, columns)
        by[scenario] = block(score(similarity(rows, columns, anytime_visible(scenario)), positive[grid], valid[grid]))
    return by
