"""One-pass summary of a retrieval run: R@1/5/10, mAP, mINP (docs/methods.md §5) and mSD (docs/methods.md §1.4)."""

from __future__ import annotations

import numpy as np

from engine.retrieval.metrics._arrays import MetricInputError, iter_ranked
from engine.retrieval.metrics.msd import sd_ranked
from engine.retrieval.metrics.retrieval import RetrievalReport, collect, ranked_stats

SUMMARY_KEYS: tuple[str, ...] = ("R@1", "R@5", "R@10", "mAP", "mINP", "mSD")


def evaluate_all(
    similarity, relevance, valid=None, order=None, cosine: bool = True, rows_per_chunk: int | None = None
) -> tuple[RetrievalReport, np.ndarray]:
    """Ranking report and per-query SD from a single ranking pass over the row chunks."""
    stats, sds = [], []
    for chunk in iter_ranked(similarity, relevance, valid, order, rows_per_chunk):
        stats.append(ranked_stats(chunk))
        sds.append(sd_ranked(chunk, cosine))
    if not stats:
        raise MetricInputError("similarity has no query rows")
    return collect(stats), np.concatenate(sds)


def summarise(
    similarity, relevance, valid=None, order=None, cosine: bool = True, rows_per_chunk: int | None = None
) -> dict[str, float]:
    """{"R@1", "R@5", "R@10", "mAP", "mINP", "mSD"} as fractions in [0, 1].

    ``similarity`` Q×G (numpy or torch, cosines when ``cosine``), ``relevance`` Q×G bool, optional
    ``valid`` mask and explicit ``order``. Queries without a valid positive are skipped; use
    ``evaluate_all`` to see how many.
    """
    report, sd = evaluate_all(similarity, relevance, valid, order, cosine, rows_per_chunk)
    return summary_from(report, sd)


def summary_from(report: RetrievalReport, sd: np.ndarray) -> dict[str, float]:
    """The six summary figures from a ranking report and the per-query SD values."""
    return {
        "R@1": report.recall_at(1),
        "R@5": report.recall_at(5),
        "R@10": report.recall_at(10),
        "mAP": report.mean_ap,
        "mINP": report.mean_inp,
        "mSD": float(np.mean(sd[report.evaluated])),
    }
