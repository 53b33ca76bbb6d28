"""Rebuild the engine session of a stored case by re-running the steps on a path (docs/methods.md §1.3:
steps are values, so the same queries on the same gallery give the same steps).

The store keeps each step's query (text, query images as evidence files, example item, level override, keep
rule, filters, whether it searched the whole gallery) but not every candidate's score; re-running the path gives
back the full ``StepResult`` values the results grid and the distribution plot need. Marks change the candidate
sets, so each step runs with the marks the case had when it was recorded, read from the audit trail ("mark"
entries before its "step.record" entry). Running a plan is ``app.jobs.rerun_steps.replay`` (the ``app.state``
package re-exports it); a step whose kept items differ from the stored ones is reported, not hidden. This
module plans; it imports no job and no Qt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.state.gallery_versions import use_label
from app.store import AuditRecord, CaseState, StepState
from engine.retrieval.encoding.views import BIOMETRICS_VIEW
from engine.retrieval.search import SessionStateError, StepQuery

__all__ = ["ReplayStep", "path_to", "replay_plan", "step_query"]


@dataclass(frozen=True)
class ReplayStep:
    step: StepState
    query: StepQuery
    rejected: tuple[str, ...]
    confirmed: tuple[str, ...]


def step_query(step: StepState) -> StepQuery:
    """The engine query that produced a stored step (query images from the case's evidence files)."""
    keep = {step.keep_rule: int(step.keep_value) if step.keep_rule == "k" else float(step.keep_value)}
    filters = step.filters or {}
    cameras = frozenset(filters["cameras"]) if filters.get("cameras") else None
    window = filters.get("time_range")
    time_range = (window[0], window[1]) if window else None
    level = step.level if step.level_overridden else None
    if step.query_kind == "example":
        return StepQuery(example=step.example_item, scenario=step.scenario, level=level, cameras=cameras,
                         time_range=time_range, outfit_changed=step.view == BIOMETRICS_VIEW,
                         whole_gallery=step.whole_gallery, **keep)
    sketch = None if step.sketch is None else step.sketch.stored_path
    ir = None if step.ir is None else step.ir.stored_path
    return StepQuery(text=step.query_text, sketch=sketch, ir=ir, level=level, cameras=cameras,
                     time_range=time_range, whole_gallery=step.whole_gallery, **keep)


def path_to(case: CaseState, step_id: int | None) -> tuple[int, ...]:
    """Step ids from the first step to ``step_id`` (empty for None)."""
    path: list[int] = []
    node = step_id
    while node is not None:
        path.append(node)
        node = case.step(node).parent_id
    return tuple(reversed(path))


def replay_plan(case: CaseState, audit: Sequence[AuditRecord], gallery_id: int,
                path: Sequence[int] | None = None) -> list[ReplayStep]:
    """The steps of ``path`` (default: the active path) with the marks on ``gallery_id`` at their time.

    Raises ``SessionStateError`` when a step of the path searched another gallery."""
    path = tuple(case.active_path if path is None else path)
    wanted = set(path)
    marks: dict[str, str] = {}
    at_step: dict[int, dict[str, str]] = {}
    for record in audit:
        payload = record.payload
        if record.action == "mark" and payload.get("gallery") == gallery_id:
            if payload.get("state") == "cleared":
                marks.pop(payload.get("item"), None)
            else:
                marks[payload.get("item")] = payload.get("state")
        elif record.action == "step.record" and payload.get("step") in wanted:
            at_step[payload["step"]] = dict(marks)
    plan = []
    for step_id in path:
        step = case.step(step_id)
        if step.gallery_id != gallery_id:
            use = next((g for g in case.galleries if g.id == step.gallery_id), None)
            where = f"id {step.gallery_id}" if use is None else f"{use.path}, {use_label(use)}"
            raise SessionStateError(f"step {step.depth + 1} of this path searched another gallery ({where}); "
                                    f"open that gallery to continue this path, or branch from the start to "
                                    f"search this one")
        state = at_step.get(step_id, {})
        plan.append(ReplayStep(step=step, query=step_query(step),
                               rejected=tuple(i for i, s in state.items() if s == "rejected"),
                               confirmed=tuple(i for i, s in state.items() if s == "confirmed")))
    return plan
