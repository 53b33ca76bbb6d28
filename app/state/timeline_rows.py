"""The step tree of a case as rows for the timeline (Qt-free).

Rows come in depth-first order and depend only on the order steps were made, never on which one is the head:
at every step the oldest child continues the line in the same lane and each later child starts a branch one
lane further in, listed right under the step it branches from, so a fork reads top to bottom and undo or branch
never moves a line (only the highlighted active path changes). Row 0 is the start (the whole gallery).

Order and labels are the case tree's (``app.case_tree``, shared with the report): "Step 3a" names one step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app.case_tree import START_LABEL, filters_summary, step_label, step_labels, tree_order
from app.case_tree import query_summary as _query_summary
from app.state.gallery_versions import use_label
from app.state.item_label import short_id
from app.state.query_spec import describe_keep
from app.store import CaseState, StepState

__all__ = ["GraphCell", "TimelineRow", "filters_summary", "graph", "query_summary", "step_label", "step_labels",
           "timeline_rows"]


def query_summary(step: StepState, limit: int = 60, item_label: Callable[[str], str] | None = None) -> str:
    """``app.case_tree.query_summary`` naming an example item by ``item_label``, else by its shortened id."""
    return _query_summary(step, limit, item_label or short_id)


@dataclass(frozen=True)
class TimelineRow:
    step_id: int | None  # None: the start row (before the first step)
    number: int  # step number along its path (depth + 1); 0 for the start row
    label: str  # unique in the case: the number, plus the branch line's letter ("3", "3a")
    lane: int  # indentation: how many branches away from the first line
    title: str  # "Step 2a" / "Start"
    query: str  # summary of the query
    level: str | None
    counts: str  # "1,000 → 500"
    keep: str  # "keep 50 %"
    active: bool  # on the path from the start to the head
    head: bool  # the step the next search continues from
    undone: bool
    branch_of: str | None  # for the first row of a branch: the label of the step it branches from ("0": start)
    seconds: float | None = None
    example_item: str | None = None  # a find-similar step's example item id (the query names it by ``item_label``)


def _row(step: StepState, lane: int, active: set[int], head: int | None,
         branch_of: str | None, label: str, item_label: Callable[[str], str] | None,
         gallery: str = "") -> TimelineRow:
    counts = f"{step.candidates_before:,} → {step.candidates_after:,}"
    keep = describe_keep(step.keep_rule, step.keep_value)
    note = filters_summary(step.filters)
    if note:
        keep = f"{keep} · {note}"
    if gallery:  # the gallery version the step searched ("gallery v2, 1,240 items")
        keep = f"{keep} · {gallery}"
    return TimelineRow(step_id=step.id, number=step.depth + 1, label=label, lane=lane, title=f"Step {label}",
                       query=query_summary(step, item_label=item_label), level=step.level, counts=counts,
                       keep=keep, active=step.id in active, head=step.id == head, undone=step.undone,
                       branch_of=branch_of, seconds=step.seconds,
                       example_item=step.example_item if step.query_kind == "example" else None)


def timeline_rows(case: CaseState | None, gallery_size: int | None = None,
                  item_label: Callable[[str], str] | None = None) -> list[TimelineRow]:
    """Rows for ``case`` (an empty start row when there is no case); ``item_label`` names example items."""
    head = None if case is None else case.case.head_step_id
    size = "" if gallery_size is None else f"{gallery_size:,} items"
    rows = [TimelineRow(step_id=None, number=0, label=START_LABEL, lane=0, title="Start", query="Whole gallery",
                        level=None, counts=size, keep="", active=True, head=case is not None and head is None,
                        undone=False, branch_of=None)]
    if case is None:
        return rows
    active = set(case.active_path)
    labels = step_labels(case)
    # the gallery version each step searched, named once the case has searched more than one
    galleries = {use.id: use_label(use) for use in case.galleries} if len(case.galleries) > 1 else {}
    for place in tree_order(case):
        step = place.step
        rows.append(_row(step, place.lane, active, head, place.branch_of, labels[step.id], item_label,
                         galleries.get(step.gallery_id, "")))
    return rows


@dataclass(frozen=True)
class GraphCell:
    """How the step graph crosses one row: a dot in ``lane``; a line from the row's top to the dot (``up``),
    from the dot to its bottom (``down``), an elbow from the lane left of it (a branch's first row), and
    vertical lines of other lanes passing through (``through``). ``down_active`` and ``through_active``: the
    parts that lead to the next step of the active path (drawn in the accent colour)."""

    lane: int
    up: bool
    down: bool
    elbow: bool
    through: frozenset[int]
    down_active: bool = False
    through_active: frozenset[int] = frozenset()


def graph(rows: list[TimelineRow]) -> list[GraphCell]:
    """The lines joining ``timeline_rows`` into a graph: each line runs in one lane from its first to its last
    row; a branch's line hangs off the line it branches from, which stays drawn down to the branch."""
    line_of_row: list[int] = []
    lanes_open: dict[int, int] = {}  # lane → the line currently running in it
    spans: dict[int, list[int]] = {}  # line → [first row, last row, lane]
    members: dict[int, list[int]] = {}  # line → its rows
    elbows: set[int] = set()
    for index, row in enumerate(rows):
        starts = row.step_id is None or row.branch_of is not None or row.lane not in lanes_open
        if starts:
            line = len(spans)
            spans[line] = [index, index, row.lane]
            if row.branch_of is not None and row.lane - 1 in lanes_open:
                parent = spans[lanes_open[row.lane - 1]]
                parent[1] = max(parent[1], index)
                elbows.add(index)
        else:
            line = lanes_open[row.lane]
            spans[line][1] = index
        members.setdefault(line, []).append(index)
        lanes_open[row.lane] = line
        for deeper in [lane for lane in lanes_open if lane > row.lane]:
            del lanes_open[deeper]
        line_of_row.append(line)

    def next_active(line: int, index: int) -> bool:
        """Whether the line's next step below ``index`` is on the active path."""
        later = [r for r in members[line] if r > index]
        return bool(later) and rows[later[0]].active and not rows[later[0]].undone

    cells = []
    for index, row in enumerate(rows):
        line = line_of_row[index]
        first, last, _ = spans[line]
        through = {lane: other for other, (start, end, lane) in spans.items()
                   if start < index < end and lane != row.lane}
        cells.append(GraphCell(lane=row.lane, up=index > first, down=index < last, elbow=index in elbows,
                               through=frozenset(through), down_active=row.active and next_active(line, index),
                               through_active=frozenset(lane for lane, other in through.items()
                                                        if next_active(other, index))))
    return cells
