"""Find similar across an outfit change, measured on the any-time benchmark (docs/training-notes.md, "Find
similar across an outfit change").

The any-time scenarios score same-clothes (ST) and clothing-change (LT) sightings apart. An investigator who
asks for "clothes may have changed" searches a gallery that holds both, so per time mode (DT day, NT night,
AD across the two) the galleries here are the union of the ST and LT scenarios' valid items and the positives
are the same person in any outfit (another camera). Two rankings of the same queries:

- ``plain``: cosine in the gallery embedding (the ``rgb`` view), what find-similar ranks by without the option;
- ``outfit_change``: (cos + λ·likeness) / (1 + λ), the likeness of the heads' readings on the biometric keys
  (no colour where an infrared image is on either side), as ``engine.retrieval.search.outfit_change`` ranks.

Each gets the usual metric block plus ``other_outfit_R@1`` / ``other_outfit_R@10``: the share of queries with a
sighting in other clothes whose first such sighting ranks first / within the first ten.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from engine.lab.evaluation.scoring import block, empty_metrics, score
from engine.lab.world.benchmarks import anytime_masks
from engine.retrieval.evidence.likeness import OUTFIT_CHANGE_WEIGHT, likeness, outfit_change_keys, with_similarity

TIME_MODES: tuple[str, ...] = ("DT", "NT", "AD")
RULE = "(cos + λ·likeness) / (1 + λ): the rgb embedding's cosine and the heads' biometric likeness"


def union_masks(query, gallery, time_mode: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(valid, positive, other outfit) Q×G masks of one time mode with both kinds of sighting in the gallery."""
    valid_st, positive_st = anytime_masks(query, gallery, f"{time_mode}-ST")
    valid_lt, positive_lt = anytime_masks(query, gallery, f"{time_mode}-LT")
    other = positive_lt & valid_lt
    return valid_st | valid_lt, (positive_st & valid_st) | other, other


def first_hit_within(similarity: np.ndarray, valid: np.ndarray, wanted: np.ndarray, k: int) -> float | None:
    """Share of the rows with a ``wanted`` item whose best-ranked one lies within the first ``k`` valid items
    (stable order on ties, as ``score`` ranks)."""
    has = wanted.any(axis=1)
    if not has.any():
        return None
    ranked = np.where(valid, similarity, -np.inf)
    order = np.argsort(-ranked, axis=1, kind="stable")[:, :k]
    return float(np.take_along_axis(wanted, order, axis=1).any(axis=1)[has].mean())


def _metrics(similarity: np.ndarray, positive: np.ndarray, valid: np.ndarray, other: np.ndarray) -> dict[str, Any]:
    out = block(score(similarity, positive, valid))
    out["other_outfit_R@1"] = first_hit_within(similarity, valid, other, 1)
    out["other_outfit_R@10"] = first_hit_within(similarity, valid, other, 10)
    return out


def anytime_outfit_change(bench: Mapping[str, Any], plain_query: np.ndarray, plain_gallery: np.ndarray,
                          query_p: np.ndarray, gallery_p: np.ndarray,
                          weight: float = OUTFIT_CHANGE_WEIGHT) -> dict[str, Any]:
    """{"rule", "weight", "by": {time mode: {"plain": metrics, "outfit_change": metrics}}} from the images'
    gallery embeddings and head probabilities (query rows, then gallery rows)."""
    query, gallery = bench["query"], bench["gallery"]
    by: dict[str, Any] = {}
    for time_mode in TIME_MODES:
        valid, positive, other = union_masks(query, gallery, time_mode)
        rows, columns = np.flatnonzero(valid.any(axis=1)), np.flatnonzero(valid.any(axis=0))
        if rows.size == 0:
            empty = {**empty_metrics(), "other_outfit_R@1": None, "other_outfit_R@10": None}
            by[time_mode] = {"plain": dict(empty), "outfit_change": dict(empty)}
            continue
        grid = np.ix_(rows, columns)
        keys = outfit_change_keys(infrared=time_mode != "DT")
        cosine = np.asarray(plain_query[rows] @ plain_gallery[columns].T, dtype=np.float64)
        mixed = with_similarity(cosine, likeness(query_p[rows], gallery_p[columns], keys), weight)
        by[time_mode] = {name: _metrics(values, positive[grid], valid[grid], other[grid])
                         for name, values in (("plain", cosine), ("outfit_change", mixed))}
    return {"rule": RULE, "weight": weight, "by": by}
