"""The figures of a step's score distribution (docs/methods.md §1.3: the scores exposed, the analyst cuts), as
the distribution panel (``app.views.distribution``) shows them: the candidates' scores with the masks of
relevant, confirmed and kept candidates, the step's own cut (the k-th highest score, or the threshold itself
for a threshold rule), what a threshold would keep (``engine.retrieval.search.selection.keep_mask``, confirmed
items included), the histograms' bins, and with ground truth the step's AP and mSD (``engine.retrieval.metrics``,
one query). Plain values: no Qt."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from engine.retrieval.metrics.msd import MetricInputError, msd_per_query
from engine.retrieval.metrics.retrieval import evaluate_retrieval
from engine.retrieval.search.selection import keep_mask, kth_largest

MIN_BINS, MAX_BINS = 12, 80


class DistributionInputError(ValueError):
    """The panel received scores it cannot plot."""


@dataclass(frozen=True)
class StepMetrics:
    """AP and mSD of the step's candidate ranking as one query (NaN when no candidate is relevant)."""

    ap: float
    msd: float
    relevant: int
    relevant_kept: int


def bin_count(n: int) -> int:
    """Rice rule 2·n^(1/3), clipped to [MIN_BINS, MAX_BINS]."""
    return int(np.clip(math.ceil(2 * n ** (1 / 3)), MIN_BINS, MAX_BINS)) if n else MIN_BINS


def histogram_edges(scores: np.ndarray) -> np.ndarray:
    """Bin edges over the scores' range (a narrow window around a single value)."""
    low, high = float(scores.min()), float(scores.max())
    if high - low < 1e-6:
        low, high = low - 0.005, high + 0.005
    return np.linspace(low, high, bin_count(scores.shape[0]) + 1)


def step_metrics(scores: np.ndarray, relevant: np.ndarray, kept: np.ndarray) -> StepMetrics:
    """AP (docs/methods.md §5) and mSD (docs/methods.md §1.4) of one ranked candidate list, from
    ``engine.retrieval.metrics``."""
    similarity, relevance = scores[None, :].astype(np.float64), relevant[None, :]
    count = int(relevant.sum())
    if count == 0:
        return StepMetrics(math.nan, math.nan, 0, 0)
    ap = float(evaluate_retrieval(similarity, relevance).ap[0])
    try:
        msd = float(msd_per_query(similarity, relevance, cosine=True)[0])
    except MetricInputError:  # scores outside [−1, 1]: not cosines, mSD is not defined for them
        msd = math.nan
    return StepMetrics(ap, msd, count, int((relevant & kept).sum()))


@dataclass(frozen=True)
class Histograms:
    """The bins drawn: shared ``edges``, the scores of each group ({'candidates'} without ground truth, else
    {'others', 'relevant'}) and their bin ``counts``."""

    edges: np.ndarray
    groups: dict[str, np.ndarray]
    counts: dict[str, np.ndarray]


@dataclass(frozen=True, eq=False)
class ScoreDistribution:
    """One step's candidate scores as the panel shows them; ``scores`` (float32) and the masks share one order."""

    scores: np.ndarray
    k: int  # the count kept, at most the number of candidates
    kept: np.ndarray
    cut: float  # the step's boundary: the k-th highest score (the threshold for a threshold rule)
    rule: str
    rule_value: float  # NaN when the rule has no value
    relevant: np.ndarray | None = None
    pinned: np.ndarray | None = None
    metrics: StepMetrics | None = None
    title: str = ""

    @classmethod
    def of(cls, scores, k: int, *, relevant=None, pinned=None, kept=None, keep_rule: str = "k",
           keep_value: float | None = None, title: str = "") -> ScoreDistribution:
        """From plain arrays: candidate ``scores``, the count kept ``k``, optional ground truth ``relevant``,
        ``pinned`` (confirmed) and ``kept`` masks over the same candidates, and the step's keep rule. Raises
        ``DistributionInputError`` on scores it cannot plot."""
        scores = np.asarray(scores, dtype=np.float32).reshape(-1)
        n = scores.shape[0]
        if n == 0:
            raise DistributionInputError("a step's score distribution needs at least one candidate score")
        if not np.isfinite(scores).all():
            raise DistributionInputError("candidate scores contain NaN or infinite values")
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0:
            raise DistributionInputError(f"k must be a non-negative integer, got {k!r}")
        masks = {}
        for name, value in (("relevant", relevant), ("pinned", pinned), ("kept", kept)):
            if value is not None:
                value = np.asarray(value, dtype=bool).reshape(-1)
                if value.shape[0] != n:
                    raise DistributionInputError(f"{name} has {value.shape[0]} flags for {n} scores")
            masks[name] = value
        relevant, pinned = masks["relevant"], masks["pinned"]
        kept = masks["kept"] if masks["kept"] is not None else keep_mask(scores, pinned, k=int(k))[0]
        shown_k = int(min(k, n))
        if keep_rule == "threshold" and keep_value is not None:
            cut = float(keep_value)
        else:
            cut = kth_largest(scores, max(1, shown_k))
        metrics = None
        if relevant is not None:
            order = np.lexsort((np.arange(n), -scores.astype(np.float64)))
            metrics = step_metrics(scores[order], relevant[order], kept[order])
        return cls(scores, shown_k, kept, cut, keep_rule, math.nan if keep_value is None else float(keep_value),
                   relevant, pinned, metrics, title)

    @property
    def size(self) -> int:
        return int(self.scores.shape[0])

    @property
    def step_kept(self) -> int:
        """How many candidates the step kept."""
        return int(self.kept.sum()) if self.kept is not None else self.k

    def rule_text(self) -> str:
        """The step's keep rule in a few characters: "ρ = 0.1", "score ≥ 0.250", "k = 50"."""
        if self.rule == "rho":
            return f"ρ = {self.rule_value:g}"
        if self.rule == "threshold":
            return f"score ≥ {self.rule_value:.3f}"
        return f"k = {self.k:,}"

    def kept_at(self, threshold: float) -> int:
        """Items a step keeping scores ≥ ``threshold`` would keep (confirmed items always kept), as
        ``keep_mask`` counts them, by binary search in the sorted scores (the cut is dragged over a million)."""
        cut = self.scores.dtype.type(threshold)  # compared in the scores' own precision, as keep_mask does
        above = self.size - int(np.searchsorted(self._ascending, cut, side="left"))
        return above + int(np.count_nonzero(self._pinned_scores < cut))

    @cached_property
    def _ascending(self) -> np.ndarray:
        return np.sort(self.scores)

    @cached_property
    def _pinned_scores(self) -> np.ndarray:
        return self.scores[self.pinned] if self.pinned is not None else self.scores[:0]

    @cached_property
    def _relevant_scores(self) -> np.ndarray:
        return self.scores[self.relevant] if self.relevant is not None else self.scores[:0]

    def prepare(self) -> ScoreDistribution:
        """Compute now what the panel reads later (the bins, the sorted scores): for a worker thread, so that
        showing a million candidates costs the UI thread no sort. Returns itself."""
        _ = self._ascending, self._pinned_scores, self._relevant_scores, self.histograms()
        return self

    def moved(self, threshold: float) -> bool:
        """Whether ``threshold`` stands elsewhere than the step's own cut."""
        return not math.isclose(threshold, self.cut, abs_tol=5e-7)

    def relevant_at_or_above(self, threshold: float) -> int:
        """Relevant candidates scoring ≥ ``threshold`` (0 without ground truth)."""
        if self.relevant is None:
            return 0
        return int(np.count_nonzero(self._relevant_scores >= threshold))

    def histograms(self) -> Histograms:
        """The bins over the scores' range, per group (computed once)."""
        return self._histograms

    @cached_property
    def _histograms(self) -> Histograms:
        edges = histogram_edges(self.scores)
        if self.relevant is None:
            groups = {"candidates": self.scores}
        else:
            groups = {"others": self.scores[~self.relevant], "relevant": self.scores[self.relevant]}
        counts = {name: np.histogram(values, bins=edges)[0] for name, values in groups.items()}
        return Histograms(edges, groups, counts)


def step_distribution(step, confirmed_ids: Iterable[str] = (), *, label: str | None = None) -> ScoreDistribution:
    """The distribution of a ``StepResult``. ``confirmed_ids``: the session's confirmed items, which every keep
    rule keeps, so the live count matches what a threshold step would keep. ``label``: the step's label in its
    case ("3a", ``app.state.timeline_rows.step_label``); its position in the session without."""
    confirmed = set(confirmed_ids)
    pinned = None
    if confirmed:
        pinned = members(step.rows, _rows_of(step, confirmed))
    kept = members(step.rows, step.kept)
    level = f" · level {step.level}" if step.level else ""
    title = f"Step {label or step.index + 1} · {step.query.kind}{level} · {step.rows.shape[0]:,} candidates"
    if step.filtered_rows.shape[0]:
        title += f" ({step.filtered_rows.shape[0]:,} filtered out)"
    return ScoreDistribution.of(step.scores, step.k, relevant=step.relevant, pinned=pinned, kept=kept,
                                keep_rule=step.keep_rule, keep_value=step.keep_value, title=title)


def members(rows: np.ndarray, subset: np.ndarray) -> np.ndarray:
    """bool per entry of ``rows`` (gallery rows): whether it is in ``subset``, in linear time (a mask over the
    rows' range, where ``np.isin`` sorts both)."""
    rows, subset = np.asarray(rows, dtype=np.int64), np.asarray(subset, dtype=np.int64)
    if not rows.size or not subset.size:
        return np.zeros(rows.shape[0], dtype=bool)
    flags = np.zeros(max(int(rows.max()), int(subset.max())) + 1, dtype=bool)
    flags[subset] = True
    return flags[rows]


def _rows_of(step, item_ids: Iterable[str]) -> np.ndarray:
    """The gallery rows of the ids the step's gallery has (through its row look-up; by scanning without one)."""
    lookup = step.row_of
    if lookup is None:
        wanted = set(item_ids)
        return np.asarray([r for r in step.rows.tolist() if step.item_ids[r] in wanted], dtype=np.int64)
    found = (lookup.get(item_id) for item_id in item_ids)
    return np.asarray([row for row in found if row is not None], dtype=np.int64)
