"""What the query panel asks for: modalities, level override and keep rule, before they become an engine
``StepQuery`` (docs/methods.md §1.3: keep k_j = ⌈ρ·|C_j|⌉, an explicit k, or a score
threshold)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.kernel.keep_rules import DEFAULT_RHO, KEEP_RULES, KeepRuleError, check_keep
from engine.kernel.ontology import LEVELS
from engine.kernel.query_modalities import combinable, query_kind
from engine.retrieval.search import QueryInputError, StepQuery

KEEP_KINDS: tuple[str, ...] = KEEP_RULES
RHO_RANGE = (0.05, 1.0)


@dataclass(frozen=True)
class KeepRule:
    """How many candidates a step keeps: ``rho`` (fraction), ``k`` (count) or ``threshold`` (min score)."""

    kind: str = "rho"
    value: float = DEFAULT_RHO

    def __post_init__(self) -> None:
        try:
            value = check_keep(self.kind, self.value)
        except KeepRuleError as exc:
            raise QueryInputError(str(exc)) from None
        if self.kind == "k":
            object.__setattr__(self, "value", value)

    def query_arguments(self) -> dict[str, float | int]:
        return {self.kind: self.value}

    def describe(self) -> str:
        """Short label: "keep 50 %", "keep top 20", "score ≥ 0.310"."""
        return describe_keep(self.kind, self.value)


def describe_keep(kind: str, value: float) -> str:
    if kind == "rho":
        return f"keep {value * 100:.4g} %"
    if kind == "k":
        return f"keep top {int(value):,}"
    return f"score ≥ {value:.3f}"


@dataclass(frozen=True)
class QuerySpec:
    """A step as the analyst set it up. ``sketch`` is an RGB uint8 array (the canvas); ``ir`` a file path or
    an RGB uint8 array; ``level`` None means automatic (parser/classifier)."""

    text: str | None = None
    sketch: np.ndarray | None = field(default=None, compare=False)
    ir: str | Path | np.ndarray | None = field(default=None, compare=False)
    level: str | None = None
    keep: KeepRule = field(default_factory=KeepRule)

    def __post_init__(self) -> None:
        text = self.text.strip() if isinstance(self.text, str) else self.text
        object.__setattr__(self, "text", text or None)
        if self.level is not None and self.level not in LEVELS:
            raise QueryInputError(f"level must be one of {list(LEVELS)} or automatic, got {self.level!r}")
        if not isinstance(self.keep, KeepRule):
            raise QueryInputError(f"keep must be a KeepRule, got {type(self.keep).__name__}")

    @property
    def is_empty(self) -> bool:
        return self.text is None and self.sketch is None and self.ir is None

    @property
    def kind(self) -> str:
        """The modalities joined by '+' ('text+sketch'), as the engine names them."""
        return query_kind(m.name for m in combinable() if getattr(self, m.name, None) is not None)

    def to_step_query(self, *, cameras: frozenset[str] | None = None,
                      time_range: tuple[float | None, float | None] | None = None) -> StepQuery:
        """The engine query (raises ``QueryInputError`` for an empty or contradictory spec)."""
        return StepQuery(text=self.text, sketch=self.sketch, ir=self.ir, level=self.level, cameras=cameras,
                         time_range=time_range, **self.keep.query_arguments())
