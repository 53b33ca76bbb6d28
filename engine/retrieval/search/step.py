"""A step's outcome: an immutable value (arrays are read-only), so undo pops and branching copies."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from engine.kernel.step_schema import StepRecord
from engine.retrieval.evidence.ranking import AttributeTerm
from engine.retrieval.search.errors import QueryInputError
from engine.retrieval.search.outfit_change import BiometricTerm
from engine.retrieval.search.query import StepQuery
from engine.retrieval.search.selection import rank


def frozen_array(values, dtype) -> np.ndarray:
    """A read-only array; ``values`` is not copied when it already has ``dtype`` (the caller owns it or it is
    already read-only)."""
    array = np.asarray(values, dtype=dtype)
    if array.flags.writeable:
        array.flags.writeable = False
    return array


@dataclass(frozen=True, eq=False)
class StepResult:
    """Step j over candidate set C_j.

    ``rows``/``scores``: the candidates that passed the step's filters and their similarity (ascending rows;
    the array to plot). ``filtered_rows``/``filtered_scores``: candidates the camera/time/attribute filters removed.
    ``kept``: ascending rows that go on to step j+1 (before later rejects/confirms). ``relevant``: ground
    truth per entry of ``rows``, or None without ground truth. Scores are hybrid (similarity + w·agreement,
    ``attribute_term``), or for an outfit-change find-similar the biometric likeness (``attribute_term`` is then
    a ``BiometricTerm``); ``explain`` splits one item's score into its parts."""

    index: int
    query: StepQuery
    view: str
    level: str | None
    level_source: str | None  # "override", "encoder", "default" or None (image/example queries)
    keep_rule: str  # "rho", "k" or "threshold"
    keep_value: float
    k: int  # items kept (for rho: ⌈ρ·|C_j|⌉)
    rows: np.ndarray
    scores: np.ndarray
    filtered_rows: np.ndarray
    filtered_scores: np.ndarray
    kept: np.ndarray
    relevant: np.ndarray | None
    seconds: float
    item_ids: Sequence[str] = field(repr=False)
    attribute_term: AttributeTerm | BiometricTerm | None = field(default=None, repr=False)
    row_of: Mapping[str, int] | None = field(default=None, repr=False)  # item id → gallery row
    level_rule: str | None = None  # for level_source "encoder": the encoder's rule, "parser" or "classifier"

    @property
    def level_origin(self) -> str | None:
        """Where the level came from, as transcripts and the case store write it: the encoder's rule in place
        of "encoder", else ``level_source``."""
        if self.level_source == "encoder" and self.level_rule is not None:
            return self.level_rule
        return self.level_source

    def record(self) -> StepRecord:
        """The step's plain fields (``engine.kernel.step_schema``), which the CLI, the case store and reports write."""
        query = self.query
        return StepRecord(
            query_text=query.text, query_kind=query.kind, example_item=query.example, scenario=query.scenario,
            level=self.level, level_source=self.level_origin, level_overridden=self.level_source == "override",
            view=self.view, keep_rule=self.keep_rule, keep_value=self.keep_value, k=self.k,
            filters={"cameras": None if query.cameras is None else sorted(query.cameras),
                     "time_range": None if query.time_range is None else list(query.time_range)},
            candidates_before=self.candidates_before, filtered_out=int(self.filtered_rows.shape[0]),
            candidates_after=self.candidates_after, seconds=float(self.seconds), whole_gallery=query.whole_gallery)

    @property
    def candidates_before(self) -> int:
        """|C_j|: candidates entering the step (before its filters)."""
        return int(self.rows.shape[0] + self.filtered_rows.shape[0])

    @property
    def candidates_after(self) -> int:
        """|C_{j+1}| before later marks: the items kept."""
        return int(self.kept.shape[0])

    @cached_property
    def order(self) -> np.ndarray:
        """Positions into ``rows``/``scores``, best first (score descending, row ascending on ties)."""
        order = rank(self.rows, self.scores)
        order.flags.writeable = False
        return order

    def ranked(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows, scores) of the filtered candidates, best first."""
        return self.rows[self.order], self.scores[self.order]

    def top(self, n: int) -> list[tuple[str, float]]:
        """The best ``n`` (id, score) pairs without sorting everything."""
        n = min(n, self.rows.shape[0])
        if n <= 0:
            return []
        part = np.argpartition(-self.scores, n - 1)[:n] if n < self.rows.shape[0] else np.arange(n)
        part = part[rank(self.rows[part], self.scores[part])]
        return [(self.item_ids[int(self.rows[i])], float(self.scores[i])) for i in part]

    @property
    def kept_ids(self) -> list[str]:
        """Ids of the kept items, best first."""
        kept_mask = np.isin(self.rows, self.kept, assume_unique=True)
        order = self.order[kept_mask[self.order]]
        return [self.item_ids[int(r)] for r in self.rows[order]]

    def score_of(self, row: int) -> tuple[float, bool]:
        """(the step's score of gallery ``row``, whether a filter removed it); ``QueryInputError`` when the row
        was not a candidate of this step."""
        for rows, scores, filtered in ((self.rows, self.scores, False),
                                       (self.filtered_rows, self.filtered_scores, True)):
            at = int(np.searchsorted(rows, row))
            if at < rows.shape[0] and rows[at] == row:
                return float(scores[at]), filtered
        raise QueryInputError(f"item {self.item_ids[row]!r} was not a candidate of step {self.index + 1}")

    def explain(self, item: str | int) -> dict:
        """Why an item (id or gallery row) got its score: ``similarity`` (in the step's ``view``) +
        ``attribute_contribution`` (= w · ``agreement``) = ``score``, and per stated attribute its status
        ("match", "mismatch", "unsure", "no evidence"), agreement and each source's probability/confidence
        (``engine.retrieval.evidence.ranking``). Computed on demand for one item."""
        if isinstance(item, str):
            try:
                row = self.row_of[item] if self.row_of is not None else list(self.item_ids).index(item)
            except (ValueError, KeyError):
                raise QueryInputError(f"item {item!r} is not in the gallery") from None
        else:
            row = int(item)
        score, filtered = self.score_of(row)
        term = self.attribute_term or AttributeTerm((), 0.0)
        return {"item": self.item_ids[row], **term.explain(row, score), "filtered": filtered, "view": self.view}

    def explanations(self, n: int) -> dict[str, dict]:
        """``explain`` for the best ``n`` items (id → explanation, best first), computed in one batch; without
        each source's most probable value (``explain`` adds it)."""
        top = self.top(n)
        if not top:
            return {}
        rows = np.asarray([self.row_of[i] if self.row_of is not None else list(self.item_ids).index(i)
                           for i, _ in top], dtype=np.int64)
        term = self.attribute_term or AttributeTerm((), 0.0)
        found = term.explain_rows(rows, np.asarray([score for _, score in top]))
        return {item_id: {"item": item_id, **record, "filtered": False, "view": self.view}
                for (item_id, _), record in zip(top, found, strict=True)}

    def relevant_counts(self) -> tuple[int, int] | None:
        """(relevant among the candidates, relevant among the kept) when ground truth exists."""
        if self.relevant is None:
            return None
        kept_mask = np.isin(self.rows, self.kept, assume_unique=True)
        return int(self.relevant.sum()), int((self.relevant & kept_mask).sum())
