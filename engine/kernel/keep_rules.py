"""How many candidates a step keeps (docs/methods.md §1.3): the rules, the default kept fraction ρ, and the one
check of a rule and its value that the engine's query, the app's keep control and the case store use.

- ``rho``: keep ⌈ρ·|C|⌉ of the candidates, ρ in (0, 1] (``DEFAULT_RHO`` unless a step or session says);
- ``k``: keep the first k, a whole number ≥ 1;
- ``threshold``: keep the candidates scoring at least this finite number.

Standard library only, so that the case store can check a step's rule without loading the engine.
"""

from __future__ import annotations

import math

KEEP_RULES: tuple[str, ...] = ("rho", "k", "threshold")
#: the kept fraction ρ a session uses when nobody says otherwise
DEFAULT_RHO = 0.5


class KeepRuleError(ValueError):
    """A keep rule or value that cannot be used; the message names it."""


def check_rho(value: object, what: str = "rho") -> float:
    """``value`` as a kept fraction in (0, 1]; else ``KeepRuleError`` naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or not 0 < value <= 1:
        raise KeepRuleError(f"{what}: the kept fraction ρ must lie in (0, 1], got {value!r}")
    return float(value)


def check_keep(rule: object, value: object, *, what: str = "keep rule") -> float | int:
    """The value of keep rule ``rule`` checked (a whole-number ``k`` as an ``int``, the others as given);
    ``KeepRuleError`` names the rule (``what``) or the value that is wrong."""
    if rule not in KEEP_RULES:
        raise KeepRuleError(f"{what} must be one of {list(KEEP_RULES)}, got {rule!r}")
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise KeepRuleError(f"the keep value ({rule}) must be a finite number, got {value!r}")
    if rule == "rho":
        return check_rho(value)
    if rule == "k":
        if value != int(value) or value < 1:
            raise KeepRuleError(f"the kept count k must be a whole number ≥ 1 (a positive integer), got {value!r}")
        return int(value)
    return value
