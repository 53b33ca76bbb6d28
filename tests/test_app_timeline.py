"""Step timeline: rows and graph of a fake case (active line, branches, undone steps) and the signals the
widget sends for clicks, buttons, shortcuts and its context menu."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QWidget

from app.state.timeline_rows import graph, query_summary, timeline_rows
from app.store import CaseState, CaseSummary, StepState
from app.views.sketch_canvas import SketchEditor
from app.views.timeline import StepTimeline

NOW = datetime(2026, 11, 29, tzinfo=UTC)


def make_step(step_id, parent, depth, *, text=None, kind="text", level="C", before=1000, after=500,
              rule="rho", value=0.5, undone=False, example=None, filters=None):
    return StepState(
        id=step_id, seq=step_id, parent_id=parent, depth=depth, gallery_id=1, query_text=text,
        query_kind=kind, example_item=example, scenario=None, sketch=None, ir=None, view="text:C",
        level=level, level_source="parser", level_overridden=False, keep_rule=rule, keep_value=value, k=after,
        filters=filters or {"cameras": None, "time_range": None}, candidates_before=before, filtered_out=0,
        candidates_after=after, kept_ids=(), kept_scores=(), kept_sha256="0" * 64, histogram={}, seconds=0.12,
        created_at=NOW, undone_at=NOW if undone else None)


def make_case(steps, head, case_id=1):
    parents = {s.id: s.parent_id for s in steps}
    path, node = [], head
    while node is not None:
        path.append(node)
        node = parents[node]
    summary = CaseSummary(case_id, "Platform 2", "", "open", NOW, NOW, head, len(steps))
    return CaseState(summary, (), tuple(steps), tuple(reversed(path)), (), (), (), "")


def branched_case():
    """1 → 2 → 3, 1 → 4 → 5 (active, head 5), 2 → 6 (undone)."""
    steps = [
        make_step(1, None, 0, text="a tall woman in a red jacket", before=12000, after=6000),
        make_step(2, 1, 1, text="black backpack", level="M", before=6000, after=3000),
        make_step(3, 2, 2, kind="sketch", level=None, before=3000, after=100, rule="k", value=100),
        make_step(4, 1, 1, text="blonde ponytail", level="F", before=6000, after=600, rule="threshold",
                  value=0.312, filters={"cameras": ["cam2", "cam3"], "time_range": [30.0, None]}),
        make_step(5, 4, 2, kind="example", example="cam2/f00311", level=None, before=600, after=60, rule="k",
                  value=60),
        make_step(6, 2, 2, text="grey cap", level="UC", before=3000, after=1500, undone=True),
    ]
    return make_case(steps, head=5)


@pytest.fixture
def timeline(qtbot):
    timeline = StepTimeline()
    qtbot.addWidget(timeline)
    timeline.resize(360, 520)
    timeline.show()
    qtbot.waitExposed(timeline)
    timeline.set_case(branched_case(), 12000)
    return timeline


def test_rows_keep_creation_order_and_branches_get_unique_labels():
    rows = timeline_rows(branched_case(), 12000)
    assert [(r.step_id, r.lane, r.branch_of) for r in rows] == [
        (None, 0, None), (1, 0, None), (4, 1, "1"), (5, 1, None), (2, 0, None), (6, 1, "2"), (3, 0, None)]
    assert [r.title for r in rows] == ["Start", "Step 1", "Step 2a", "Step 3a", "Step 2", "Step 3b", "Step 3"]
    assert len({r.label for r in rows}) == len(rows)
    assert [r.step_id for r in rows if r.active] == [None, 1, 4, 5]
    assert [r.step_id for r in rows if r.head] == [5] and [r.step_id for r in rows if r.undone] == [6]
    start, first = rows[0], rows[1]
    assert start.counts == "12,000 items" and start.query == "Whole gallery"
    assert (first.title, first.counts, first.keep) == ("Step 1", "12,000 → 6,000", "keep 50 %")
    fourth = next(r for r in rows if r.step_id == 4)
    assert fourth.keep == "score ≥ 0.312 · 2 cameras · from 30 s" and fourth.level == "F"
    assert next(r for r in rows if r.step_id == 5).query == "Similar to cam2/f00311 · text:C"
    assert next(r for r in rows if r.step_id == 3).keep == "keep top 100"


def test_graph_lines_join_each_line_and_hang_branches_off_their_fork():
    cells = graph(timeline_rows(branched_case()))
    # lane 0 (start → 1 → 2 → 3) runs through the branch rows 2a, 3a and 3b
    assert [(c.up, c.down) for c in cells] == [(False, True), (True, True), (False, True), (True, False),
                                               (True, True), (False, False), (True, False)]
    assert [c.elbow for c in cells] == [False, False, True, False, False, True, False]
    assert [sorted(c.through) for c in cells] == [[], [], [0], [0], [], [0], []]
    # the active path start → 1 → 2a → 3a is the accent line; the first line below step 1 is not on it
    assert [c.down_active for c in cells] == [True, False, True, False, False, False, False]
    assert [sorted(c.through_active) for c in cells] == [[]] * 7


def test_undo_and_branch_never_move_a_row_only_the_active_path():
    case = branched_case()
    before = [(r.step_id, r.lane, r.label) for r in timeline_rows(case)]
    steps = [replace(s, undone_at=NOW) if s.id == 5 else s for s in case.steps]
    undone = make_case(steps, head=4)  # step 3a undone: its parent 2a is the head
    rows = timeline_rows(undone)
    assert [(r.step_id, r.lane, r.label) for r in rows] == before
    assert [r.step_id for r in rows if r.head] == [4] and [r.step_id for r in rows if r.active] == [None, 1, 4]
    branched = make_case(case.steps, head=2)  # "branch here" on step 2
    assert [(r.step_id, r.lane, r.label) for r in timeline_rows(branched)] == before


def test_branch_here_says_where_the_next_step_continues(timeline):
    assert timeline.next_label.text() == "Next step continues from step 3a"
    timeline.set_case(make_case(branched_case().steps, head=2), 12000)
    assert timeline.next_label.text() == "Next step continues from step 2 as a new branch"
    timeline.set_case(make_case(branched_case().steps, head=None), 12000)
    assert timeline.next_label.text() == "Next step searches the whole gallery"


def test_query_summaries():
    assert query_summary(make_step(1, None, 0, kind="text+sketch", text="red  coat\nblack boots")) == \
        "Sketch + “red coat black boots”"
    assert query_summary(make_step(1, None, 0, kind="ir")) == "IR image"
    long = query_summary(make_step(1, None, 0, text="word " * 40), limit=30)
    assert long.endswith("…”") and len(long) <= 32
    assert [r.step_id for r in timeline_rows(None)] == [None]


def test_the_widget_shows_one_row_per_step_and_selects_the_head(timeline):
    assert timeline.list.count() == 7
    assert timeline.selected_step_id() == 5
    assert not timeline.empty_hint.isVisible()
    assert timeline.undo_button.isEnabled()
    assert not timeline.branch_button.isEnabled()  # the head is already where the next step continues


def test_clicking_a_row_selects_its_step(qtbot, timeline):
    row = [r.step_id for r in timeline.rows()].index(2)
    rect = timeline.list.visualItemRect(timeline.list.item(row))
    with qtbot.waitSignal(timeline.step_selected, timeout=1000) as blocker:
        qtbot.mouseClick(timeline.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == [2]
    seen = []
    timeline.step_selected.connect(seen.append)
    timeline.set_selected(4)
    assert timeline.selected_step_id() == 4 and seen == []
    timeline.set_case(branched_case(), 12000)  # same case again: the selection stays
    assert timeline.selected_step_id() == 4


def test_undo_and_branch_buttons_and_shortcuts(qtbot, timeline):
    with qtbot.waitSignal(timeline.undo_requested, timeout=1000):
        timeline.undo_button.click()
    timeline.set_selected(2)
    assert timeline.branch_button.isEnabled()
    with qtbot.waitSignal(timeline.branch_requested, timeout=1000) as blocker:
        timeline.branch_button.click()
    assert blocker.args == [2]
    timeline.activateWindow()
    qtbot.waitUntil(timeline.isActiveWindow, timeout=2000)
    timeline.list.setFocus()
    with qtbot.waitSignal(timeline.branch_requested, timeout=1000) as blocker:
        qtbot.keyClick(timeline.list, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    assert blocker.args == [2]
    with qtbot.waitSignal(timeline.undo_requested, timeout=1000):
        qtbot.keyClick(timeline.list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    timeline.set_selected(6)
    assert not timeline.branch_button.isEnabled()  # an undone step cannot be continued
    timeline.set_selected(None)
    with qtbot.waitSignal(timeline.branch_requested, timeout=1000) as blocker:
        timeline.branch_button.click()
    assert blocker.args == [None]
    timeline.set_busy(True)
    assert not timeline.undo_button.isEnabled() and not timeline.branch_button.isEnabled()


def test_context_menu_actions(qtbot, timeline):
    rows = {row.step_id: row for row in timeline.rows()}
    menu = timeline.context_menu_for(rows[3])
    texts = [a.text() for a in menu.actions()]
    assert texts == ["Show results", "Branch from here"]
    with qtbot.waitSignal(timeline.step_selected, timeout=1000) as blocker:
        menu.actions()[0].trigger()
    assert blocker.args == [3]
    with qtbot.waitSignal(timeline.branch_requested, timeout=1000) as blocker:
        menu.actions()[1].trigger()
    assert blocker.args == [3]
    head_menu = timeline.context_menu_for(rows[5])
    assert [a.text() for a in head_menu.actions()] == ["Show results", "Branch from here", "Undo this step"]
    assert not head_menu.actions()[1].isEnabled()
    with qtbot.waitSignal(timeline.undo_requested, timeout=1000):
        head_menu.actions()[2].trigger()


def test_an_empty_case_has_only_the_start(timeline):
    timeline.set_case(make_case([], head=None, case_id=2), 50)
    assert timeline.list.count() == 1 and timeline.selected_step_id() is None
    assert timeline.empty_hint.isVisible()
    assert not timeline.undo_button.isEnabled() and not timeline.branch_button.isEnabled()


def test_ctrl_z_in_the_canvas_undoes_a_stroke_not_the_step(qtbot):
    window = QWidget()
    qtbot.addWidget(window)
    layout = QHBoxLayout(window)
    editor, timeline = SketchEditor(), StepTimeline()
    layout.addWidget(editor)
    layout.addWidget(timeline)
    timeline.set_case(make_case([make_step(1, None, 0, text="a man")], head=1), 100)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=2000)
    undo_steps = []
    timeline.undo_requested.connect(lambda: undo_steps.append(1))
    editor.canvas.stroke([(10, 10), (100, 200)])
    editor.canvas.setFocus()
    qtbot.keyClick(editor.canvas, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert editor.canvas.is_empty() and undo_steps == []
    timeline.list.setFocus()
    qtbot.keyClick(timeline.list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert undo_steps == [1]


def test_a_wall_clock_time_filter_is_written_as_dates_not_raw_seconds():
    from app.case_tree import filters_summary
    from engine.kernel.timefmt import screen_time_short

    start, end = 1_715_784_944.0, 1_715_828_144.0
    note = filters_summary({"cameras": ["cam02", "cam04"], "time_range": [start, end]})
    assert note == f"2 cameras · {screen_time_short(start)}–{screen_time_short(end)}"
    assert "e+09" not in note and "e+09" not in filters_summary({"time_range": [start, None]})
    assert filters_summary({"time_range": [None, 30.0]}) == "until 30 s"  # a footage clock stays in seconds
