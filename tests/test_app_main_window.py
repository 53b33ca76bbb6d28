"""The main window on a temporary case database and a tiny real gallery (a tiny world ingested with a tiny
untrained checkpoint): three progressive text steps through the query panel shrink the candidates by
⌈ρ·n⌉, a confirmed item and the steps survive closing and reopening; errors reach the banner; a busy state
disables searching."""

from __future__ import annotations

import math

import pytest
from PySide6.QtCore import QPoint, QRect, QSettings, Qt
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QWidget

from app.main_window import MINIMUM_SIZE, CheckpointModels, MainWindow
from app.state import AppState, KeepRule
from engine.index import Gallery

WAIT = 20_000
STEPS = ("a woman", "a woman in a red jacket", "a woman in a red jacket and blue jeans carrying a backpack")


@pytest.fixture(scope="module")
def tiny_gallery(tmp_path_factory):
    import torch

    from engine.ingest import ModelEncoder, ingest
    from engine.lab.world.build import build_world
    from engine.retrieval.models import create, save

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
    assert reopened.query_panel.text() == STEPS[-1]  # the last description is back in the panel
    assert "Case: Red jacket, platform 2" in reopened.case_label.text()
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


def test_a_folder_of_person_crops_is_ingested_one_item_per_image(qtbot, tmp_path, tiny_gallery):
    import shutil

    import cv2
    import numpy as np

    gallery_dir, models = tiny_gallery
    copy = shutil.copytree(gallery_dir, tmp_path / "gallery")
    crops = tmp_path / "crops"
    crops.mkdir()
    for index, colour in enumerate(((20, 20, 200), (20, 200, 20), (200, 20, 20))):
        cv2.imwrite(str(crops / f"person{index}.png"), np.full((96, 40, 3), colour, np.uint8))
    state = AppState()
    assert state.open_store(tmp_path / "cases.db", actor="tester")
    window = MainWindow(state, models)
    qtbot.addWidget(window)
    with qtbot.waitSignal(state.gallery_changed, timeout=WAIT):
        window.open_gallery(copy)
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    before = len(state.gallery)
    assert window.ingest_crops(crops) is not None
    qtbot.waitUntil(lambda: not window.busy and not state.busy, timeout=WAIT)
    qtbot.waitUntil(lambda: len(state.gallery) == before + 3, timeout=WAIT)
    added = [state.gallery.item(row) for row in range(before, before + 3)]
    assert {item.box for item in added} == {(0.0, 0.0, 40.0, 96.0)} and {item.camera for item in added} == {"crops"}
    window.close()


# ------------------------------------------------------------------------------------------ laptop screens


def _inside_a_scroll_area(widget: QWidget, window: QWidget) -> bool:
    parent = widget.parentWidget()
    while parent is not None and parent is not window:
        if isinstance(parent, QAbstractScrollArea):
            return True
        parent = parent.parentWidget()
    return False


def clipped_widgets(window: QWidget) -> list[str]:
    """Visible widgets (outside scrolling areas) that reach past the window, or are squeezed below their
    minimum: what would be cut off on screen."""
    bounds = window.rect()
    problems = []
    for widget in window.findChildren(QWidget):
        if not widget.isVisibleTo(window) or widget.isWindow() or _inside_a_scroll_area(widget, window):
            continue
        rect = QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())
        if not bounds.contains(rect):
            problems.append(f"{type(widget).__name__} {widget.objectName()!r} at {rect} outside {bounds}")
        hint = widget.minimumSizeHint()
        if widget.layout() is not None and hint.isValid() and widget.width() + 1 < min(hint.width(), 10_000):
            problems.append(f"{type(widget).__name__} {widget.objectName()!r} {widget.width()} px wide, needs "
                            f"{hint.width()}")
    return problems


def settle(qtbot, window):
    QApplication.processEvents()
    qtbot.wait(20)


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
def test_the_window_fits_a_laptop_screen_and_its_minimum_never_grows(qtbot, window, size):
    width, height = size
    assert window.minimumSize().width() <= MINIMUM_SIZE[0] and window.minimumSize().height() <= MINIMUM_SIZE[1]
    window.resize(width - 16, height - 40)  # the screen less a window frame and a task bar
    window.show()
    qtbot.waitExposed(window)
    settle(qtbot, window)
    minimum, hint = window.minimumSize(), window.minimumSizeHint()
    assert hint.width() <= MINIMUM_SIZE[0] and hint.height() <= MINIMUM_SIZE[1]
    assert clipped_widgets(window) == []
    state = window.state
    window.new_case("Laptop")
    for text in STEPS:
        run_step(qtbot, window, text)
        settle(qtbot, window)
        assert (window.minimumSize(), window.minimumSizeHint().width() <= MINIMUM_SIZE[0]) == (minimum, True)
        assert clipped_widgets(window) == []
    kept = state.step_state(state.head_step_id).kept_ids
    window.results.select_item(kept[0])
    window.results.grid.setFocus()
    qtbot.keyClick(window.results.grid, Qt.Key.Key_C)
    window.results.select_item(kept[1])
    qtbot.keyClick(window.results.grid, Qt.Key.Key_R)
    assert state.marks == {kept[0]: "confirmed", kept[1]: "rejected"}
    window.add_note("seen at the gate")
    window.query_panel.set_modalities(sketch=True, ir=True)
    window.query_panel.set_text("a woman in a red jacket and blue jeans with a black backpack, white sneakers, "
                                "a grey cap, long blonde hair, a silver watch and a brown belt")  # many chips
    settle(qtbot, window)
    assert window.minimumSize() == minimum and window.minimumSizeHint().width() <= MINIMUM_SIZE[0]
    assert clipped_widgets(window) == []
    for widget in (window.query_panel.search_button, window.query_panel.keep, window.query_panel.level_box,
                   window.detail.clear_button, window.distribution.plot):
        assert widget.isVisibleTo(window), widget
        top_left = widget.mapTo(window, QPoint(0, 0))
        assert window.rect().contains(QRect(top_left, widget.size())), widget
    assert window.distribution.plot.height() >= 150


def test_the_window_opens_inside_the_screen_and_remembers_its_splitters(qtbot, tmp_path, tiny_gallery):
    settings = QSettings(str(tmp_path / "window.ini"), QSettings.Format.IniFormat)
    state = AppState()
    assert state.open_store(tmp_path / "cases.db")
    window = MainWindow(state, tiny_gallery[1], settings=settings)
    qtbot.addWidget(window)
    free = window.screen().availableGeometry()
    assert window.width() <= free.width() and window.height() <= free.height()
    window.columns.setSizes([300, 200, 300])
    sizes = window.columns.sizes()
    window.new_case("Remembered")
    window.close()
    assert int(settings.value("case/last")) == state.case_id
    again = MainWindow(AppState(), None, settings=settings)
    qtbot.addWidget(again)
    assert again.columns.sizes() == sizes
    again.close()


# ------------------------------------------------------------------------------------------ cut rules


def drag_cut(window, value):
    """What dragging the cut line does: live moves, then the release."""
    line = window.distribution.cut_line
    line.setValue(value)
    line.sigPositionChangeFinished.emit(line)


def timeline_counts(window, step_id):
    return next(row.counts for row in window.timeline.rows() if row.step_id == step_id)


def test_a_dragged_cut_is_a_preview_and_never_carries_to_the_next_step(qtbot, window):
    state, panel = window.state, window.query_panel
    window.new_case("Cut preview")
    first = run_step(qtbot, window, STEPS[0])
    scores = sorted(state.step_result(first).scores, reverse=True)
    drag_cut(window, float(scores[2]))
    header = window.results.count_label.text()
    step = state.step_state(first)
    # header and timeline agree on what the step kept; the preview is named apart
    assert f"kept {step.candidates_after} of {step.candidates_before} candidates" in header and "would keep 3" in header
    assert timeline_counts(window, first) == f"{step.candidates_before} → {step.candidates_after}"
    assert panel.keep_rule() == KeepRule("rho", 0.5)  # the query panel's rule is untouched
    assert window.distribution.apply_button.isEnabled()
    second = run_step(qtbot, window, STEPS[1])
    assert state.step_state(second).keep_rule == "rho"
    assert state.step_state(second).candidates_after == math.ceil(0.5 * step.candidates_after)
    assert "would keep" not in window.results.count_label.text()


def test_apply_cut_reruns_that_step_only(qtbot, window):
    state = window.state
    window.new_case("Cut applied")
    first = run_step(qtbot, window, STEPS[0])
    cut = float(sorted(state.step_result(first).scores, reverse=True)[4])
    drag_cut(window, cut)
    with qtbot.waitSignal(state.step_recorded, timeout=WAIT) as blocker:
        window.distribution.apply_button.click()
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    redone = state.step_state(blocker.args[0])
    assert (redone.keep_rule, redone.keep_value, redone.candidates_after) == ("threshold", pytest.approx(cut), 5)
    assert redone.query_text == STEPS[0] and redone.parent_id is None
    assert state.step_state(first).undone and state.head_step_id == redone.id
    labels = {row.step_id: row.label for row in window.timeline.rows()}
    assert labels[first] != labels[redone.id] and len(set(labels.values())) == len(labels)
    after = run_step(qtbot, window, STEPS[1])
    assert state.step_state(after).keep_rule == "rho" and state.step_state(after).candidates_after == 3


def test_a_cut_above_a_confirmed_item_asks_and_keeps_it(qtbot, window):
    state = window.state
    window.new_case("Confirmed below the cut")
    first = run_step(qtbot, window, STEPS[0])
    ranked = state.step_result(first).top(12)
    low_item, low_score = ranked[-1]
    assert state.mark(low_item, "confirmed")
    cut = ranked[1][1]
    asked = []
    window.ask_confirmed_cut = lambda below, rule: asked.append((below, rule)) or "cancel"
    drag_cut(window, cut)
    before = len(state.case.steps)
    assert window.apply_cut(cut) is None
    assert asked == [([(low_item, pytest.approx(low_score))], KeepRule("threshold", cut))]
    assert len(state.case.steps) == before and not window.distribution.reset_button.isEnabled()
    window.ask_confirmed_cut = lambda below, rule: "keep"
    with qtbot.waitSignal(state.step_recorded, timeout=WAIT) as blocker:
        assert window.apply_cut(cut) is not None
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    kept = state.step_state(blocker.args[0]).kept_ids
    assert low_item in kept and state.marks == {low_item: "confirmed"}
    assert len(kept) == 3  # the two at or above the cut, and the confirmed one


def test_the_step_timeline_labels_branches_uniquely_and_branch_here_says_so(qtbot, window):
    state, timeline = window.state, window.timeline
    window.new_case("Branches")
    first, second, third = (run_step(qtbot, window, text) for text in STEPS)
    order = [row.step_id for row in timeline.rows()]
    assert timeline.next_label.text() == "Next step continues from step 3"
    assert state.undo_step()
    assert [row.step_id for row in timeline.rows()] == order  # undo moves no line
    assert timeline.next_label.text() == "Next step continues from step 2"
    timeline.set_selected(first)
    timeline.branch_action.trigger()
    assert timeline.next_label.text() == "Next step continues from step 1 as a new branch"
    assert "branch" in window.statusBar().currentMessage().lower()
    fourth = run_step(qtbot, window, STEPS[2])
    rows = {row.step_id: row for row in timeline.rows()}
    assert [rows[i].title for i in (first, second, third, fourth)] == ["Step 1", "Step 2", "Step 3", "Step 2a"]
    assert rows[fourth].branch_of == "1" and window.distribution.title.text().startswith("Step 2a ")


def export(qtbot, window, path, blur_faces):
    """Export through the window's job and wait for it: the ``ReportResult``, or None when it failed."""
    handle = window.export_report(path, blur_faces=blur_faces)
    assert handle is not None and window.state.busy  # a background job, not a blocked window
    results = []
    handle.result.connect(results.append)
    with qtbot.waitSignal(handle.finished, timeout=WAIT):
        pass
    assert not window.state.busy
    return results[0] if results else None


def test_export_report_from_the_case_menu(qtbot, window, tmp_path):
    window.new_case("Exported")
    run_step(qtbot, window, STEPS[0])
    assert window.export_action.shortcut().toString() == "Ctrl+E"
    result = export(qtbot, window, tmp_path / "case.html", blur_faces=True)
    assert result is not None and (tmp_path / "case.html").is_file() and result.manifest_path.is_file()
    assert "Report written" in window.banner.text()
    assert export(qtbot, window, tmp_path / "missing" / "case.pdf", blur_faces=False) is None
    assert "missing" in window.banner.text() and "Traceback" not in window.banner.text()
    assert window.banner.text().startswith("The report could not be written: ")


def test_one_set_of_shortcuts_in_menus_buttons_and_the_sheet(qtbot, window):
    rows = dict(window.shortcut_rows())
    assert rows["F"].startswith("Find similar") and window.detail.similar_button.text().endswith("(F)")
    assert "Ctrl+R" not in rows and rows["Ctrl+2"] == "Focus results"  # R rejects, nothing else
    assert rows["Ctrl+Return or Ctrl+Enter"] == "Run search step" and "Enter" in rows and "Shift+Enter" in rows
    assert "Ctrl+E" in rows and "F1" in rows
    sheet = window.show_shortcuts()
    assert sheet.rows() == window.shortcut_rows()
    sheet.close()


def test_notes_show_in_the_notes_panel(qtbot, window):
    window.new_case("Notes")
    window.add_note("first sighting at gate 4")
    window.add_note("second note")
    assert window.notes.texts() == ["first sighting at gate 4", "second note"]
    assert "2 notes" in window.case_label.text()


def first_step_in_an_active_window(qtbot, window, case: str) -> tuple[str, ...]:
    """A new case, its first step searched, the window shown and active; the step's kept ids."""
    window.new_case(case)
    first = run_step(qtbot, window, STEPS[0])
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=2000)
    return window.state.step_state(first).kept_ids


def test_f_finds_similar_from_the_grid_and_from_the_detail_pane(qtbot, window):
    state = window.state
    kept = first_step_in_an_active_window(qtbot, window, "Find similar")
    window.results.select_item(kept[1])
    window.results.grid.setFocus()
    with qtbot.waitSignal(state.step_recorded, timeout=WAIT) as blocker:
        qtbot.keyClick(window.results.grid, Qt.Key.Key_F)
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    assert state.step_state(blocker.args[0]).example_item == kept[1]
    item = state.step_state(blocker.args[0]).kept_ids[2]
    window.results.select_item(item)
    qtbot.waitUntil(lambda: window.detail.item_id() == item, timeout=WAIT)
    window.detail.confirm_button.setFocus()
    with qtbot.waitSignal(state.step_recorded, timeout=WAIT) as blocker:
        qtbot.keyClick(window.detail.confirm_button, Qt.Key.Key_F)
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    assert state.step_state(blocker.args[0]).example_item == item


def test_shift_f_asks_for_find_similar_with_clothes_that_may_have_changed(qtbot, window, monkeypatch):
    state = window.state
    kept = first_step_in_an_active_window(qtbot, window, "Other clothes")
    asked = []
    monkeypatch.setattr(state, "find_similar", lambda item, *a, **k: asked.append((item, k)))
    window.results.select_item(kept[1])
    window.results.grid.setFocus()
    qtbot.keyClick(window.results.grid, Qt.Key.Key_F, Qt.KeyboardModifier.ShiftModifier)
    window.detail.other_clothes_button.click()
    window.results.context_menu().actions()[-2].trigger()  # "Find similar, clothes may have changed"
    assert asked == [(kept[1], {"outfit_changed": True})] * 3
    assert ("Shift+F", "Find similar, clothes may have changed") in window.shortcut_rows()


def test_a_new_step_opens_at_rank_one_and_is_named_alike_everywhere(qtbot, window):
    state = window.state
    window.new_case("Rank one")
    first = run_step(qtbot, window, STEPS[0])
    window.show()
    qtbot.waitExposed(window)
    last = window.results.model.visible_ids()[-1]
    assert window.results.select_item(last)
    second = run_step(qtbot, window, STEPS[1])
    label = window.step_label(second)
    assert label == next(row.label for row in window.timeline.rows() if row.step_id == second)
    assert window.statusBar().currentMessage().startswith(f"Step {label}: ")
    assert window.distribution.title.text().startswith(f"Step {label} · ")
    top = window.results.model.visible_ids()[0]
    assert window.results.current_id() == top and window.results.selected_ids() == [top]
    assert window.results.model.index(0).data(window.results.model.RankRole) == 1
    assert window.results.grid.verticalScrollBar().value() == 0
    assert window.results.select_item(window.results.model.visible_ids()[-1])
    state.select_step(second)  # the same step again keeps where the analyst was
    assert window.results.current_id() == window.results.model.visible_ids()[-1]
    assert "2 steps recorded" in window.case_label.text()
    assert state.undo_step()
    assert "2 steps recorded (1 undone)" in window.case_label.text()
    assert first in state.case.active_path


def test_a_note_is_edited_from_the_notes_panel(qtbot, window, monkeypatch):
    window.new_case("Edit a note")
    note_id = window.add_note("first sighting at gate 4")
    window.side_tabs.setCurrentWidget(window.notes)
    assert window.notes.select_note(note_id)
    monkeypatch.setattr("app.window.case_actions.ask_note",
                        lambda _parent, title, _prompt, text: f"{text}, then gate 5")
    window.notes.edit_button.click()
    assert window.notes.texts() == ["first sighting at gate 4, then gate 5"]
    assert "(edited " in window.notes.heads()[0]
    assert window.edit_note(note_id, "  ") is False and "needs some text" in window.banner.text()


def test_a_banner_about_the_case_before_goes_with_it(qtbot, window):
    window.new_case("First")
    window.show_error("Case 'First' is closed: reopen it to search")
    assert window.banner.text()
    window.new_case("Second")
    assert window.banner.text() == ""


def test_the_cut_question_names_items_by_camera_and_time(qtbot, window):
    window.new_case("Cut names")
    item = window.state.step_state(run_step(qtbot, window, STEPS[0])).kept_ids[0]
    box = window.confirmed_cut_box([(item, 0.41)], KeepRule("threshold", 0.9))
    assert item not in box.text() and window.item_label(item) in box.text()
    assert item in box.detailedText() and item in box.toolTip()


def test_large_unscored_and_stored_sets_are_made_in_a_worker_and_then_shown(qtbot, window, monkeypatch):
    """Past ``SYNC_ROWS`` rows the whole gallery (unscored) and a stored step's kept items (its result not re-run
    yet) are made off the UI thread; the grid is empty meanwhile, then shows them in their order."""
    from app.window import step_display

    state = window.state
    assert window.new_case("Large sets") is not None
    run_step(qtbot, window, STEPS[0])
    step_id = state.head_step_id
    stored = state.step_state(step_id).kept_ids
    monkeypatch.setattr(step_display, "SYNC_ROWS", 2)
    model = window.results.model

    window.step_display.show_step(None)
    assert window.step_display.preparing and model.rowCount() == 0
    qtbot.waitUntil(lambda: not window.step_display.preparing, timeout=WAIT)
    assert model.rowCount() == len(state.gallery) == 24

    monkeypatch.setattr(state, "step_result", lambda _step_id: None)  # as when a reopened case is not re-run yet
    window.step_display.show_step(step_id)
    assert window.step_display.preparing and model.rowCount() == 0
    qtbot.waitUntil(lambda: not window.step_display.preparing, timeout=WAIT)
    assert [model.item_id(row) for row in range(model.rowCount())] == list(stored) and len(stored) > 2
    assert not window.distribution.is_empty()
