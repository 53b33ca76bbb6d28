"""MG-Eval on ``granularity.json`` (docs/methods.md §1.2, §1.3): ``mg_separate`` scores every per-level query in
the gallery view of its level, for each text set asked; ``mg_progressive`` scores the 5-step chains with Top-k
reduction ρ, per step and at the end."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from engine.kernel.keep_rules import DEFAULT_RHO
from engine.kernel.ontology import LEVELS
from engine.kernel.progress import ProgressFn, no_progress
from engine.lab.evaluation.encoding import encode_texts
from engine.lab.evaluation.errors import EvaluationError
from engine.lab.evaluation.levels import image_query_level, query_levels, similarity_by_level
from engine.lab.evaluation.scoring import ScoredQueries, block, empty_metrics, pooled, score
from engine.lab.evaluation.world_protocols.common import Report, relevance_rule, require, rgb_gallery, text_notes
from engine.lab.world.benchmarks import relevance_matrix
from engine.retrieval.metrics.progressive import evaluate_progressive

TEXT_CHOICES: tuple[str, ...] = ("generated", "paraphrased", "both")
#: text set → (benchmark list, field holding the text)
TEXT_SETS: dict[str, tuple[str, str]] = {
    "generated": ("queries", "text"),
    "paraphrased": ("queries", "paraphrase"),
    "reframed": ("queries", "reframed"),
    "handwritten": ("handwritten", "text"),
}


def text_sets(texts: str) -> list[str]:
    """The text sets a ``--texts`` choice evaluates, in report order."""
    if texts not in TEXT_CHOICES:
        raise EvaluationError(f"texts must be one of {list(TEXT_CHOICES)}, got {texts!r}")
    return {"generated": ["generated"], "paraphrased": ["paraphrased", "reframed", "handwritten"],
            "both": ["generated", "paraphrased", "reframed", "handwritten"]}[texts]


def mg_separate(
    model,
    bench,
    level: str = "given",
    batch_size: int = 64,
    progress: ProgressFn = no_progress,
    texts: str = "generated",
    text_rewrite: float = 0.0,
    gallery_views: dict[str, torch.Tensor] | None = None,
) -> Report:
    """Separate granularity assessment (docs/methods.md §1.2) on ``granularity.json``, for each text set asked;
    ``gallery_views`` (level → gallery vectors), when given, keeps the encoded gallery between calls."""
    rule = relevance_rule(bench)
    sets = text_sets(texts)
    require(bench["queries"], "queries", bench)
    blocks: dict[str, Report] = {}
    notes: list[str] = []
    views: dict[str, torch.Tensor] = {} if gallery_views is None else gallery_views
    for name in sets:
        field, key = TEXT_SETS[name]
        queries = bench.get(field)
        if queries is None or any(key not in q for q in queries):
            raise EvaluationError(
                f"benchmark of {bench.get('world')} has no {name} texts; rebuild it (lineup world benchmarks)"
            )
        part, part_notes = _separate_block(model, bench, queries, key, level, batch_size, progress, views,
                                           text_rewrite)
        blocks[name] = part
        notes += [f"{name} texts: {note}" for note in part_notes] if len(sets) > 1 else part_notes
    first = blocks[sets[0]]
    report: Report = {
        "level": level,
        "texts": texts,
        "relevance": rule,
        "queries": first["queries"],
        "gallery": len(bench["gallery"]),
        "overall": first["overall"],
        "by": first["by"],
        "notes": notes,
    }
    if len(sets) > 1 or sets[0] != "generated":
        report["text_sets"] = blocks
    if "level_accuracy" in first:
        report["level_accuracy"] = first["level_accuracy"]
    return report


def _separate_block(
    model, bench, queries, key: str, level: str, batch_size: int, progress: ProgressFn, views: dict,
    text_rewrite: float = 0.0,
) -> tuple[Report, list[str]]:
    """(``{"queries", "overall", "by"[, "level_accuracy"]}``, notes) of one text set; ``views`` caches the
    gallery views between sets."""
    given = [q["level"] for q in queries]
    texts = encode_texts(model, [q[key] for q in queries], batch_size, text_rewrite=text_rewrite)
    used, notes = query_levels(given, texts.level_logits, level, image_query_level(model))
    missing = set(used) - set(views)
    if missing:
        views.update(rgb_gallery(model, bench, missing, batch_size, progress))
    similarity = similarity_by_level(texts.vectors, used, views)
    relevance = relevance_matrix(bench, queries)
    groups: dict[str, ScoredQueries] = {}
    for lv in LEVELS:
        rows = [i for i, g in enumerate(given) if g == lv]
        if rows:
            groups[lv] = score(similarity[rows], relevance[rows])
    part: Report = {
        "queries": len(queries),
        "overall": pooled(list(groups.values())),
        "by": {lv: block(groups[lv]) if lv in groups else empty_metrics() for lv in LEVELS},
    }
    if level == "auto" and texts.level_logits is not None:
        part["level_accuracy"] = float(np.mean([u == g for u, g in zip(used, given, strict=True)]))
    return part, notes + text_notes(texts.truncated_batches)


def mg_progressive(
    model,
    bench,
    level: str = "given",
    rho: float = DEFAULT_RHO,
    batch_size: int = 64,
    progress: ProgressFn = no_progress,
    text_rewrite: float = 0.0,
) -> Report:
    """Progressive granularity assessment (docs/methods.md §1.3) on the chains of ``granularity.json``."""
    chains = bench["chains"]
    require(chains, "progressive chains", bench)
    n_steps = len(chains[0]["steps"])
    if any(len(c["steps"]) != n_steps for c in chains):
        raise EvaluationError(f"benchmark chains of {bench.get('world')} do not all have {n_steps} steps")
    flat = [step for c in chains for step in c["steps"]]  # chain-major: row = chain * n_steps + step
    texts = encode_texts(model, [s["text"] for s in flat], batch_size, text_rewrite=text_rewrite)
    used, notes = query_levels(
        [s["level"] for s in flat], texts.level_logits, level, image_query_level(model)
    )
    views = rgb_gallery(model, bench, set(used), batch_size, progress)
    step_scores, step_relevance = [], []
    for j in range(n_steps):
        rows = list(range(j, len(flat), n_steps))
        step_scores.append(similarity_by_level(texts.vectors[rows], [used[i] for i in rows], views))
        step_relevance.append(relevance_matrix(bench, [c["steps"][j] for c in chains]))
    result, _, _ = evaluate_progressive(step_scores, step_relevance[-1], rho=rho)
    final = score(result.stage_scores, step_relevance[-1], order=result.order)
    keys = _step_keys(chains, n_steps)
    by: Report = {}
    for j in range(n_steps):
        partial = (
            final if j == n_steps - 1 else _progressive_block(step_scores[: j + 1], step_relevance[j], rho)
        )
        by[keys[j]] = block(partial)
    report: Report = {
        "level": level,
        "relevance": relevance_rule(bench),
        "rho": rho,
        "queries": len(chains),
        "gallery": len(bench["gallery"]),
        "overall": block(final),
        "by": by,
        "steps": _step_summary(keys, result.candidate_counts, result.last_step, step_relevance[-1]),
        "notes": notes + text_notes(texts.truncated_batches),
    }
    if level == "auto" and texts.level_logits is not None:
        given = [s["level"] for s in flat]
        report["level_accuracy"] = float(np.mean([u == g for u, g in zip(used, given, strict=True)]))
    return report


def _progressive_block(steps: list[np.ndarray], relevance: np.ndarray, rho: float) -> ScoredQueries:
    result, _, _ = evaluate_progressive(steps, relevance, rho=rho)
    return score(result.stage_scores, relevance, order=result.order)


def _step_keys(chains: Sequence[Mapping[str, Any]], n_steps: int) -> list[str]:
    """Per step its level when every chain agrees on it and no earlier step has it, else "step<j+1>"."""
    keys: list[str] = []
    for j in range(n_steps):
        levels = {c["steps"][j]["level"] for c in chains}
        key = levels.pop() if len(levels) == 1 else f"step{j + 1}"
        keys.append(f"step{j + 1}" if key in keys else key)
    return keys


def _step_summary(
    keys: list[str], counts: np.ndarray, last_step: np.ndarray, relevance: np.ndarray
) -> list[Report]:
    """Per step: level, mean |G^j| before and after its cut, share of final positives still candidates."""
    n_steps = counts.shape[1]
    has_positive = relevance.any(axis=1)
    out = []
    for j in range(n_steps):
        after = counts[:, j + 1] if j + 1 < n_steps else counts[:, j]
        survivors = last_step > j if j + 1 < n_steps else last_step == j
        kept = (survivors & relevance).sum(axis=1)
        share = kept[has_positive] / relevance.sum(axis=1)[has_positive]
        out.append(
            {
                "level": keys[j],
                "candidates_before": float(counts[:, j].mean()),
                "candidates_after": float(after.mean()),
                "positives_kept": float(share.mean()) if share.size else None,
            }
        )
    return out
