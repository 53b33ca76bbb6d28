"""The five protocols on a world's benchmark files (``engine.lab.world.benchmarks``), each one function taking
the model and a loaded benchmark and returning the protocol's part of the report.

- ``mg_separate`` (docs/methods.md §1.2): every per-level query against the RGB HR gallery, each in the gallery
  view of its level; ``by`` the benchmark level; ``overall`` pooled over all queries. ``texts`` picks the
  phrasings: ``generated`` (the training generator's), ``paraphrased`` (the same queries in held-out words
  and frames; in held-out frames with plain words, ``reframed``; and the hand-written set) or ``both``;
  each set's block is in ``text_sets`` and ``overall``/``by`` are the first set's.
- ``mg_progressive`` (docs/methods.md §1.3): every 5-step chain with Top-k reduction ρ; the final list is scored
  against the last step's relevant set; ``steps`` the mean candidate counts and the share of final
  positives still candidates after each step; ``by`` the chain stopped after the step of each level
  (scored against that step's relevant set), so ``by`` of the last level equals ``overall``.
- ``modes`` (FlexiReID, docs/methods.md §4): the seven query modes against the RGB HR gallery via ``model.fuse``;
  a model without fusion uses its plain encoders for T, S and IR and the normalised mean of their unit
  vectors for combined modes (said in ``fusion``); ``overall`` pooled over all (query, mode) pairs;
  ``oracle`` the attribute oracle's ceiling per single mode (``engine.lab.evaluation.oracle``).
- ``cross_resolution`` (CRST): text queries; ``by`` a gallery of one resolution level each, every item
  encoded with its own resolution label (the same images at every level); ``overall`` pooled over the
  four; ``mixed`` one gallery of every image at a seeded level.
- ``anytime`` (Uni-AT, docs/methods.md §3): ``encode_reid`` per scenario with ``anytime_masks``; ``overall`` the
  mean of the six scenario blocks; ``by["any-time"]`` = {"score": mean of the six R@1 and the six mAP,
  "R@1": mean R@1, "mAP": mean mAP}; ``oracle`` the attribute oracle's ceiling per scenario when the benchmark's
  items carry attributes (same clothes: every shared attribute; clothing change: the biometrics; no colour
  with IR); ``heads`` the same scenarios ranked by the model's own attribute heads on the oracle's keys
  (``engine.lab.evaluation.attribute_reading``) when the model has them, and ``outfit_change`` find-similar with and
  without "clothes may have changed" on galleries holding both kinds of sighting (``engine.lab.evaluation.
  outfit_change``).

Every report states its benchmark's relevance rule (``relevance``). Gallery images are encoded once per
view they need; vectors never leave the CPU as more than Q×G floats.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from engine.kernel.keep_rules import DEFAULT_RHO
from engine.kernel.ontology import LEVELS
from engine.kernel.progress import ProgressFn, no_progress
from engine.kernel.vocabulary import WORLD_RESOLUTIONS
from engine.lab.evaluation.attribute_reading import anytime_heads, vectors_and_head_probabilities
from engine.lab.evaluation.encoding import (
    counting_truncation,
    encode_image_batches,
    encode_texts,
    model_resolution,
    prepared_images,
)
from engine.lab.evaluation.errors import EvaluationError
from engine.lab.evaluation.levels import gallery_views, image_query_level, query_levels, similarity_by_level
from engine.lab.evaluation.oracle import anytime_oracle, attribute_oracle
from engine.lab.evaluation.outfit_change import anytime_outfit_change
from engine.lab.evaluation.scoring import ScoredQueries, block, empty_metrics, mean_of_groups, pooled, score
from engine.lab.world.benchmarks import MODES, RELEVANCE, SCENARIOS, anytime_masks, relevance_matrix
from engine.retrieval.evidence.model_heads import has_heads
from engine.retrieval.metrics.progressive import evaluate_progressive

Report = dict[str, Any]
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


def _relevance_rule(bench: Mapping[str, Any]) -> str:
    """The rule the benchmark file states, else (a benchmark assembled in memory) its kind's rule."""
    rule = bench.get("relevance", RELEVANCE.get(bench.get("benchmark")))
    if not isinstance(rule, str):
        raise EvaluationError(f"benchmark {bench.get('benchmark')!r} of {bench.get('world')} states no relevance rule")
    return rule


def _paths(bench: Mapping[str, Any], items: Sequence[Mapping[str, Any]]) -> list[Path]:
    world = Path(bench["world"])
    return [world / item["image"] for item in items]


def _resolutions(items: Sequence[Mapping[str, Any]]) -> list[str]:
    return [model_resolution(item["resolution"]) for item in items]


def _require(rows: Sequence[Any], what: str, bench: Mapping[str, Any]) -> None:
    if not rows:
        raise EvaluationError(f"benchmark {bench.get('benchmark')!r} of {bench.get('world')} has no {what}")


def _text_notes(truncated_batches: int, where: str = "") -> list[str]:
    if not truncated_batches:
        return []
    where = f" {where}" if where else ""
    return [
        f"descriptions longer than the text context were truncated{where} ({truncated_batches} text batches)"
    ]


def _rgb_gallery(
    model, bench, levels: set[str], batch_size: int, progress: ProgressFn
) -> dict[str, torch.Tensor]:
    gallery = bench["gallery"]
    _require(gallery, "gallery items", bench)
    return gallery_views(
        model, _paths(bench, gallery), levels, "rgb", _resolutions(gallery), batch_size, progress
    )


# -------------------------------------------------------------------------------------- MG-Eval separate


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
    rule = _relevance_rule(bench)
    sets = text_sets(texts)
    _require(bench["queries"], "queries", bench)
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
        views.update(_rgb_gallery(model, bench, missing, batch_size, progress))
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
    return part, notes + _text_notes(texts.truncated_batches)


# ----------------------------------------------------------------------------------- MG-Eval progressive


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
    _require(chains, "progressive chains", bench)
    n_steps = len(chains[0]["steps"])
    if any(len(c["steps"]) != n_steps for c in chains):
        raise EvaluationError(f"benchmark chains of {bench.get('world')} do not all have {n_steps} steps")
    flat = [step for c in chains for step in c["steps"]]  # chain-major: row = chain * n_steps + step
    texts = encode_texts(model, [s["text"] for s in flat], batch_size, text_rewrite=text_rewrite)
    used, notes = query_levels(
        [s["level"] for s in flat], texts.level_logits, level, image_query_level(model)
    )
    views = _rgb_gallery(model, bench, set(used), batch_size, progress)
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
        "relevance": _relevance_rule(bench),
        "rho": rho,
        "queries": len(chains),
        "gallery": len(bench["gallery"]),
        "overall": block(final),
        "by": by,
        "steps": _step_summary(keys, result.candidate_counts, result.last_step, step_relevance[-1]),
        "notes": notes + _text_notes(texts.truncated_batches),
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


# ---------------------------------------------------------------------------------------------- modes


def modes(
    model, bench, level: str = "given", batch_size: int = 64, progress: ProgressFn = no_progress,
    text_rewrite: float = 0.0,
) -> Report:
    """The seven query modes of FlexiReID on ``modalities.json`` (RGB HR gallery, same-outfit positives),
    with the attribute oracle's ceiling for T, S and IR."""
    rule = _relevance_rule(bench)
    queries = bench["queries"]
    _require(queries, "queries", bench)
    texts = encode_texts(model, [q["text"] for q in queries], batch_size, text_rewrite=text_rewrite)
    image_level = image_query_level(model)
    text_levels, notes = query_levels(
        [q["text_level"] for q in queries], texts.level_logits, level, image_level
    )
    views = _rgb_gallery(model, bench, set(text_levels) | {image_level}, batch_size, progress)
    relevance = relevance_matrix(bench)
    fusion_kind = model.config.fusion.kind
    if fusion_kind == "none":
        vectors = _unfused_modes(model, bench, texts.vectors, image_level, batch_size)
        fusion = (
            "none: T, S, IR from the plain encoders, combined modes the normalised mean of their unit vectors"
        )
    else:
        vectors = {}
        for mode in MODES:
            vectors[mode], truncated = _fused_mode(model, bench, mode, batch_size)
            if truncated:
                notes.extend(_text_notes(truncated, f"in fused mode {mode}"))
        fusion = fusion_kind
        if text_rewrite:
            notes.append(f"text rewrite weight {text_rewrite:g} unused: the fused modes encode each text as written")
    mismatched = sum(q["sketch"]["resolution"] != q["ir"]["resolution"] for q in queries)
    if mismatched and fusion_kind != "none":
        notes.append(
            f"{mismatched} queries have sketch and IR at different resolutions; fused modes with IR "
            "encode both with the IR image's resolution label"
        )
    groups = {}
    for mode in MODES:
        mode_levels = text_levels if "T" in mode.split("+") else [image_level] * len(queries)
        groups[mode] = score(similarity_by_level(vectors[mode], mode_levels, views), relevance)
    return {
        "level": level,
        "relevance": rule,
        "fusion": fusion,
        "queries": len(queries),
        "gallery": len(bench["gallery"]),
        "overall": pooled(list(groups.values())),
        "by": {mode: block(groups[mode]) for mode in MODES},
        "oracle": attribute_oracle(bench, relevance),
        "notes": notes + _text_notes(texts.truncated_batches),
    }


def _fused_mode(model, bench, mode: str, batch_size: int) -> tuple[torch.Tensor, int]:
    """(``model.fuse`` for one mode over all queries (only the mode's modalities given), batches in which
    the text was truncated)."""
    queries = bench["queries"]
    parts = mode.split("+")
    sketch_paths = _paths(bench, [q["sketch"] for q in queries])
    ir_paths = _paths(bench, [q["ir"] for q in queries])
    image_side = "ir" if "IR" in parts else "sketch"
    out, truncated = [], 0
    for start in range(0, len(queries), batch_size):
        rows = slice(start, min(start + batch_size, len(queries)))
        batch = queries[rows]
        fused, was_truncated = counting_truncation(
            model.fuse,
            text=[q["text"] for q in batch] if "T" in parts else None,
            sketch=prepared_images(model, sketch_paths[rows]) if "S" in parts else None,
            ir=prepared_images(model, ir_paths[rows]) if "IR" in parts else None,
            resolution=[model_resolution(q[image_side]["resolution"]) for q in batch],
        )
        out.append(fused.detach().float().cpu())
        truncated += was_truncated
    return torch.cat(out), truncated


def _unfused_modes(model, bench, text_vectors: torch.Tensor, image_level: str, batch_size: int) -> dict:
    queries = bench["queries"]
    single = {"T": text_vectors}
    for mode, key, modality in (("S", "sketch", "sketch"), ("IR", "ir", "ir")):
        items = [q[key] for q in queries]
        resolutions = _resolutions(items)
        single[mode] = encode_image_batches(
            model,
            _paths(bench, items),
            lambda images, rows, m=modality, r=resolutions: model.encode_images(
                images, m, image_level, r[rows]
            ),
            batch_size,
        )
    out = {}
    for mode in MODES:
        stacked = torch.stack([F.normalize(single[part], dim=-1) for part in mode.split("+")])
        out[mode] = F.normalize(stacked.mean(dim=0), dim=-1)
    return out


# ----------------------------------------------------------------------------------- cross-resolution


def cross_resolution(
    model, bench, level: str = "given", batch_size: int = 64, progress: ProgressFn = no_progress,
    text_rewrite: float = 0.0,
) -> Report:
    """CRST text-to-image retrieval per gallery resolution on ``cross_resolution.json``."""
    rule = _relevance_rule(bench)
    queries, gallery = bench["queries"], bench["gallery"]
    _require(queries, "queries", bench)
    texts = encode_texts(model, [q["text"] for q in queries], batch_size, text_rewrite=text_rewrite)
    used, notes = query_levels(
        [q["text_level"] for q in queries], texts.level_logits, level, image_query_level(model)
    )
    views = _rgb_gallery(model, bench, set(used), batch_size, progress)
    similarity = similarity_by_level(texts.vectors, used, views)
    relevance = relevance_matrix(bench)
    labels = np.array([item["resolution"] for item in gallery])
    groups: dict[str, ScoredQueries] = {}
    for resolution in WORLD_RESOLUTIONS:
        columns = np.flatnonzero(labels == resolution)
        if columns.size:
            groups[resolution] = score(similarity[:, columns], relevance[:, columns])
    mixed = np.asarray(bench["mixed"], dtype=np.int64)
    return {
        "level": level,
        "relevance": rule,
        "queries": len(queries),
        "gallery": len(gallery),
        "gallery_per_resolution": {r: int((labels == r).sum()) for r in WORLD_RESOLUTIONS},
        "overall": pooled(list(groups.values())),
        "by": {r: block(groups[r]) if r in groups else empty_metrics() for r in WORLD_RESOLUTIONS},
        "mixed": block(score(similarity[:, mixed], relevance[:, mixed])),
        "notes": notes + _text_notes(texts.truncated_batches),
    }


# ------------------------------------------------------------------------------------------- any-time


def anytime(model, bench, batch_size: int = 64, progress: ProgressFn = no_progress) -> Report:
    """Uni-AT any-time re-identification on ``anytime.json`` (six scenarios, docs/methods.md §3)."""
    if not model.config.scenarios.enabled:
        raise EvaluationError(
            "the anytime protocol needs scenario tokens, and this model has none "
            f"(config {model.config.name!r}: scenarios.enabled is false; `lineup checkpoint info` says why)"
        )
    query, gallery = bench["query"], bench["gallery"]
    _require(query, "query images", bench)
    _require(gallery, "gallery images", bench)
    query_paths, gallery_paths = _paths(bench, query), _paths(bench, gallery)
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
    report = {"relevance": _relevance_rule(bench), "queries": len(query), "gallery": len(gallery),
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
    resolutions = _resolutions(items)

    def encode(images: torch.Tensor, rows: slice) -> torch.Tensor:
        return model.encode_images(images, modalities[rows], None, resolutions[rows])

    return encode_image_batches(model, paths, encode, batch_size)


def _reid_vectors(
    model, paths: list[Path], items: list[Mapping[str, Any]], scenario: str, batch_size: int
) -> torch.Tensor:
    modalities = [item["modality"] for item in items]
    resolutions = _resolutions(items)

    def encode(images: torch.Tensor, rows: slice) -> torch.Tensor:
        return model.encode_reid(images, scenario, modality=modalities[rows], resolution=resolutions[rows])

    return encode_image_batches(model, paths, encode, batch_size)
