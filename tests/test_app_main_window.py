"""The main window on a temporary case database and a tiny real gallery (a tiny world ingested with a tiny
untrained checkpoint): three progressive text steps through the query panel shrink the candidates by
⌈ρ·n⌉, a confirmed item and the steps survive closing and reopening; errors reach the banner; a busy state
disables searching."""

from __future__ import annotations

import math

import pytest

from app.main_window import CheckpointModels, MainWindow
from app.state import AppState
from engine.gallery import Gallery

WAIT = 20_000
STEPS = ("a woman", "a woman in a red jacket", "a woman in a red jacket and blue jeans carrying a backpack")


@pytest.fixture(scope="module")
def tiny_gallery(tmp_path_factory):
    import torch

    from engine.ingest import ModelEncoder, ingest
    from engine.models import create, save
    from engine.world.build import build_world

    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("main-window")
    build_world(root / "world", identities=8, images_per_identity=4, seed=5)
    checkpoint = save(create("tiny", device="cpu"), root / "checkpoint")
    models = CheckpointModels(checkpoint)
    ingest(root / "world", root / "gallery", ModelEncoder(models.model()))
    return root / "gallery", models


@pytest.fixture
def window(qtbot, tmp_path, tiny_gallery):
    gallery_dir, models = tiny_gallery
    state = AppState()
    assert state.open_store(tmp_path / "cases.db", actor="tester")
    window = MainWindow(state, models)
    qtbot.addWidget(window)
    with qtbot.waitSignal(state.gallery_changed, timeout=WAIT):
        assert window.open_gallery(gallery_dir) is not None
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    yield window
    window.close()


def run_step(qtbot, window, text):
    window.query_panel.set_text(text)
    with qtbot.waitSignal(window.state.step_recorded, timeout=WAIT) as blocker:
        window.query_panel.search_action.trigger()
    qtbot.waitUntil(lambda: not window.state.busy, timeout=WAIT)
    return blocker.args[0]


def test_the_window_lays_out_every_panel(window):
    assert window.width() >= window.minimumWidth() and window.height() >= window.minimumHeight()
    assert [window.columns.widget(i) for i in range(3)] == [window.left, window.results, window.right]
    assert window.right.widget(0) is window.detail_scroll and window.right.widget(1) is window.distribution
    assert window.detail_scroll.widget() is window.detail
    assert "Gallery: gallery (24 items)" in window.windowTitle()
    menus = [action.text() for action in window.menuBar().actions()]
    assert menus == ["&Case", "&Gallery", "&Search", "&View", "&Help"]
    assert not window.query_panel.search_action.isEnabled()  # no case yet
    assert window.results.model.rowCount() == 24  # the whole gallery, before any step


def test_progressive_steps_survive_closing_and_reopening(qtbot, window, tmp_path, tiny_gallery):
    state = window.state
    case_id = window.new_case("Red jacket, platform 2")
    assert case_id is not None and "Case: Red jacket, platform 2" in window.windowTitle()
    assert window.query_panel.search_action.isEnabled()
    sizes = [len(state.gallery)]
    step_ids = []
    for text in STEPS:
        step_ids.append(run_step(qtbot, window, text))
        step = state.step_state(step_ids[-1])
        assert step.candidates_before == sizes[-1]
        assert step.candidates_after == math.ceil(0.5 * sizes[-1])
        sizes.append(step.candidates_after)
    assert sizes == [24, 12, 6, 3]
    assert [row.step_id for row in window.timeline.rows() if row.step_id is not None][-3:] == step_ids
    assert window.timeline.selected_step_id() == step_ids[-1]
    assert not window.distribution.is_empty()

    chosen = state.step_state(step_ids[-1]).kept_ids[0]
    assert window.results.select_item(chosen)
    qtbot.waitUntil(lambda: window.detail.item_id() == chosen, timeout=WAIT)
    window.results.marks_changed.emit([chosen], "confirmed")
    assert state.marks == {chosen: "confirmed"}
    assert window.results.model.kept_count() == 3  # a re-plotted distribution leaves the step's kept flags
    window.timeline.step_selected.emit(step_ids[1])
    assert state.selected_step_id == step_ids[1]
    assert window.banner.text() == ""
    window.close()

    gallery_dir, models = tiny_gallery
    again = AppState()
    assert again.open_store(tmp_path / "cases.db", actor="tester")
    reopened = MainWindow(again, models)
    qtbot.addWidget(reopened)
    with qtbot.waitSignal(again.gallery_changed, timeout=WAIT):
        reopened.open_gallery(gallery_dir)
    assert reopened.open_case(case_id)
    qtbot.waitUntil(lambda: not again.busy, timeout=WAIT)
    assert again.case.active_path == tuple(step_ids)
    assert again.marks == {chosen: "confirmed"}
    assert again.selected_step_id == step_ids[-1]
    assert again.step_result(step_ids[-1]) is not None  # re-run in a worker on reopening
    assert reopened.results.select_item(chosen)
    assert reopened.banner.text() == ""
    reopened.close()


def test_state_errors_show_in_the_banner_not_as_tracebacks(window):
    window.state.undo_step()  # no case open
    assert not window.banner.isHidden()
    assert window.banner.text() == "Open or create a case first"
    assert "Traceback" not in window.banner.text()
    window.banner.dismiss_button.click()
    assert window.banner.isHidden()
    window.state.new_case("Empty")
    window.state.undo_step()
    assert window.banner.text() == "There is no step to undo"


def test_busy_disables_search_and_shows_cancel(qtbot, window):
    window.new_case("Busy")
    panel = window.query_panel
    assert panel.search_action.isEnabled()
    window.state.busy_changed.emit(True)
    assert not panel.search_action.isEnabled()
    assert panel.search_button.text() == "Cancel search"
    assert window.cancel_button.isVisibleTo(window) and window.progress_bar.isVisibleTo(window)
    window.state.busy_changed.emit(False)
    assert panel.search_action.isEnabled()
    assert not window.cancel_button.isVisibleTo(window)


def test_gallery_opened_without_a_checkpoint_says_how_to_give_one(qtbot, tmp_path, tiny_gallery):
    state = AppState()
    assert state.open_store(tmp_path / "cases.db")
    window = MainWindow(state, None)
    qtbot.addWidget(window)
    with qtbot.waitSignal(state.gallery_changed, timeout=WAIT):
        window.open_gallery(tiny_gallery[0])
    assert "--checkpoint" in window.banner.text()
    assert window.ingest_footage(tmp_path) is None
    assert "--checkpoint" in window.banner.text()
    assert isinstance(state.gallery, Gallery)
    window.close()
