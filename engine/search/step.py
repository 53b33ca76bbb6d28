"""A step's outcome: an immutable value (arrays are read-only), so undo pops and branching copies."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from engine.search.query import StepQuery
from engine.search.selection import rank


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
    the array to plot). ``filtered_rows``/``filtered_scores``: candidates the camera/time filters removed.
    ``kept``: ascending rows that go on to step j+1 (before later rejects/confirms). ``relevant``: ground
    truth per entry of ``rows``, or None without ground truth."""

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

    def relevant_counts(self) -> tuple[int, int] | None:
        """(relevant among the candidates, relevant among the kept) when ground truth exists."""
        if self.relevant is None:
            return None
        kept_mask = np.isin(self.rows, self.kept, assume_unique=True)
        return int(self.relevant.sum()), int((self.relevant & kept_mask).sum())
