"""Ranking by the model's own attribute heads: the reachable counterpart of the attribute oracle.

The any-time oracle (``engine.evaluation.oracle``) ranks by the true attributes a scenario lets identify a
person. This module ranks by what the checkpoint's image attribute heads read instead: each image's softmax
over every visible key's values, and a query–gallery score equal to the mean over the keys of the probability
that both images show the same value, Σ_v p_q(v)·p_g(v) (1 when both heads are sure and agree, 0 when they
are sure and disagree). With one-hot probabilities it is the oracle's share of agreeing keys. It measures how
far the heads alone carry a scenario, notably across a clothing change, where only the biometrics identify
a person (docs/training-notes.md, "The clothing-change ceiling").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from engine.evaluation.encoding import encode_image_batches, model_resolution
from engine.evaluation.oracle import anytime_visible, score_scenarios
from engine.ontology import ATTRIBUTE_KEYS, ONTOLOGY
from engine.progress import ProgressFn, no_progress
from engine.world.benchmarks import SCENARIOS

SCORE_RULE = "mean over the scenario's visible keys of Σ_v p_query(v)·p_gallery(v), from the image attribute heads"


def key_columns(keys: Sequence[str]) -> np.ndarray:
    """The columns of ``keys`` in a probability row laid out key by key in ontology order."""
    starts = np.cumsum([0] + [len(ONTOLOGY.attributes[key]) for key in ATTRIBUTE_KEYS])
    unknown = [key for key in keys if key not in ATTRIBUTE_KEYS]
    if unknown:
        raise ValueError(f"unknown attribute keys {unknown}; keys: {list(ATTRIBUTE_KEYS)}")
    spans = [np.arange(starts[ATTRIBUTE_KEYS.index(key)], starts[ATTRIBUTE_KEYS.index(key) + 1]) for key in keys]
    return np.concatenate(spans) if spans else np.zeros(0, dtype=np.int64)


def head_probabilities(model, paths: Sequence[Path], items: Sequence[Mapping[str, Any]], batch_size: int,
                       progress: ProgressFn = no_progress) -> np.ndarray:
    """[N, Σ|V|] float32: each image's softmax per key, keys in ontology order, read with its own modality
    and resolution label."""
    modalities = [item["modality"] for item in items]
    resolutions = [model_resolution(item["resolution"]) for item in items]

    def encode(images: torch.Tensor, rows: slice) -> torch.Tensor:
        logits = model.image_attribute_logits(images, modalities[rows], None, resolutions[rows])
        return torch.cat([torch.softmax(logits[key].float(), dim=-1) for key in ATTRIBUTE_KEYS], dim=1)

    with torch.no_grad():
        return encode_image_batches(model, list(paths), encode, batch_size, progress).numpy()


def agreement(query: np.ndarray, gallery: np.ndarray, keys: Sequence[str]) -> np.ndarray:
    """Q×G mean over ``keys`` of the probability that query and gallery image show the same value (in [0, 1])."""
    if not keys:
        raise ValueError("agreement needs at least one attribute key")
    columns = key_columns(keys)
    return (query[:, columns].astype(np.float64) @ gallery[:, columns].T.astype(np.float64)) / len(keys)


def anytime_heads(model, bench: Mapping[str, Any], query_paths: Sequence[Path], gallery_paths: Sequence[Path],
                  batch_size: int, progress: ProgressFn = no_progress) -> dict[str, Any]:
    """{"visible", "score", "by": {scenario: metric block}}: the any-time scenarios ranked by the heads'
    agreement on the oracle's visible keys, under the protocol's own masks; ``progress`` follows the heads' pass."""
    query, gallery = bench["query"], bench["gallery"]
    probabilities = head_probabilities(model, list(query_paths) + list(gallery_paths), list(query) + list(gallery),
                                       batch_size, progress)
    query_p, gallery_p = probabilities[: len(query)], probabilities[len(query):]

    def similarity(rows: np.ndarray, columns: np.ndarray, keys: tuple[str, ...]) -> np.ndarray:
        return agreement(query_p[rows], gallery_p[columns], keys)

    return {"visible": {scenario: list(anytime_visible(scenario)) for scenario in SCENARIOS}, "score": SCORE_RULE,
            "by": score_scenarios(query, gallery, similarity)}
