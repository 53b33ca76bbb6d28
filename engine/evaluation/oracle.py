"""The attribute oracle of the query modes: the ceiling a query modality allows (docs/training-notes.md).

For every query of ``modalities.json`` the oracle knows the true attributes of the outfit its text, sketch
and IR image show, but only those the modality can show (``VISIBLE``): a text can state every attribute,
a sketch or an infrared frame shows no colour. It scores each gallery image by the number of those
attributes it shares with the query and ranks by that score, ties broken by a seeded random order. Its
R@1 on the benchmark is what a model that reads every visible attribute perfectly, and nothing else,
could reach: gallery people who differ only in colour are indistinguishable to a sketch or IR query.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from engine.evaluation.errors import EvaluationError
from engine.evaluation.scoring import block, score
from engine.ontology import ATTRIBUTE_KEYS, COLOR_KEYS

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
