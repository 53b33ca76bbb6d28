"""A case's step tree as the analyst reads it, Qt-free, for the timeline (``app.state.timeline_rows``) and the
report (``app.report.tree``) alike, so both list and name steps the same way (docs/architecture.md).

Order depends only on the order steps were made, never on which one is the head: at every step the oldest child
continues the line in the same lane and each later child starts a branch one lane further in, listed right
under the step it branches from, so undo or branch never moves a line. Labels are unique and never change once
given: a step is numbered by its depth + 1, and every branch line gets a letter in the order lines were started
("3" on the first line, "3a" on the first branch, "4b" …).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from app.store import CaseState, StepState
from engine.kernel.query_modalities import kind_parts, taking
from engine.kernel.timefmt import is_wall_clock, screen_time_short
from engine.retrieval.encoding.views import BIOMETRICS_VIEW

START_LABEL = "0"


class TreePlace(NamedTuple):
    """A step's place in the listing: its ``lane`` (branches away from the first line) and, for the first step
    of a branch, ``branch_of``: the label of the step it continues from (``START_LABEL``: the start)."""

    step: StepState
    lane: int
    branch_of: str | None


def branch_letters(index: int) -> str:
    """0 → "", 1 → "a", …, 26 → "z", 27 → "aa": the suffix of the ``index``-th line of steps."""
    letters = ""
    while index > 0:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return letters


def _children(case: CaseState) -> dict[int | None, list[StepState]]:
    children: dict[int | None, list[StepState]] = {}
    for step in sorted(case.steps, key=lambda s: s.seq):  # creation order only: undo never reorders
        children.setdefault(step.parent_id, []).append(step)
    return children


def step_labels(case: CaseState | None) -> dict[int, str]:
    """{step id: unique label}: depth + 1, plus the letter of the line the step is on."""
    if case is None:
        return {}
    children = _children(case)
    line_of: dict[int, int] = {}
    lines = 1
    for step in sorted(case.steps, key=lambda s: s.seq):
        if step is children[step.parent_id][0]:  # the oldest child continues its parent's line
            line_of[step.id] = 0 if step.parent_id is None else line_of[step.parent_id]
        else:
            line_of[step.id], lines = lines, lines + 1
    return {step.id: f"{step.depth + 1}{branch_letters(line_of[step.id])}" for step in case.steps}


def step_label(case: CaseState | None, step_id: int | None) -> str:
    """The one label of a step wherever it is named (timeline, status bar, plot, notes, messages, report):
    "3", "3a"; ``START_LABEL`` for the start (None); the id itself when the case has no such step."""
    if step_id is None:
        return START_LABEL
    return step_labels(case).get(step_id, str(step_id))


def tree_order(case: CaseState | None) -> list[TreePlace]:
    """Every step of ``case`` in listing order (iterative: a tree of any depth)."""
    if case is None:
        return []
    labels = step_labels(case)
    children = _children(case)
    roots = children.get(None, [])
    # a stack: a step's later children (branches) are listed before its oldest child continues the line
    pending: list[TreePlace] = [TreePlace(roots[0], 0, None)] if roots else []
    pending += [TreePlace(later, 1, START_LABEL) for later in reversed(roots[1:])]
    order: list[TreePlace] = []
    while pending:
        place = pending.pop()
        order.append(place)
        kids = children.get(place.step.id, [])
        if kids:
            pending.append(TreePlace(kids[0], place.lane, None))
            pending += [TreePlace(later, place.lane + 1, labels[place.step.id]) for later in reversed(kids[1:])]
    return order


def query_summary(step: StepState, limit: int = 60, item_label: Callable[[str], str] | None = None) -> str:
    """One line naming what the step searched with; ``item_label`` names a find-similar step's example item
    (default: its id)."""
    if step.query_kind == "example":  # the view says what ranked: appearance, reid:<scenario>, rgb or biometrics
        example = (item_label or str)(step.example_item) if step.example_item else "an item"
        if step.view == BIOMETRICS_VIEW:
            return f"Similar to {example} · other clothes (biometrics)"
        return f"Similar to {example}" + (f" · {step.view}" if step.view else "")
    parts = [m.control for m in taking("image") if m.name in kind_parts(step.query_kind)]
    if step.query_text:
        text = " ".join(step.query_text.split())
        if len(text) > limit:
            text = text[: limit - 1].rstrip() + "…"
        parts.append(f"“{text}”")
    return " + ".join(parts) or step.query_kind


def _moment(seconds: float) -> str:
    """A filter's time bound: ``09 Jun 15:55`` on the wall clock, ``10 s`` on a footage clock."""
    return screen_time_short(seconds) if is_wall_clock(seconds) else f"{seconds:g} s"


def filters_summary(filters: dict | None) -> str:
    """ "2 cameras · from 10 s" (or "… · 09 Jun 15:55–16 Jun 03:55") style note, or "" without filters."""
    if not filters:
        return ""
    notes = []
    cameras = filters.get("cameras")
    if cameras:
        notes.append(f"camera {cameras[0]}" if len(cameras) == 1 else f"{len(cameras)} cameras")
    window = filters.get("time_range")
    if window:
        start, end = window
        if start is not None and end is not None:
            both = is_wall_clock(start) or is_wall_clock(end)
            notes.append(f"{_moment(start)}–{_moment(end)}" if both else f"{start:g}–{end:g} s")
        elif start is not None:
            notes.append(f"from {_moment(start)}")
        elif end is not None:
            notes.append(f"until {_moment(end)}")
    return " · ".join(notes)
