"""A case's step tree as the report lists it: every step of every branch in the timeline's order, with the
timeline's labels (``app.case_tree``, which both share)."""

from __future__ import annotations

from dataclasses import dataclass

from app.case_tree import step_labels, tree_order
from app.store import CaseState, StepState


@dataclass(frozen=True)
class TreeRow:
    """``branch_of``: for the first step of a branch, the label of the step it continues from ("0": the
    start); ``active``: on the path from the start to the head."""

    step: StepState
    label: str
    lane: int
    branch_of: str | None
    active: bool
    head: bool


def tree_rows(case: CaseState) -> list[TreeRow]:
    """Every step of ``case`` as the timeline lists it."""
    labels = step_labels(case)
    active = set(case.active_path)
    head = case.case.head_step_id
    return [TreeRow(place.step, labels[place.step.id], place.lane, place.branch_of, place.step.id in active,
                    place.step.id == head) for place in tree_order(case)]
