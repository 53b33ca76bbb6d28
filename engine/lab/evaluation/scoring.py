"""Metric blocks of an evaluation report: {"R@1", "R@5", "R@10", "mAP", "mINP", "mSD", "queries"}.

Metrics are fractions in [0, 1] (docs/methods.md §5, §1.4); ``queries`` counts the queries evaluated (those with
at least one valid positive). A block without evaluated queries has null metrics. ``pooled`` averages
over all queries of several groups (docs/methods.md §1.2: Σ N_i·ps_i / Σ N_i); ``mean_of_groups`` averages the
groups' figures with equal weight (the any-time score, docs/methods.md §3).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.retrieval.metrics import SUMMARY_KEYS, evaluate_all
from engine.retrieval.metrics.retrieval import RetrievalReport
from engine.retrieval.metrics.summary import summary_from

Metrics = dict[str, Any]


@dataclass(frozen=True)
class ScoredQueries:
    """Per-query ranking statistics and SD of one group, kept so that groups can be pooled."""

    report: RetrievalReport
    sd: np.ndarray


def empty_metrics() -> Metrics:
    return {**{key: None for key in SUMMARY_KEYS}, "queries": 0}


def block(scored: ScoredQueries) -> Metrics:
    """The metric block of one group of queries."""
    if scored.report.n_queries == 0:
        return empty_metrics()
    return {**summary_from(scored.report, scored.sd), "queries": scored.report.n_queries}


def score(similarity, relevance, valid=None, order=None) -> ScoredQueries:
    """Rank (stable sort, or ``order``) and score a Q×G cosine matrix against boolean ``relevance``."""
    report, sd = evaluate_all(np.clip(similarity, -1.0, 1.0), relevance, valid, order, cosine=True)
    return ScoredQueries(report, sd)


def pooled(groups: list[ScoredQueries]) -> Metrics:
    """One block over the queries of all groups together."""
    if not groups:
        return empty_metrics()
    report = RetrievalReport(
        n_positives=np.concatenate([g.report.n_positives for g in groups]),
        first_hit=np.concatenate([g.report.first_hit for g in groups]),
        ap=np.concatenate([g.report.ap for g in groups]),
        inp=np.concatenate([g.report.inp for g in groups]),
    )
    return block(ScoredQueries(report, np.concatenate([g.sd for g in groups])))


def mean_of_groups(blocks: list[Metrics]) -> Metrics:
    """Each metric averaged over the blocks that evaluated queries; ``queries`` summed."""
    present = [b for b in blocks if b["queries"] > 0]
    if not present:
        return empty_metrics()
    out: Metrics = {key: float(np.mean([b[key] for b in present])) for key in SUMMARY_KEYS}
    out["queries"] = sum(b["queries"] for b in present)
    return out
