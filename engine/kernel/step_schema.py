"""A search step's plain fields, declared once (docs/architecture.md → The step schema).

``StepRecord`` lists what every written form of a step carries: the query it ran, the view and level, the keep
rule, the candidate counts and its time. Each field says how ``lineup search --json`` names it (``cli``;
``"keep.rule"`` nests, None leaves it out) and the longest text it takes (``limit``, also the case store's
column width). The forms derive from ``STEP_FIELDS``: the CLI's step record (``engine.retrieval.search.transcript``),
the case store's input, columns, audit payload and read-back values (``app.store``) and the report's chain
rows (``app.report.content``). The database migrations keep their own frozen copy of the columns. A field added
after cases were first recorded is marked ``later``: the audit payload leaves it out while it holds its default
(``audit_values``), so the entries of steps recorded before it still verify.

Standard library only, so that the case store can build on it without loading the engine.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any


def _field(*, cli: str | None = None, limit: int | None = None, digits: int | None = None, later: bool = False,
           **options: Any) -> Any:
    return field(metadata={"cli": cli, "limit": limit, "digits": digits, "later": later}, **options)


@dataclass(frozen=True, kw_only=True)
class StepRecord:
    """One search step as plain values. ``level_source`` is where the level came from ("override", "parser",
    "classifier", "default", or None for image queries); ``level_overridden`` says it was the analyst's.
    ``filters``: ``{"cameras": [...] | None, "time_range": [low, high] | None}``. ``candidates_before`` =
    ranked candidates + ``filtered_out``; ``candidates_after``: the items kept. ``whole_gallery``: the step
    scored every item of the gallery, not the previous step's kept items (``StepQuery.whole_gallery``)."""

    query_text: str | None = _field(cli="query", default=None)
    query_kind: str = _field(cli="kind", limit=32)
    example_item: str | None = _field(cli="example", default=None)
    scenario: str | None = _field(limit=64, default=None)
    level: str | None = _field(cli="level", limit=32, default=None)
    level_source: str | None = _field(cli="level_source", limit=16, default=None)
    level_overridden: bool = _field()
    view: str = _field(cli="view", limit=64)
    keep_rule: str = _field(cli="keep.rule", limit=16)
    keep_value: float = _field(cli="keep.value")
    k: int = _field(cli="keep.k")
    filters: dict[str, Any] = _field(default_factory=dict)
    candidates_before: int = _field(cli="candidates_before")
    filtered_out: int = _field(cli="filtered_out", default=0)
    candidates_after: int = _field(cli="candidates_after")
    seconds: float = _field(cli="seconds", digits=4, default=0.0)
    whole_gallery: bool = _field(default=False, later=True)


@dataclass(frozen=True)
class StepField:
    """One field of ``StepRecord``: its value type (str, int, float, bool or dict), whether it may be None,
    its CLI key, its longest text, the digits the CLI rounds it to, whether it was added after cases were first
    recorded (``later``) and its default (None when it has none or a made one)."""

    name: str
    kind: type
    optional: bool
    cli: str | None
    limit: int | None
    digits: int | None
    later: bool = False
    default: Any = None


def _step_fields() -> tuple[StepField, ...]:
    hints = typing.get_type_hints(StepRecord)
    out = []
    for spec in dataclasses.fields(StepRecord):
        kind, optional = hints[spec.name], False
        if isinstance(kind, types.UnionType):
            kinds = [k for k in typing.get_args(kind) if k is not type(None)]
            kind, optional = kinds[0], True
        out.append(StepField(spec.name, typing.get_origin(kind) or kind, optional, spec.metadata["cli"],
                             spec.metadata["limit"], spec.metadata["digits"], spec.metadata["later"],
                             None if spec.default is dataclasses.MISSING else spec.default))
    return tuple(out)


STEP_FIELDS: tuple[StepField, ...] = _step_fields()
STEP_FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in STEP_FIELDS)


def plain_value(spec: StepField, value: Any) -> Any:
    """``value`` as the field's plain type (numbers as float, flags as bool, objects as a fresh dict)."""
    if value is None:
        return None
    if spec.kind is float:
        return float(value)
    if spec.kind is bool:
        return bool(value)
    if spec.kind is dict:
        return dict(value)
    return value


def step_values(source: Any, target: type | None = None) -> dict[str, Any]:
    """The schema's fields read off ``source`` (any object that has them as attributes) as plain values; with
    ``target`` (a dataclass), only those its constructor takes, as keyword arguments for it."""
    names = STEP_FIELD_NAMES
    if target is not None:
        taken = {f.name for f in dataclasses.fields(target) if f.init}
        names = tuple(n for n in names if n in taken)
    by_name = {f.name: f for f in STEP_FIELDS}
    return {name: plain_value(by_name[name], getattr(source, name)) for name in names}


def audit_values(source: Any) -> dict[str, Any]:
    """``step_values(source)`` less the ``later`` fields that hold their default: what a step's audit payload
    carries, so that entries written before a later field existed still verify."""
    by_name = {f.name: f for f in STEP_FIELDS}
    return {name: value for name, value in step_values(source).items()
            if not (by_name[name].later and value == by_name[name].default)}


def cli_values(record: StepRecord) -> dict[str, Any]:
    """The fields ``lineup search --json`` writes, under their CLI keys (``keep.rule`` → ``{"keep": {"rule"}}``)."""
    out: dict[str, Any] = {}
    for spec in STEP_FIELDS:
        if spec.cli is None:
            continue
        value = plain_value(spec, getattr(record, spec.name))
        if spec.digits is not None and value is not None:
            value = round(value, spec.digits)
        *parents, key = spec.cli.split(".")
        into = out
        for parent in parents:
            into = into.setdefault(parent, {})
        into[key] = value
    return out
