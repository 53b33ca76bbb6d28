"""How likely a witness is to know each attribute, and how the witness saw the person (the viewing conditions),
declared once as data: ``resources/witness_prior.json`` (docs/methods.md §10).

``knows`` gives P(a witness knows key) under ordinary viewing; each entry of ``conditions`` (e.g. ``night``,
``far``) gives factors applied to it when the witness saw the person that way; ``labels`` gives each choice a
short label for menus and reports ("at night"). The choices a user may name are ``ORDINARY`` and the file's
conditions, read from the data: the next-question ranking (``engine.retrieval.evidence.next_question``), the
search command's ``--witness-saw`` and console, the app's question bar, the case store's check of a step's
question record and the report all read them here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from engine.kernel import jsonio
from engine.kernel.ontology import ONTOLOGY
from engine.kernel.resources import resource_path

PRIOR_FILE = "witness_prior.json"
PRIOR_VERSION = 1
#: The viewing condition of the ``knows`` table itself (no factors); never a name in ``conditions``.
ORDINARY = "ordinary"


class UnknownConditionError(ValueError):
    """A viewing condition the witness prior does not define."""


@dataclass(frozen=True)
class WitnessPrior:
    """P(a witness knows key) per ontology key, factors per viewing condition and a short label per choice."""

    knows: Mapping[str, float]
    conditions: Mapping[str, Mapping[str, float]]
    labels: Mapping[str, str] = field(default_factory=dict)

    @property
    def choices(self) -> tuple[str, ...]:
        """The viewing conditions a user may name: ``ORDINARY`` first, then the file's, in its order."""
        return (ORDINARY, *self.conditions)

    def label(self, choice: str | None) -> str:
        """The short label of a choice ("at night"; None is ``ORDINARY``); the name itself without one."""
        name = self.condition_name(choice)
        return self.labels.get(name, name)

    def condition_name(self, choice: str | None) -> str:
        """``choice`` checked (None → ``ORDINARY``); ``UnknownConditionError`` names the choices."""
        name = ORDINARY if choice is None else choice
        if name not in self.choices:
            raise UnknownConditionError(f"unknown witness condition {choice!r}; choose one of "
                                        f"{', '.join(self.choices)}")
        return name

    def condition(self, choice: str | None) -> str | None:
        """The condition ``knows_key`` applies for ``choice``: None for ordinary viewing (or None), else the
        condition's name; ``UnknownConditionError`` names the choices."""
        name = self.condition_name(choice)
        return None if name == ORDINARY else name

    def knows_key(self, key: str, condition: str | None = None) -> float:
        base = float(self.knows.get(key, 1.0))
        condition = self.condition(condition)
        if condition is None:
            return base
        return base * float(self.conditions[condition].get(key, 1.0))


def _probability(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or not 0.0 <= value <= 1.0:
        raise ValueError(f"{where} must be a number in [0, 1], got {value!r}")
    return float(value)


def parse_prior(data: Any, where: str) -> WitnessPrior:
    """A witness prior table checked: ``version``, ``knows`` for every ontology key, ``conditions`` of known keys
    (none named ``ORDINARY``), ``labels`` (optional) short texts of the choices."""
    if not isinstance(data, dict) or data.get("version") != PRIOR_VERSION:
        raise ValueError(f"{where}: not a witness prior of version {PRIOR_VERSION}")
    knows, conditions, labels = data.get("knows"), data.get("conditions", {}), data.get("labels", {})
    if not isinstance(knows, dict) or not isinstance(conditions, dict):
        raise ValueError(f"{where}: 'knows' must map keys to numbers and 'conditions' names to such maps")
    missing, unknown = sorted(set(ONTOLOGY.keys) - set(knows)), sorted(set(knows) - set(ONTOLOGY.keys))
    if missing or unknown:
        raise ValueError(f"{where}: 'knows' must give every ontology key: missing {missing}, unknown {unknown}")
    parsed = {key: _probability(value, f"{where}: knows.{key}") for key, value in knows.items()}
    factors: dict[str, dict[str, float]] = {}
    for name, table in conditions.items():
        if not name or name == ORDINARY or name != name.strip():
            raise ValueError(f"{where}: a condition may not be called {name!r} ({ORDINARY!r} is the 'knows' table)")
        if not isinstance(table, dict) or not set(table) <= set(ONTOLOGY.keys):
            raise ValueError(f"{where}: condition {name!r} must map ontology keys to factors in [0, 1]")
        factors[str(name)] = {key: _probability(v, f"{where}: conditions.{name}.{key}") for key, v in table.items()}
    choices = (ORDINARY, *factors)
    if not isinstance(labels, dict) or not set(labels) <= set(choices) or not all(
            isinstance(text, str) and text.strip() and len(text) <= 40 for text in labels.values()):
        raise ValueError(f"{where}: 'labels' must map some of {list(choices)} to short texts (≤ 40 characters), "
                         f"got {labels!r}")
    return WitnessPrior(parsed, factors, {name: text.strip() for name, text in labels.items()})


def load_prior(path: str | Path | None = None) -> WitnessPrior:
    """A witness prior file; without ``path`` the shipped one (cached)."""
    if path is None:
        return _shipped_prior()
    return parse_prior(jsonio.read(path, expect=dict), str(path))


@lru_cache(maxsize=1)
def _shipped_prior() -> WitnessPrior:
    path = resource_path(PRIOR_FILE)
    return parse_prior(jsonio.read(path, expect=dict), str(path))
