"""Query panel: typing gives chips and a level, suggestions add what they say, modalities/keep/level build the
spec, Ctrl+Enter and the button ask for a search, bad input becomes a message."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from app.state import KeepRule, QuerySpec, append_sentence, suggestion_sentence
from app.views.query_panel import QueryPanel
from engine.kernel.ontology import ONTOLOGY
from engine.retrieval.search import QueryInputError
from engine.retrieval.text.parser import parse

BASES = [
    "",
    "a tall man",
    "young woman in a red jacket and jeans",
    "a man in shorts with a cap and a backpack, wearing a dress",
    "She has long blonde hair and wears a grey hoodie, black leggings and white sneakers. "
    "She carries a suitcase",
]


@pytest.fixture
def panel(qtbot):
    panel = QueryPanel()
    qtbot.addWidget(panel)
    panel.resize(380, 700)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def chip_values(panel):
    return {chip.key: chip.value for chip in panel.chip_widgets()}


def test_typing_gives_chips_and_level(qtbot, panel):
    parsed = []
    panel.parsed.connect(parsed.append)
    qtbot.keyClicks(panel.text_edit, "a tall man in a red jacket")
    assert chip_values(panel) == {"gender": "male", "height": "tall", "top_type": "jacket",
                                  "top_color": "red"}
    assert panel.meter.count == 4 and panel.meter.level == "UC"
    assert panel.level_box.itemText(0) == "Auto (UC)"
    assert "4 attributes" in panel.level_summary.text()
    assert parsed[-1].count == 4 and len(parsed) == len("a tall man in a red jacket")
    chip = next(c for c in panel.chip_widgets() if c.key == "top_color")
    assert chip.plain_text == "top colour: red"
    assert "“red”" in chip.toolTip()
    qtbot.keyClicks(panel.text_edit, ", blue jeans, white sneakers, a black backpack and a cap, young")
    assert panel.meter.count == 11 and panel.meter.level == "M"
    assert panel.level_box.itemText(0) == "Auto (M)"


def test_clicking_a_chip_selects_its_words(qtbot, panel):
    panel.set_text("a woman in a green coat")
    chip = next(c for c in panel.chip_widgets() if c.key == "top_type")
    qtbot.mouseClick(chip, Qt.MouseButton.LeftButton)
    assert panel.text_edit.textCursor().selectedText() == "coat"


def test_suggestions_cover_every_missing_attribute_and_value():
    """Each offered sentence adds exactly its attribute and changes nothing already stated."""
    checked = 0
    for base in BASES:
        result = parse(base)
        for key in result.missing:
            for value in ONTOLOGY.attributes[key]:
                after = parse(append_sentence(base, suggestion_sentence(key, value, result.attributes)))
                expected = dict(result.attributes, **{key: value})
                if value == "none":  # "no hat"/"nothing carried" also rules out the item's colour
                    expected.pop({"hat_type": "hat_color", "carrying_type": "carrying_color"}[key], None)
                assert after.attributes == expected, (base, key, value)
                checked += 1
    assert checked > 300


def test_clicking_a_suggestion_adds_the_attribute(qtbot, panel):
    qtbot.keyClicks(panel.text_edit, "a young woman")
    buttons = {b.property("key"): b for b in panel.suggestion_buttons() if b.property("key")}
    assert list(buttons)[:3] == ["height", "physique", "skin_color"]
    assert len(buttons) == 5 and panel.suggestion_buttons()[-1].text().endswith("more…")
    action = next(a for a in buttons["height"].menu().actions() if a.data() == ("height", "tall"))
    action.trigger()
    assert panel.text() == "a young woman. The person is tall."
    assert chip_values(panel)["height"] == "tall"
    assert panel.text_edit.hasFocus() or QApplication.focusWidget() is None
    assert "height" not in {b.property("key") for b in panel.suggestion_buttons()}
    more = panel.suggestion_buttons()[-1].menu()
    shoes = next(m for m in (a.menu() for a in more.actions()) if m is not None and m.title() == "shoes")
    next(a for a in shoes.actions() if a.data() == ("shoe_type", "boots")).trigger()
    assert chip_values(panel)["shoe_type"] == "boots"


def test_spec_follows_level_keep_and_modalities(qtbot, panel):
    panel.set_text("a man in a grey coat")
    spec = panel.current_spec()
    assert spec == QuerySpec(text="a man in a grey coat", level=None, keep=KeepRule("rho", 0.5))
    panel.set_level_override("F")
    panel.keep.mode.setCurrentIndex(panel.keep.mode.findData("k"))
    panel.keep.k.setValue(20)
    spec = panel.current_spec()
    assert spec.level == "F" and spec.keep == KeepRule("k", 20)
    panel.set_threshold(0.3114)
    assert panel.keep_rule() == KeepRule("threshold", 0.311)
    panel.keep.rho.setValue(0.01)
    assert panel.keep.rho.value() == 0.05  # ρ is clamped to 0.05–1.0

    panel.set_modalities(sketch=True)
    assert panel.sketch_section.isVisible()
    assert panel.current_spec().sketch is None  # an empty canvas is not a query
    panel.sketch.canvas.stroke([(64, 20), (64, 200)])
    spec = panel.current_spec()
    assert spec.kind == "text+sketch" and spec.sketch.shape == (512, 256, 3)
    panel.set_modalities(text=False)
    assert not panel.text_section.isVisible()
    assert panel.current_spec().kind == "sketch"


def test_ctrl_enter_and_the_button_request_a_search(qtbot, panel):
    panel.set_text("a woman with a red umbrella")
    panel.activateWindow()
    qtbot.waitUntil(panel.isActiveWindow, timeout=2000)
    panel.text_edit.setFocus()
    with qtbot.waitSignal(panel.search_requested, timeout=1000) as blocker:
        qtbot.keyClick(panel.text_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert blocker.args[0].text == "a woman with a red umbrella"
    assert panel.text() == "a woman with a red umbrella"  # Ctrl+Enter does not insert a line break
    with qtbot.waitSignal(panel.search_requested, timeout=1000):
        qtbot.mouseClick(panel.search_button, Qt.MouseButton.LeftButton)

    requests, cancels = [], []
    panel.search_requested.connect(requests.append)
    panel.cancel_requested.connect(lambda: cancels.append(1))
    panel.set_busy(True)
    assert panel.search_button.text() == "Cancel search"
    qtbot.mouseClick(panel.search_button, Qt.MouseButton.LeftButton)
    panel.search_action.trigger()
    assert cancels == [1] and requests == []
    panel.set_busy(False)
    panel.set_search_available(False, "Open a gallery to search")
    assert panel.request_search() is None
    assert panel.message.text() == "Open a gallery to search"
    assert not panel.search_button.isEnabled()


def test_an_empty_query_says_what_is_missing(qtbot, panel):
    with qtbot.waitSignal(panel.error, timeout=1000) as blocker:
        assert panel.request_search() is None
    assert blocker.args[0] == "The query is empty: type a description"
    assert panel.message.isVisible()
    qtbot.keyClicks(panel.text_edit, "a")
    assert not panel.message.isVisible()
    panel.set_text("")
    panel.set_modalities(text=False, ir=True)
    assert panel.request_search() is None
    assert panel.message.text() == "The query is empty: load an IR image"


def _mime(path):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    return mime


def test_dropping_an_ir_image(qtbot, panel, tmp_path):
    image = np.full((96, 48, 3), 90, dtype=np.uint8)
    cv2.imwrite(str(tmp_path / "night.png"), image)
    panel.set_modalities(ir=True)
    zone = panel.ir_zone
    mime = _mime(tmp_path / "night.png")
    enter = QDragEnterEvent(QPoint(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(zone, enter)
    assert enter.isAccepted()
    with qtbot.waitSignal(zone.image_changed, timeout=1000):
        QApplication.sendEvent(zone, QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime,
                                                Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier))
    assert zone.path == tmp_path / "night.png" and zone.array.shape == (96, 48, 3)
    assert "night.png" in zone.caption.text() and zone.clear_button.isEnabled()
    panel.set_text("a man")
    spec = panel.current_spec()
    assert spec.kind == "text+ir" and spec.ir == tmp_path / "night.png"
    zone.clear_button.click()
    assert zone.path is None and panel.current_spec().kind == "text"


def test_an_unreadable_ir_file_becomes_a_message(qtbot, panel, tmp_path):
    broken = tmp_path / "scan.jpg"
    broken.write_bytes(b"\x00\x01 not an image")
    with qtbot.waitSignal(panel.error, timeout=1000) as blocker:
        assert not panel.set_ir_image(broken)
    assert blocker.args[0].startswith(f"IR image file {broken} is not a readable image: not a decodable image")
    assert panel.ir_error.text() == blocker.args[0] and not panel.ir_error.isHidden()  # inline, under the zone
    assert panel.ir_zone.path is None


def test_a_bad_ir_file_replaces_the_previous_image_and_a_good_one_clears_the_error(qtbot, panel, tmp_path):
    cv2.imwrite(str(tmp_path / "night.png"), np.full((96, 48, 3), 90, dtype=np.uint8))
    broken = tmp_path / "scan.jpg"
    broken.write_bytes(b"not an image")
    assert panel.set_ir_image(tmp_path / "night.png")
    assert not panel.set_ir_image(broken)
    assert panel.ir_zone.path is None and "scan.jpg" in panel.ir_error.text()  # the old image is not kept
    assert panel.set_ir_image(tmp_path / "night.png") and panel.ir_error.isHidden()


def test_enter_runs_the_step_and_shift_enter_starts_a_new_line(qtbot, panel):
    panel.set_text("a man in a red jacket")
    with qtbot.waitSignal(panel.search_requested, timeout=1000) as blocker:
        qtbot.keyClick(panel.text_edit, Qt.Key.Key_Return)
    assert blocker.args[0].text == "a man in a red jacket" and "\n" not in panel.text()
    seen = []
    panel.search_requested.connect(seen.append)
    qtbot.keyClick(panel.text_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(panel.text_edit, "black boots")
    assert panel.text() == "a man in a red jacket\nblack boots" and seen == []
    qtbot.keyClick(panel.text_edit, Qt.Key.Key_Enter, Qt.KeyboardModifier.KeypadModifier)
    assert len(seen) == 1 and seen[0].text == "a man in a red jacket\nblack boots"


def test_a_query_with_no_recognised_attribute_warns_before_running(qtbot, panel):
    seen = []
    panel.search_requested.connect(seen.append)
    panel.set_text("qwerty zzz")
    assert panel.request_search() is None and seen == []
    assert not panel.warning_box.isHidden() and "No attribute is recognised" in panel.warning.text()
    assert "qwerty zzz" in panel.warning.text()
    panel.run_anyway_button.click()
    assert [spec.text for spec in seen] == ["qwerty zzz"] and panel.warning_box.isHidden()
    panel.set_text("qwerty zzz again")  # a new text is checked again; Enter twice runs it
    qtbot.keyClick(panel.text_edit, Qt.Key.Key_Return)
    assert len(seen) == 1 and not panel.warning_box.isHidden()
    qtbot.keyClick(panel.text_edit, Qt.Key.Key_Return)
    assert [spec.text for spec in seen] == ["qwerty zzz", "qwerty zzz again"]
    panel.set_text("a man in a red jacket")
    assert panel.request_search() is not None and panel.warning_box.isHidden()


def test_a_score_threshold_from_another_kind_of_step_warns_before_running(qtbot, panel):
    seen = []
    panel.search_requested.connect(seen.append)
    panel.set_text("a man in a red jacket")
    panel.set_threshold(0.8)
    panel.set_previous_view("reid:AD-LT")  # the last step was find-similar: its scores are on another scale
    assert panel.request_search() is None and seen == []
    assert "Keep score ≥ 0.8 was read off a find-similar step" in panel.warning.text()
    panel.run_anyway_button.click()
    assert len(seen) == 1
    panel.set_previous_view("text:M")  # a text step after a text step: the same scale, no warning
    panel.set_text("a man in a red jacket and blue jeans")
    assert panel.request_search() is not None and panel.warning_box.isHidden()
    panel.set_previous_view("rgb")
    panel.set_keep(KeepRule("k", 10))  # counts and fractions mean the same on any scale
    assert panel.request_search() is not None


def test_a_description_longer_than_the_models_context_warns(qtbot, panel):
    panel.set_token_counter(lambda text: (len(text.split()) + 2, 16))
    panel.set_text("a man in a red jacket " * 3)
    assert panel.request_search() is None
    assert "20 tokens long" in panel.warning.text() and "first 16" in panel.warning.text()
    panel.set_text("a man in a red jacket")
    assert panel.request_search() is not None


def test_the_level_follows_the_queries_own_modality(panel):
    panel.set_text("a man in a red jacket, blue jeans and a cap")
    assert panel.level_box.itemText(0).startswith("Auto (") and panel.level_box.isEnabled()
    panel.set_modalities(text=False, sketch=True)
    assert panel.level_box.itemText(0) == "None (image query)" and not panel.level_box.isEnabled()
    panel.set_modalities(text=True)
    assert panel.level_box.itemText(0).startswith("Auto (")


def test_keep_rules_and_specs_check_their_values():
    assert KeepRule("k", 20.0).value == 20 and KeepRule("k", 20).describe() == "keep top 20"
    assert KeepRule("rho", 0.25).describe() == "keep 25 %"
    assert KeepRule("threshold", -0.1).describe() == "score ≥ -0.100"
    bad = (("rho", 0, r"\(0, 1\]"), ("k", 2.5, "whole number"), ("threshold", float("nan"), "finite"),
           ("top", 1, "keep rule"))
    for kind, value, words in bad:
        with pytest.raises(QueryInputError, match=words):
            KeepRule(kind, value)
    with pytest.raises(QueryInputError, match="level"):
        QuerySpec(text="a man", level="XL")
    spec = QuerySpec(text="  a man  ", level="C", keep=KeepRule("k", 7))
    query = spec.to_step_query(cameras=frozenset({"c1"}))
    assert (query.text, query.level, query.k, query.rho, query.cameras) == ("a man", "C", 7, None, {"c1"})
