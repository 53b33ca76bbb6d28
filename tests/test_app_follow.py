"""Follow to the next camera in the workstation: Search → Follow to next camera (Ctrl+Shift+F) on a selected
confirmed item records a find-similar step over the whole gallery with the other cameras and a time window,
``AppState.proposals()`` gives its candidate next sightings, undo takes it back, and a reopened case re-runs
it with the whole gallery again (app/state/follow.py, app/state/step_actions.py, app/window/step_actions.py)."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from app.main_window import MainWindow
from app.state import AppState, replay_plan
from app.state.follow import FOLLOW_WINDOW, NotASighting, confirmed_sighting, proposals_message
from engine.index import Gallery

WAIT = 10_000
DIM = 8
HOUR = 3600.0
T0 = 1_700_000_000.0
#: p0 followed from cam0 (a1, a2), seen again on cam1 an hour later and on cam2 half an hour before
ROWS = [
    ("a1", "cam0", T0, "p0"), ("a2", "cam0", T0 + 4, "p0"),
    ("b1", "cam1", T0 + HOUR, "p0"), ("b2", "cam1", T0 + HOUR + 3, "p0"), ("c1", "cam2", T0 - HOUR / 2, "p0"),
    ("d1", "cam1", T0 + 72 * HOUR, "p0"),
    ("e1", "cam0", T0 + 60, "p1"), ("e2", "cam1", T0 + 2 * HOUR, "p1"), ("e3", "cam2", T0 + 3 * HOUR, "p1"),
    ("f1", "cam1", T0 + 5 * HOUR, "p2"), ("f2", "cam2", T0 - 4 * HOUR, "p2"), ("f3", "cam0", T0 + HOUR, "p2"),
]


def unit(x):
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


@pytest.fixture
def gallery(tmp_path):
    rng = np.random.default_rng(3)
    centres = {p: unit(rng.standard_normal(DIM)) for p in ("p0", "p1", "p2")}
    vectors = unit(np.stack([centres[r[3]] + 0.1 * rng.standard_normal(DIM) for r in ROWS]))
    gallery = Gallery.create(tmp_path / "gallery", {"rgb": DIM}, "ckpt-follow")
    gallery.add([{"id": i, "source": f"{c}.mp4", "frame": k, "time": t, "camera": c, "identity": p}
                 for k, (i, c, t, p) in enumerate(ROWS)], {"rgb": vectors})
    return gallery


@pytest.fixture
def window(qtbot, tmp_path, gallery):
    state = AppState()
    assert state.open_store(tmp_path / "cases.db", actor="tester")
    window = MainWindow(state)
    qtbot.addWidget(window)
    assert state.set_gallery(gallery, None)
    yield window
    window.close()


def test_follow_the_selected_confirmed_item_records_a_step_with_proposals_and_undo_removes_it(qtbot, window):
    state = window.state
    case_id = window.new_case("Follow p0")
    assert case_id is not None
    assert window.results.select_item("a2")
    assert window.follow_action.trigger() is None and state.head_step_id is None  # not confirmed yet
    assert "confirm the selected item first" in window.banner.text()
    assert state.confirm("a1") and state.confirm("a2")
    assert window.results.select_item("a2")
    with qtbot.waitSignal(state.step_recorded, timeout=WAIT) as blocker:
        window.follow_action.trigger()
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    step = state.step_state(blocker.args[0])
    assert step.example_item == "a1" and step.query_kind == "example" and step.whole_gallery
    assert step.filters == {"cameras": ["cam1", "cam2"], "time_range": [T0 - FOLLOW_WINDOW, T0 + 4 + FOLLOW_WINDOW]}
    assert step.candidates_before == len(ROWS)  # the whole gallery, whatever came before
    rows = state.proposals()
    assert rows and rows[0]["items"] == ["b1", "b2"] and rows[0]["camera"] == "cam1"
    assert rows[0]["direction"] == "after" and rows[0]["agreement"] is None
    assert {"camera", "start", "end", "items", "best", "score", "agreement", "direction"} <= set(rows[0])
    assert next(r for r in rows if r["items"] == ["c1"])["direction"] == "before"
    assert all("d1" not in r["items"] and not {"a1", "a2"} & set(r["items"]) for r in rows)
    assert window.statusBar().currentMessage() == proposals_message(rows)
    assert ("Ctrl+Shift+F", "Follow to next camera") in window.shortcut_rows()
    assert state.follow_sighting(confirmed_sighting(state.gallery, state.marks, "a1"), 60.0) is None
    assert "within 1 min of the sighting on cam0" in window.banner.text() and state.head_step_id == blocker.args[0]
    timeline = window.sightings  # the sightings timeline draws the confirmed sighting and the proposals
    assert [row.kind for row in timeline.chart.rows].count("confirmed") == 1
    proposed = [row for row in timeline.chart.rows if row.proposed]
    assert sorted(row.items for row in proposed) == sorted(tuple(r["items"]) for r in rows)
    assert state.confirm("b1")  # a confirmed proposal is a sighting of the case already: no longer proposed
    assert all("b1" not in r["items"] for r in state.proposals())
    assert window.steps.undo_step()
    assert state.head_step_id is None and state.proposals() == []
    assert state.case.step(blocker.args[0]).undone
    assert not any(row.proposed for row in timeline.chart.rows)
    # F on a confirmed sighting of the timeline follows it, as the menu does
    timeline.canvas.setFocus()
    qtbot.keyClick(timeline.canvas, Qt.Key.Key_Home)
    with qtbot.waitSignal(state.step_recorded, timeout=WAIT) as again:
        qtbot.keyClick(timeline.canvas, Qt.Key.Key_F)
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    assert state.step_state(again.args[0]).whole_gallery and state.proposals()


def test_a_reopened_case_reruns_the_follow_step_over_the_whole_gallery(qtbot, window):
    state = window.state
    case_id = window.new_case("Reopened follow")
    assert state.set_filters(["cam0"], None)
    with qtbot.waitSignal(state.step_recorded, timeout=WAIT):  # a first step that keeps cam0 items only
        state.find_similar("a1")
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    state.set_filters(None, None)
    assert state.confirm("a1")
    sighting = confirmed_sighting(state.gallery, state.marks, "a1")
    with qtbot.waitSignal(state.step_recorded, timeout=WAIT):
        assert state.follow_sighting(sighting, 6 * HOUR) is not None
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    before = state.proposals()
    assert before and before[0]["items"] == ["b1", "b2"]
    assert state.open_case(case_id) and state.proposals() == []  # the engine results are re-run on demand
    plan = replay_plan(state.case, state.store.audit_trail(case_id), state.gallery_id)
    assert [entry.query.whole_gallery for entry in plan] == [False, True]
    with qtbot.waitSignal(state.session_changed, timeout=WAIT):
        state.restore_session()
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    assert state.proposals() == before


def test_only_a_confirmed_item_of_the_open_gallery_is_followed(gallery):
    with pytest.raises(NotASighting, match="Open a gallery"):
        confirmed_sighting(None, {}, "a1")
    with pytest.raises(NotASighting, match="Select a confirmed item"):
        confirmed_sighting(gallery, {"a1": "confirmed"}, None)
    with pytest.raises(NotASighting, match="confirm the selected item"):
        confirmed_sighting(gallery, {"a1": "rejected"}, "a1")
    sighting = confirmed_sighting(gallery, {"a1": "confirmed", "a2": "confirmed", "b1": "confirmed"}, "a2")
    assert sighting.items == ("a1", "a2") and sighting.camera == "cam0"


def test_the_timelines_follow_box_sets_the_window_the_next_follow_searches(qtbot, window):
    state, box = window.state, window.sightings.follow_hours
    assert box.value() == round(FOLLOW_WINDOW / HOUR)  # the window's default, in whole hours
    assert window.new_case("Follow window") is not None
    assert state.confirm("a1")
    box.setValue(2)
    assert window.steps.follow_window == 2 * HOUR
    assert window.results.select_item("a1")
    with qtbot.waitSignal(state.step_recorded, timeout=WAIT) as blocker:
        window.follow_action.trigger()
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    assert state.step_state(blocker.args[0]).filters["time_range"] == [T0 - 2 * HOUR, T0 + 2 * HOUR]
