"""Uni-AT any-time re-identification on ``anytime.json`` (docs/methods.md §3): ``anytime`` scores the six
scenarios with ``encode_reid``, beside the plain gallery embedding, the attribute oracle's ceiling, the model's
attribute heads and find-similar across an outfit change."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from engine.kernel.progress import ProgressFn, no_progress
from engine.lab.evaluation.attribute_reading import anytime_heads, vectors_and_head_probabilities
from engine.lab.evaluation.encoding import encode_image_batches
from engine.lab.evaluation.errors import EvaluationError
from engine.lab.evaluation.oracle import anytime_oracle
from engine.lab.evaluation.outfit_change import anytime_outfit_change
from engine.lab.evaluation.scoring import block, empty_metrics, mean_of_groups, score
from engine.lab.evaluation.world_protocols.common import Report, item_paths, item_resolutions, relevance_rule, require
from engine.lab.world.benchmarks import SCENARIOS, anytime_masks
from engine.retrieval.evidence.model_heads import has_heads


def anytime(model, bench, batch_size: int = 64, progress: ProgressFn = no_progress) -> Report:
    """Uni-AT any-time re-identification on ``anytime.json`` (six scenarios, docs/methods.md §3)."""
    if not model.config.scenarios.enabled:
        raise EvaluationError(
            "the anytime protocol needs scenario tokens, and this model has none "
            f"(config {model.config.name!r}: scenarios.enabled is false; `lineup checkpoint info` says why)"
        )
    query, gallery = bench["query"], bench["gallery"]
    require(query, "query images", bench)
    require(gallery, "gallery images", bench)
    query_paths, gallery_paths = item_paths(bench, query), item_paths(bench, gallery)
    probabilities = None
    if has_heads(model):  # the plain embedding and the heads' readings from one pass
        plain_np, probabilities = vectors_and_head_probabilities(model, query_paths + gallery_paths,
                                                                 list(query) + list(gallery), batch_size, progress)
        plain = torch.from_numpy(plain_np)
    else:
        plain = _plain_vectors(model, query_paths + gallery_paths, list(query) + list(gallery), batch_size)
    plain_query, plain_gallery = plain[: len(query)], plain[len(query):]
    by: Report = {}
    plain_by: Report = {}
    notes: list[str] = []
    for scenario in SCENARIOS:
        valid, positive = anytime_masks(query, gallery, scenario)
        rows, columns = np.flatnonzero(valid.any(axis=1)), np.flatnonzero(valid.any(axis=0))
        if rows.size == 0:  # skipped, reported as empty: the other scenarios are still scored
            by[scenario] = empty_metrics()
            plain_by[scenario] = empty_metrics()
            notes.append(f"{scenario}: skipped, no query has a positive in this benchmark")
            progress(SCENARIOS.index(scenario) + 1, len(SCENARIOS))
            continue
        vectors = _reid_vectors(  # query rows and gallery columns in one pass of batches
            model,
            [query_paths[i] for i in rows] + [gallery_paths[j] for j in columns],
            [query[i] for i in rows] + [gallery[j] for j in columns],
            scenario,
            batch_size,
        )
        similarity = (vectors[: rows.size] @ vectors[rows.size :].T).numpy()
        grid = np.ix_(rows, columns)
        by[scenario] = block(score(similarity, positive[grid], valid[grid]))
        plain_similarity = (plain_query[rows] @ plain_gallery[columns].T).numpy()
        plain_by[scenario] = block(score(plain_similarity, positive[grid], valid[grid]))
        progress(SCENARIOS.index(scenario) + 1, len(SCENARIOS))
    overall = mean_of_groups([by[s] for s in SCENARIOS])
    missing = [s for s in SCENARIOS if by[s]["queries"] == 0]
    if missing:
        notes.append(
            f"overall and the any-time score average the scenarios with queries only (missing {missing})"
        )
    by["any-time"] = _anytime_summary(overall)
    plain_overall = mean_of_groups([plain_by[s] for s in SCENARIOS])
    plain_by["any-time"] = _anytime_summary(plain_overall)
    report = {"relevance": relevance_rule(bench), "queries": len(query), "gallery": len(gallery),
              "overall": overall, "by": by,
              "plain_view": {"view": "the gallery embedding (no scenario token), as find-similar searches",
                             "overall": plain_overall, "by": plain_by},
              "notes": notes}
    if all(isinstance(item.get("attributes"), Mapping) for item in list(query) + list(gallery)):
        report["oracle"] = anytime_oracle(bench)
    else:
        notes.append("no attribute oracle: this benchmark's items carry no attributes "
                     "(rebuild it with lineup world benchmarks)")
    if probabilities is not None:
        query_p, gallery_p = probabilities[: len(query)], probabilities[len(query):]
        report["heads"] = anytime_heads(bench, query_p, gallery_p)
        report["outfit_change"] = anytime_outfit_change(bench, plain_query.numpy(), plain_gallery.numpy(),
                                                        query_p, gallery_p)
    else:
        notes.append("no attribute-head ranking: this model has no image attribute heads")
    return report


def _anytime_summary(overall: Mapping[str, Any]) -> dict[str, Any]:
    score_value = None if overall["queries"] == 0 else (overall["R@1"] + overall["mAP"]) / 2
    return {"score": score_value, "R@1": overall["R@1"], "mAP": overall["mAP"]}


def _plain_vectors(model, paths: list[Path], items: list[Mapping[str, Any]], batch_size: int) -> torch.Tensor:
    """Every image's gallery embedding (its modality, the image query level), for the scenario-free baseline."""
    modalities = [item["modality"] for item in items]
    resolutions = item_resolutions(items)

    def encode(images: torch.Tensor, rows: slice) -> torch.Tensor:
        return model.encode_images(images, modalities[rows], None, resolutions[rows])

    return encode_image_batches(model, paths, encode, batch_size)


def _reid_vectors(
    model, paths: list[Path], items: list[Mapping[str, Any]], scenario: str, batch_size: int
) -> torch.Tensor:
    modalities = [item["modality"] for item in items]
    resolutions = item_resolutions(items)

    def encode(images: torch.Tensor, rows: slice) -> torch.Tensor:
        return model.encode_reid(images, scenario, modality=modalities[rows], resolution=resolutions[rows])

    return encode_image_batches(model, paths, encode, batch_size)
