"""What the query panel asks for: modalities, level override and keep rule, before they become an engine
``StepQuery`` (docs/methods.md §1.3: keep k_j = ⌈ρ·|C_j|⌉, an explicit k, or a score
threshold)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.kernel.ontology import LEVELS
from engine.retrieval.search import QueryInputError, StepQuery

KEEP_KINDS: tuple[str, ...] = ("rho", "k", "threshold")
DEFAULT_RHO = 0.5
RHO_RANGE = (0.05, 1.0)


@dataclass(frozen=True)
class KeepRule:
    """How many candidates a step keeps: ``rho`` (fraction), ``k`` (count) or ``threshold`` (min score)."""

    kind: str = "rho"
    value: float = DEFAULT_RHO

    def __post_init__(self) -> None:
        if self.kind not in KEEP_KINDS:
            raise QueryInputError(f"keep rule must be one of {list(KEEP_KINDS)}, got {self.kind!r}")
        value = self.value
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise QueryInputError(f"the keep value must be a finite number, got {value!r}")
        if self.kind == "rho" and not 0 < value <= 1:
            raise QueryInputError(f"the kept fraction ρ must lie in (0, 1], got {value}")
        if self.kind == "k":
            if value != int(value) or value < 1:
                raise QueryInputError(f"the kept count k must be a whole number ≥ 1, got {value}")
            object.__setattr__(self, "value", int(value))

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
        return "+".join(name for name in ("text", "sketch", "ir") if getattr(self, name) is not None)

    def to_step_query(self, *, cameras: frozenset[str] | None = None,
                      time_range: tuple[float | None, float | None] | None = None) -> StepQuery:
        """The engine query (raises ``QueryInputError`` for an empty or contradictory spec)."""
        return StepQuery(text=self.text, sketch=self.sketch, ir=self.ir, level=self.level, cameras=cameras,
                         time_range=time_range, **self.keep.query_arguments())
