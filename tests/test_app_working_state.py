"""A case's search controls belong to the case: filters, sketch, IR image, level and keep rule set in one case
are absent from a new case, come back when the first case is opened again (also from a reopened database), and
every active filter shows on the controls, in the results header, on each step's timeline line and in the step
it was applied to; filters that leave nothing name themselves."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from PySide6.QtCore import QThreadPool

from app.main_window import MainWindow
from app.state import AppState, Filters, KeepRule
from engine.index import Gallery
from engine.retrieval.encoding.views import gallery_views
from engine.retrieval.search.encoder import FingerprintEncoder

DIM = 8
N = 36
WAIT = 10_000


def unit(x):
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


class CentroidEncoder(FingerprintEncoder):
    """Text "... pK" → centroid K; sketches and IR images → centroid 0."""

    fingerprint = "ckpt-working"
    attribute_weight = None

    def __init__(self, centres):
        self.centres = centres

    def level_for(self, text):
        return "C"

    def level_and_source(self, text):
        return "C", "parser"

    def encode_text(self, text):
        return self.centres[int(text.split()[-1][1:])]

    def encode_fused(self, text, sketch, ir):
        return self.encode_text(text) if text else self.centres[0]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    rng = np.random.default_rng(5)
    centres = unit(rng.standard_normal((3, DIM)))
    identity = rng.integers(0, 3, N)
    views = gallery_views(DIM)
    vectors = {view: unit(centres[identity] + 0.5 * rng.standard_normal((N, DIM))) for view in views}
    cameras = ("classroom", "corridor", "yard")
    items = [{"id": f"{cameras[k % 3]}/f{k:04d}", "source": "walk.mp4", "frame": k, "time": float(k),
              "camera": cameras[k % 3], "identity": f"p{identity[k]}"} for k in range(N)]
    gallery = Gallery.create(tmp_path_factory.mktemp("working") / "gallery", views, "ckpt-working")
    gallery.add(items, vectors)
    return gallery, CentroidEncoder(centres)


@pytest.fixture
def pool():
    pool = QThreadPool()
    pool.setMaxThreadCount(1)
    yield pool
    pool.waitForDone(WAIT)


def make_window(qtbot, world, pool, db):
    gallery, encoder = world
    state = AppState(pool=pool)
    assert state.open_store(db, actor="tester")
    assert state.set_gallery(gallery, encoder)
    window = MainWindow(state)
    qtbot.addWidget(window)
    window.qtbot = qtbot
    return window


@pytest.fixture
def window(qtbot, world, pool, tmp_path):
    window = make_window(qtbot, world, pool, tmp_path / "cases.db")
    yield window
    window.close()


def run_step(qtbot, window, text):
    window.query_panel.set_text(text)
    with qtbot.waitSignal(window.state.step_recorded, timeout=WAIT) as blocker:
        assert window.query_panel.request_search(force=True) is not None
    qtbot.waitUntil(lambda: not window.state.busy, timeout=WAIT)
    return blocker.args[0]


def tick_camera(window, name):
    """What the analyst does: tick one camera in the results toolbar's camera menu."""
    window.results._camera_actions[name].setChecked(True)


def timeline_line(window, step_id):
    row = next(row for row in window.timeline.rows() if row.step_id == step_id)
    return f"{row.query} {row.counts} {row.keep}"


def ir_file(tmp_path):
    path = tmp_path / "ir-still.png"
    cv2.imwrite(str(path), np.full((96, 48, 3), 90, np.uint8))
    return path


def set_up_case_inputs(window, tmp_path):
    """Sketch, IR image, level and keep rule as an analyst sets them in the query panel."""
    panel = window.query_panel
    panel.set_modalities(sketch=True)
    panel.sketch.canvas.stroke([(20.0, 20.0), (100.0, 200.0)])
    assert panel.set_ir_image(ir_file(tmp_path))
    panel.set_level_override("F")
    panel.set_keep(KeepRule("k", 7))
    return panel.sketch.canvas.to_array()


def assert_clean(window):
    state, panel, results = window.state, window.query_panel, window.results
    window.qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    assert state.filters == Filters()
    assert results.filters() == (None, None)
    assert results.camera_button.text() == "All cameras"
    assert "filters" not in results.count_label.text()
    assert panel.sketch.canvas.is_empty() and not panel.sketch.canvas.can_undo
    assert panel.ir_zone.path is None
    assert panel.level_override() is None
    assert panel.keep_rule() == KeepRule()
    assert panel.modalities() == {"text": True, "sketch": False, "ir": False}


def test_filters_and_inputs_stay_with_their_case(qtbot, world, pool, window, tmp_path):
    state, results = window.state, window.results
    first = window.new_case("Woman in a white dress")
    tick_camera(window, "classroom")
    assert state.filters == Filters(cameras=frozenset({"classroom"}))
    assert results.camera_button.text() == "1 of 3 cameras: classroom"  # the controls say it
    steps = [run_step(qtbot, window, "person p1"), run_step(qtbot, window, "person p2")]
    for step_id in steps:  # recorded in each step, on each step's timeline line and in its header
        step = state.step_state(step_id)
        assert step.filters == {"cameras": ["classroom"], "time_range": None}
        assert "camera classroom" in timeline_line(window, step_id)
        state.select_step(step_id)
        header = results.count_label.text()
        assert f"Step {window.step_label(step_id)} · kept {step.candidates_after} of {step.candidates_before} " \
               f"candidates · filters: camera classroom" in header
        assert "Grid: " in header and "filters: camera classroom (also the next step's)" in header
    assert state.step_state(steps[0]).candidates_before == N  # the whole gallery, the filter then applied
    assert state.step_state(steps[0]).filtered_out == N - N // 3
    assert results.camera_button.text() == "1 of 3 cameras: classroom"  # a filtered ranking keeps the choice
    sketch = set_up_case_inputs(window, tmp_path)

    second = window.new_case("Someone else")  # a new case starts clean: no filter, sketch or IR of the first
    assert second != first
    assert_clean(window)
    step = state.step_state(run_step(qtbot, window, "person p0"))
    assert step.filters == {"cameras": None, "time_range": None}
    assert step.query_kind == "text" and step.sketch is None and step.ir is None
    assert step.candidates_before == N and step.keep_rule == "rho"
    assert "camera" not in timeline_line(window, step.id)

    assert window.open_case(first)  # switching back restores the first case's own state
    assert_restored(window, sketch, tmp_path)
    assert window.open_case(second)
    assert_clean(window)
    assert window.open_case(first)
    window.close()

    again = make_window(qtbot, world, pool, tmp_path / "cases.db")  # reopening the database restores them
    try:
        assert again.open_case(first)
        assert_restored(again, sketch, tmp_path)
        evidence = again.state.store.evidence_root / f"case-{first}"
        assert again.state.case.working_state["sketch"]["stored_path"].startswith(str(evidence))
        assert again.open_case(second)
        assert_clean(again)
    finally:
        again.close()


def assert_restored(window, sketch, tmp_path):
    state, panel, results = window.state, window.query_panel, window.results
    window.qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)  # a reopened path is re-run in a worker
    assert state.filters == Filters(cameras=frozenset({"classroom"}))
    assert results.filters() == (frozenset({"classroom"}), None)
    assert results.camera_button.text() == "1 of 3 cameras: classroom"
    assert np.array_equal(panel.sketch.canvas.to_array(), sketch) and not panel.sketch.canvas.can_undo
    assert panel.ir_zone.path == ir_file(tmp_path)
    assert panel.level_override() == "F" and panel.keep_rule() == KeepRule("k", 7)
    assert panel.modalities() == {"text": True, "sketch": True, "ir": True}
    assert "filters: camera classroom" in results.count_label.text()


def test_filters_that_leave_nothing_say_which_and_how_to_clear_them(qtbot, window):
    state = window.state
    window.new_case("Late evening")
    assert state.set_filters(cameras={"yard"}, time_range=(500.0, None))
    assert window.results.camera_button.text() == "1 of 3 cameras: yard"
    errors = []
    state.error.connect(errors.append)
    window.query_panel.set_text("person p1")
    window.query_panel.request_search(force=True)
    qtbot.waitUntil(lambda: bool(errors), timeout=WAIT)
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    assert "leave no candidates" in errors[-1]
    assert "Active filters: camera yard · from 500 s" in errors[-1] and "All cameras" in errors[-1]
    assert state.case.steps == ()
