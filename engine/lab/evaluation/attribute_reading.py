"""Ranking by the model's own attribute heads: the reachable counterpart of the attribute oracle.

The any-time oracle (``engine.lab.evaluation.oracle``) ranks by the true attributes a scenario lets identify a
person. This module ranks by what the checkpoint's image attribute heads read instead: each image's softmax
over every visible key's values, and a query–gallery score equal to their likeness (``engine.perception.attributes.
likeness``), the rule find-similar across an outfit change searches with (``engine.retrieval.search.outfit_change``).
With one-hot probabilities it is the oracle's share of agreeing keys. It measures how far the heads alone
carry a scenario, notably across a clothing change, where only the biometrics identify a person
(docs/training-notes.md, "The clothing-change ceiling").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from engine.kernel.ontology import ATTRIBUTE_KEYS
from engine.kernel.progress import ProgressFn, no_progress
from engine.lab.evaluation.encoding import encode_image_batches, model_resolution
from engine.lab.evaluation.oracle import anytime_visible, score_scenarios
from engine.lab.world.benchmarks import SCENARIOS
from engine.retrieval.evidence.likeness import RULE, likeness

SCORE_RULE = f"likeness of the image attribute heads' readings on the scenario's visible keys: {RULE}"


def vectors_and_head_probabilities(model, paths: Sequence[Path], items: Sequence[Mapping[str, Any]], batch_size: int,
                                   progress: ProgressFn = no_progress) -> tuple[np.ndarray, np.ndarray]:
    """(gallery embeddings [N, D], head probabilities [N, Σ|V|]: each key's softmax, keys in ontology order) of
    every image from one visual pass each, with its own modality and resolution label, at the image query
    level."""
    modalities = [item["modality"] for item in items]
    resolutions = [model_resolution(item["resolution"]) for item in items]
    width: list[int] = []

    def encode(images: torch.Tensor, rows: slice) -> torch.Tensor:
        vectors, logits = model.encode_images_with_attributes(images, modalities[rows], None, resolutions[rows])
        width[:] = [vectors.shape[1]]
        probabilities = [torch.softmax(logits[key].float(), dim=-1) for key in ATTRIBUTE_KEYS]
        return torch.cat([vectors.float(), *probabilities], dim=1)

    with torch.no_grad():
        both = encode_image_batches(model, list(paths), encode, batch_size, progress).numpy()
    return both[:, : width[0]], both[:, width[0]:]


def anytime_heads(bench: Mapping[str, Any], query_p: np.ndarray, gallery_p: np.ndarray) -> dict[str, Any]:
    """{"visible", "score", "by": {scenario: metric block}}: the any-time scenarios ranked by the heads'
    likeness (``vectors_and_head_probabilities`` of the query and gallery images) on the oracle's keys, under the
    protocol's own masks."""
    query, gallery = bench["query"], bench["gallery"]

    def similarity(rows: np.ndarray, columns: np.ndarray, keys: tuple[str, ...]) -> np.ndarray:
        return likeness(query_p[rows], gallery_p[columns], keys)

    return {"visible": {scenario: list(anytime_visible(scenario)) for scenario in SCENARIOS}, "score": SCORE_RULE,
            "by": score_scenarios(query, gallery, similarity)}
