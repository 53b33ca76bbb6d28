"""What the analyst reads, said one way everywhere: one step label for the timeline, the status bar and the
plot; items named by camera and time (ids in tooltips); step counts labelled the same in the case list and
the case line; the note editor (wrapping, Ctrl+Enter saves, Esc cancels) and editing a note from the notes
panel; the ingest dialog's filter taken from the engine's suffix lists; the GT legend saying whose identity
it is; the search button naming the job it cancels; a banner that can be cleared."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPlainTextEdit
from test_app_timeline import NOW, branched_case, make_case, make_step

from app.state.item_label import item_label, short_id
from app.state.timeline_rows import step_label, step_labels, timeline_rows
from app.store import NoteState
from app.views.case_list import COLUMNS, CaseListDialog, steps_recorded
from app.views.file_filters import footage_filter
from app.views.notes_panel import NoteEditor, NotesPanel
from app.views.query_panel import QueryPanel
from app.views.results import GT_LEGEND, ResultsView, ground_truth_legend
from app.window.banner import Banner
from engine.index import Gallery
from engine.ingest.sources import VIDEO_EXTENSIONS
from engine.kernel.images import IMAGE_EXTENSIONS
from engine.kernel.timefmt import screen_time

LONG_ID = "cam2-000000000000000000000000f311"  # 33 characters, as ingest makes them


@pytest.fixture(scope="module")
def gallery(tmp_path_factory):
    g = Gallery.create(tmp_path_factory.mktemp("labels") / "g", {"rgb": 4}, "test")
    items = [{"id": LONG_ID, "source": "s.mp4", "time": 83.4, "camera": "cam2", "identity": "p1"},
             {"id": "x" * 33, "source": "s.mp4", "time": None, "camera": None, "identity": "p2"}]
    g.add(items, {"rgb": np.eye(2, 4, dtype=np.float32)})
    return g


def test_items_are_named_by_camera_and_time_and_ids_are_shortened(gallery):
    assert len(LONG_ID) == 33
    assert item_label(gallery, LONG_ID) == f"camera cam2 · {screen_time(83.4)}"
    assert item_label(gallery, "x" * 33) == "…xxxxxxxx"  # neither camera nor time: a short id
    assert item_label(None, LONG_ID) == short_id(LONG_ID) == "…0000f311" and short_id("i7") == "i7"


def test_a_find_similar_step_is_named_by_its_example_items_label_with_the_id_in_the_row():
    rows = timeline_rows(make_case([make_step(1, None, 0, kind="example", example=LONG_ID, level=None)], head=1),
                         item_label=lambda item: f"camera cam2 · {item[-4:]}")
    assert rows[1].query.startswith("Similar to camera cam2 · f311") and rows[1].example_item == LONG_ID
    assert LONG_ID not in timeline_rows(make_case([make_step(1, None, 0, kind="example", example=LONG_ID,
                                                             level=None)], head=1))[1].query


def test_one_step_label_for_every_place_that_names_a_step():
    case = branched_case()
    labels = step_labels(case)
    assert {row.step_id: row.label for row in timeline_rows(case) if row.step_id is not None} == labels
    assert [step_label(case, step_id) for step_id in (1, 2, 4, 5)] == ["1", "2", "2a", "3a"]
    assert step_label(case, None) == "0" and step_label(case, 99) == "99"


def test_the_case_list_and_the_case_line_count_the_same_steps(qtbot):
    case = make_case([make_step(1, None, 0, text="a"), make_step(2, 1, 1, text="b", undone=True),
                      make_step(3, 1, 1, text="c")], head=3)
    dialog = CaseListDialog([case.case])
    qtbot.addWidget(dialog)
    column = COLUMNS.index("Steps recorded")
    assert dialog.model.item(0, column).data(Qt.ItemDataRole.DisplayRole) == case.case.step_count == 3
    assert steps_recorded(case.case.step_count, case.steps) == "3 steps recorded (1 undone)"
    assert steps_recorded(1) == "1 step recorded"


def test_the_note_editor_wraps_saves_with_ctrl_enter_and_cancels_with_esc(qtbot):
    editor = NoteEditor("Add note", "Note:")
    qtbot.addWidget(editor)
    editor.show()
    assert editor.editor.lineWrapMode() == QPlainTextEdit.LineWrapMode.WidgetWidth
    assert not editor.save_button.isEnabled()
    qtbot.keyClicks(editor.editor, "Seen at the north gate")
    qtbot.keyClick(editor.editor, Qt.Key.Key_Return)  # a plain Enter is a new line
    qtbot.keyClicks(editor.editor, "then the bus stop")
    with qtbot.waitSignal(editor.accepted):
        qtbot.keyClick(editor.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert editor.text() == "Seen at the north gate\nthen the bus stop"

    again = NoteEditor("Edit note", "Note:", "old text")
    qtbot.addWidget(again)
    again.show()
    assert again.editor.toPlainText() == "old text"
    with qtbot.waitSignal(again.rejected):
        qtbot.keyClick(again.editor, Qt.Key.Key_Escape)


def test_the_notes_panel_names_items_and_asks_to_edit_the_selected_note(qtbot):
    case = make_case([make_step(1, None, 0, text="a")], head=1)
    notes = (NoteState(7, "first", None, None, 1, NOW),
             NoteState(8, "about a sighting", LONG_ID, 1, None, NOW, edited_at=datetime(2026, 11, 30, tzinfo=UTC)))
    case = type(case)(case.case, case.galleries, case.steps, case.active_path, case.marks, notes, case.evidence,
                      case.audit_head)
    panel = NotesPanel()
    qtbot.addWidget(panel)
    panel.set_case(case, lambda step_id: "1", lambda item: "camera cam2 · 0:01:23.4")
    assert panel.texts() == ["first", "about a sighting"]
    assert "step 1" in panel.heads()[0]
    assert panel.heads()[1].endswith("item camera cam2 · 0:01:23.4") and "(edited " in panel.heads()[1]
    assert LONG_ID not in panel.heads()[1] and LONG_ID in panel.list.item(1).toolTip()
    assert not panel.edit_button.isEnabled()  # nothing selected yet
    assert panel.select_note(7) and panel.edit_button.isEnabled()
    with qtbot.waitSignal(panel.edit_requested) as asked:
        panel.edit_button.click()
    assert asked.args == [7] and panel.note(7).text == "first"
    with qtbot.waitSignal(panel.edit_requested) as asked:
        panel.list.itemDoubleClicked.emit(panel.list.item(1))
    assert asked.args == [8]


def test_the_ingest_dialog_shows_every_suffix_the_engine_reads():
    first = footage_filter().split(";;")[0]
    for suffix in VIDEO_EXTENSIONS | IMAGE_EXTENSIONS:
        assert f"*{suffix}" in first.split("(")[1].split()
    assert "*.gif" in first


def test_the_gt_legend_never_claims_a_chosen_identity_when_none_was(qtbot):
    assert "chosen" not in GT_LEGEND
    assert "p3, chosen under Search" in ground_truth_legend("p3", chosen=True).replace("<b>", "").replace("</b>", "")
    example = ground_truth_legend("p3", chosen=False)
    assert "no ground-truth identity was chosen" in example and "chosen under" not in example
    view = ResultsView()
    qtbot.addWidget(view)
    view.set_ground_truth("p3", chosen=False)
    assert view.legend_label.text() == example
    view.loader.shutdown()


def test_the_search_button_names_the_job_it_would_cancel(qtbot):
    panel = QueryPanel()
    qtbot.addWidget(panel)
    panel.set_busy(True, "Loading gallery")
    assert panel.search_button.text() == "Cancel loading gallery"
    panel.set_busy(True, "Searching")
    assert panel.search_button.text() == "Cancel search"
    panel.set_busy(False)
    assert panel.search_button.text() == "Search"


def test_a_banner_is_cleared(qtbot):
    banner = Banner()
    qtbot.addWidget(banner)
    banner.show_message("gallery g1 is damaged", "error")
    assert banner.text() == "gallery g1 is damaged"
    banner.clear()
    assert banner.text() == "" and banner.isHidden()
