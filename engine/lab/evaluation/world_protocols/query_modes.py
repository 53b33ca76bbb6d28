"""FlexiReID's seven query modes on ``modalities.json`` (docs/methods.md §4): ``modes`` scores each mode against
the RGB HR gallery via ``model.fuse``, or, for a model without fusion, its plain encoders and the normalised mean
of their unit vectors; with the attribute oracle's ceiling per single mode."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from engine.kernel.progress import ProgressFn, no_progress
from engine.lab.evaluation.encoding import (
    counting_truncation,
    encode_image_batches,
    encode_texts,
    model_resolution,
    prepared_images,
)
from engine.lab.evaluation.levels import image_query_level, query_levels, similarity_by_level
from engine.lab.evaluation.oracle import attribute_oracle
from engine.lab.evaluation.scoring import block, pooled, score
from engine.lab.evaluation.world_protocols.common import (
    Report,
    item_paths,
    item_resolutions,
    relevance_rule,
    require,
    rgb_gallery,
    text_notes,
)
from engine.lab.world.benchmarks import MODES, relevance_matrix


def modes(
    model, bench, level: str = "given", batch_size: int = 64, progress: ProgressFn = no_progress,
    text_rewrite: float = 0.0,
) -> Report:
    """The seven query modes of FlexiReID on ``modalities.json`` (RGB HR gallery, same-outfit positives),
    with the attribute oracle's ceiling for T, S and IR."""
    rule = relevance_rule(bench)
    queries = bench["queries"]
    require(queries, "queries", bench)
    texts = encode_texts(model, [q["text"] for q in queries], batch_size, text_rewrite=text_rewrite)
    image_level = image_query_level(model)
    text_levels, notes = query_levels(
        [q["text_level"] for q in queries], texts.level_logits, level, image_level
    )
    views = rgb_gallery(model, bench, set(text_levels) | {image_level}, batch_size, progress)
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
                notes.extend(text_notes(truncated, f"in fused mode {mode}"))
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
        "notes": notes + text_notes(texts.truncated_batches),
    }


def _fused_mode(model, bench, mode: str, batch_size: int) -> tuple[torch.Tensor, int]:
    """(``model.fuse`` for one mode over all queries (only the mode's modalities given), batches in which
    the text was truncated)."""
    queries = bench["queries"]
    parts = mode.split("+")
    sketch_paths = item_paths(bench, [q["sketch"] for q in queries])
    ir_paths = item_paths(bench, [q["ir"] for q in queries])
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
        resolutions = item_resolutions(items)
        single[mode] = encode_image_batches(
            model,
            item_paths(bench, items),
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
