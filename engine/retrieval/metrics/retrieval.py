"""Ranking metrics: CMC R@k, AP/mAP, INP/mINP (docs/methods.md §5).

The gallery of each query is ranked by a stable descending sort (ties: lower gallery index first) or
taken from an explicit order. With positives at (1-based) ranks j_1 < … < j_{n⁺} among the valid items:
  R@k: 1 if j_1 ≤ k;  AP = (1/n⁺) Σ_q q / j_q;  INP = n⁺ / j_{n⁺}.
Queries with no valid positive are skipped and counted. Fractions in [0, 1] (papers report ×100).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.retrieval.metrics._arrays import MetricInputError, RankedChunk, iter_ranked

DEFAULT_KS: tuple[int, ...] = (1, 5, 10)


@dataclass(frozen=True)
class QueryStats:
    """Per-query results; skipped queries have n_positives 0, first_hit 0 and NaN AP/INP."""

    n_positives: np.ndarray
    first_hit: np.ndarray
    ap: np.ndarray
    inp: np.ndarray


def ranked_stats(chunk: RankedChunk) -> QueryStats:
    """Per-query first-hit rank, AP and INP of one ranked chunk (invalid items removed from the list)."""
    hits = chunk.relevant & chunk.valid
    rank = np.cumsum(chunk.valid, axis=1)  # 1-based rank among valid items at each position
    n_pos = hits.sum(axis=1)
    has = n_pos > 0
    precision_at_hits = np.where(hits, np.cumsum(hits, axis=1) / np.maximum(rank, 1), 0.0)
    width = hits.shape[1]
    first_pos = np.argmax(hits, axis=1)
    last_pos = width - 1 - np.argmax(hits[:, ::-1], axis=1)
    rows = np.arange(hits.shape[0])
    with np.errstate(invalid="ignore", divide="ignore"):
        ap = np.where(has, precision_at_hits.sum(axis=1) / n_pos, np.nan)
        inp = np.where(has, n_pos / rank[rows, last_pos], np.nan)
    first_hit = np.where(has, rank[rows, first_pos], 0)
    return QueryStats(n_positives=n_pos, first_hit=first_hit, ap=ap, inp=inp)


@dataclass(frozen=True)
class RetrievalReport:
    n_positives: np.ndarray
    first_hit: np.ndarray
    ap: np.ndarray
    inp: np.ndarray

    @property
    def evaluated(self) -> np.ndarray:
        return self.n_positives > 0

    @property
    def n_queries(self) -> int:
        return int(self.evaluated.sum())

    @property
    def skipped(self) -> int:
        """Queries left out because no (valid) gallery item is relevant to them."""
        return int((~self.evaluated).sum())

    def _require_queries(self) -> None:
        if self.n_queries == 0:
            raise MetricInputError("no query has a relevant gallery item; the metrics are undefined")

    def recall_at(self, k: int) -> float:
        """CMC: share of evaluated queries with a positive within the first k."""
        if k < 1:
            raise MetricInputError(f"k must be at least 1, got {k}")
        self._require_queries()
        return float(((self.first_hit >= 1) & (self.first_hit <= k))[self.evaluated].mean())

    @property
    def mean_ap(self) -> float:
        self._require_queries()
        return float(np.mean(self.ap[self.evaluated]))

    @property
    def mean_inp(self) -> float:
        self._require_queries()
        return float(np.mean(self.inp[self.evaluated]))

    def as_dict(self, ks: tuple[int, ...] = DEFAULT_KS) -> dict[str, float | int]:
        out: dict[str, float | int] = {f"R@{k}": self.recall_at(k) for k in ks}
        out.update(
            {"mAP": self.mean_ap, "mINP": self.mean_inp, "queries": self.n_queries, "skipped": self.skipped}
        )
        return out


def collect(stats: list[QueryStats]) -> RetrievalReport:
    return RetrievalReport(
        n_positives=np.concatenate([s.n_positives for s in stats]),
        first_hit=np.concatenate([s.first_hit for s in stats]),
        ap=np.concatenate([s.ap for s in stats]),
        inp=np.concatenate([s.inp for s in stats]),
    )


def evaluate_retrieval(
    similarity, relevance, valid=None, order=None, rows_per_chunk: int | None = None
) -> RetrievalReport:
    """Rank a Q×G similarity (numpy or torch) and score it against the Q×G boolean ``relevance``.

    ``valid``: optional Q×G mask of the gallery items each query may see; ``order``: optional explicit
    ranking (Q×G permutation) replacing the stable sort; work proceeds in row chunks.
    """
    stats = [
        ranked_stats(chunk) for chunk in iter_ranked(similarity, relevance, valid, order, rows_per_chunk)
    ]
    if not stats:
        raise MetricInputError("similarity has no query rows")
    return collect(stats)
