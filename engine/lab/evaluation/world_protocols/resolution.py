"""CRST text-to-image retrieval on ``cross_resolution.json``: ``cross_resolution`` scores one gallery per
resolution level, every item encoded with its own resolution label, and one gallery mixing the levels."""

from __future__ import annotations

import numpy as np

from engine.kernel.progress import ProgressFn, no_progress
from engine.kernel.vocabulary import WORLD_RESOLUTIONS
from engine.lab.evaluation.encoding import encode_texts
from engine.lab.evaluation.levels import image_query_level, query_levels, similarity_by_level
from engine.lab.evaluation.scoring import ScoredQueries, block, empty_metrics, pooled, score
from engine.lab.evaluation.world_protocols.common import Report, relevance_rule, require, rgb_gallery, text_notes
from engine.lab.world.benchmarks import relevance_matrix


def cross_resolution(
    model, bench, level: str = "given", batch_size: int = 64, progress: ProgressFn = no_progress,
    text_rewrite: float = 0.0,
) -> Report:
    """CRST text-to-image retrieval per gallery resolution on ``cross_resolution.json``."""
    rule = relevance_rule(bench)
    queries, gallery = bench["queries"], bench["gallery"]
    require(queries, "queries", bench)
    texts = encode_texts(model, [q["text"] for q in queries], batch_size, text_rewrite=text_rewrite)
    used, notes = query_levels(
        [q["text_level"] for q in queries], texts.level_logits, level, image_query_level(model)
    )
    views = rgb_gallery(model, bench, set(used), batch_size, progress)
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
        "notes": notes + text_notes(texts.truncated_batches),
    }
