"""Which of the four papers' components a model config switches on, and why.

``components(config)`` reads the resolved config (a checkpoint's ``config.json``): the architecture flags and
the loss weights it was trained with. ``component_note(config, reasons)`` is the ``components`` entry that
``lineup checkpoint export --components FILE`` writes into a checkpoint's metadata: the components that are
on (with the reason ``FILE`` gives for keeping one, where it gives one), and for every one that is off the
reason given in ``FILE`` (a JSON object component name → reason; for the shipped default,
``resources/runs/default_components.json`` cites docs/ablations/).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.retrieval.models.config import ModelConfig


class ComponentNoteError(ValueError):
    """A components note that names unknown components or gives a reason that is not text."""


@dataclass(frozen=True)
class Component:
    paper: str
    name: str
    what: str
    is_on: Callable[[ModelConfig], bool]


COMPONENTS: tuple[Component, ...] = (
    Component("CMAM", "experts", "granularity experts, one per query level",
              lambda c: c.granularity.enabled),
    Component("CMAM", "PCIA", "soft TAL labels from attribute overlap",
              lambda c: c.losses.pcia and c.losses.tal > 0),
    Component("CMAM", "orthogonality", "orthogonality loss over the granularity experts",
              lambda c: c.granularity.enabled and c.losses.orthogonality > 0),
    Component("CMAM", "GCR", "granularity consistency reasoning (level classifier + match head)",
              lambda c: c.gcr.enabled and c.losses.gcr > 0),
    Component("FlexiReID", "adapters", "mixture-of-adapter experts with routing",
              lambda c: c.adapters.enabled),
    Component("FlexiReID", "CMQF", "cross-modal query fusion of text, sketch and IR",
              lambda c: c.fusion.kind == "cmqf"),
    Component("CRST", "RCR", "reliability-gated masked-token grounding",
              lambda c: c.crst.rcr and c.losses.rcr > 0),
    Component("CRST", "TGR", "text-guided refinement of low-resolution features",
              lambda c: c.crst.tgr and c.losses.tgr > 0),
    Component("CRST", "CR-RDA", "HR→LR ranking distillation",
              lambda c: c.losses.cr_rda > 0),
    Component("Uni-AT", "scenario tokens", "scenario-conditioned re-identification (the any-time protocol)",
              lambda c: c.scenarios.enabled),
    Component("Uni-AT", "MoAE", "mixture of attribute experts",
              lambda c: c.scenarios.enabled and c.scenarios.moae),
    Component("Uni-AT", "HDW", "hierarchical dynamic weighting of the scenario losses",
              lambda c: c.scenarios.enabled and c.losses.hdw and c.losses.scenario_id > 0),
)
NAMES: tuple[str, ...] = tuple(c.name for c in COMPONENTS)


def components(config: ModelConfig, reasons: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """One row per component: paper, name, what, on, and its reason from ``reasons`` (None when none was
    recorded) as ``why_on`` or ``why_off``."""
    reasons = reasons or {}
    rows = []
    for component in COMPONENTS:
        on = bool(component.is_on(config))
        row: dict[str, Any] = {"paper": component.paper, "name": component.name, "what": component.what, "on": on}
        row["why_on" if on else "why_off"] = reasons.get(component.name)
        if component.name == "adapters" and on:
            row["what"] += f" ({config.adapters.routing} routing)"
        rows.append(row)
    return rows


def check_reasons(reasons: Any, source: str = "components note") -> dict[str, str]:
    """``reasons`` as {component: reason}; unknown names and non-text reasons are errors naming them."""
    if not isinstance(reasons, Mapping):
        raise ComponentNoteError(f"{source}: expected an object of component name → reason")
    unknown = sorted(set(reasons) - set(NAMES))
    if unknown:
        raise ComponentNoteError(f"{source}: unknown components {unknown}; components: {list(NAMES)}")
    for name, reason in reasons.items():
        if not isinstance(reason, str) or not reason.strip():
            raise ComponentNoteError(f"{source}: the reason for {name!r} must be a non-empty text")
    return dict(reasons)


def component_note(config: ModelConfig, reasons: Any, source: str = "components note") -> dict[str, Any]:
    """``{"on": [names], "off": {name: reason or None}, "why_on": {name: reason}}`` for a checkpoint's metadata
    (``why_on`` holds the components that are on and have a reason); ``source`` names where ``reasons`` came
    from in errors."""
    rows = components(config, check_reasons(reasons, source))
    return {"on": [r["name"] for r in rows if r["on"]], "off": {r["name"]: r["why_off"] for r in rows if not r["on"]},
            "why_on": {r["name"]: r["why_on"] for r in rows if r["on"] and r["why_on"]}}
