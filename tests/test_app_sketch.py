"""Sketch canvas: strokes change the image, undo restores it, eraser empties it, save/load round trip."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from app.views.sketch_canvas import CANVAS_SIZE, SUPERSAMPLE, SketchCanvas, SketchEditor, SketchFileError

HEIGHT, WIDTH = CANVAS_SIZE.height() * SUPERSAMPLE, CANVAS_SIZE.width() * SUPERSAMPLE


@pytest.fixture
def editor(qtbot):
    editor = SketchEditor()
    qtbot.addWidget(editor)
    editor.resize(240, 440)
    editor.show()
    qtbot.waitExposed(editor)
    return editor


def test_a_new_canvas_is_white_and_shaped_like_a_person_crop(editor):
    array = editor.canvas.to_array()
    assert array.shape == (HEIGHT, WIDTH, 3) and array.dtype == np.uint8
    assert HEIGHT == 2 * WIDTH
    assert editor.canvas.is_empty()
    assert not editor.undo_button.isEnabled() and not editor.save_button.isEnabled()


def test_mouse_strokes_draw_and_undo_restores(qtbot, editor):
    canvas = editor.canvas
    target = canvas.target_rect()
    start = target.center() - QPoint(0, target.height() // 4)
    end = target.center() + QPoint(0, target.height() // 4)
    with qtbot.waitSignal(canvas.changed, timeout=2000):
        qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=start)
        for step in range(1, 11):
            qtbot.mouseMove(canvas, start + (end - start) * step / 10)
        qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=end)
    array = canvas.to_array()
    dark = array.min(axis=2) < 100
    assert dark.sum() > 100
    rows = np.flatnonzero(dark.any(axis=1))
    assert rows[0] < HEIGHT * 0.3 and rows[-1] > HEIGHT * 0.7  # a vertical line through the middle
    columns = np.flatnonzero(dark.any(axis=0))
    assert abs(columns.mean() - WIDTH / 2) < WIDTH * 0.1
    assert editor.undo_button.isEnabled() and editor.clear_button.isEnabled()
    assert canvas.hasFocus() or not editor.isActiveWindow()
    canvas.setFocus()
    qtbot.keyClick(canvas, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # Ctrl+Z undoes the stroke
    assert canvas.is_empty() and not canvas.can_undo
    canvas.stroke([(10, 10), (100, 10)])
    editor.undo_button.click()
    assert canvas.is_empty() and not canvas.can_undo


def test_eraser_width_clear_and_undo_stack(editor):
    canvas = editor.canvas
    canvas.stroke([(20, 128), (108, 128)])
    drawn = canvas.to_array()
    editor.width_box.setValue(10)
    editor.eraser_button.click()
    assert canvas.tool == "eraser" and canvas.pen_width == 10
    canvas.stroke([(10, 128), (118, 128)])
    assert canvas.is_empty()
    canvas.undo()
    assert np.array_equal(canvas.to_array(), drawn)
    editor.pen_button.click()
    canvas.stroke([(64, 20)])
    editor.clear_button.click()
    assert canvas.is_empty()
    assert canvas.undo() and not canvas.is_empty()
    assert canvas.undo() and np.array_equal(canvas.to_array(), drawn)
    with pytest.raises(ValueError, match="pen width"):
        canvas.set_pen_width(0)
    with pytest.raises(ValueError, match="tool"):
        canvas.set_tool("spray")


def test_save_and_load_round_trip(editor, tmp_path):
    canvas = editor.canvas
    canvas.stroke([(30, 40), (90, 200), (100, 60)])
    drawn = canvas.to_array()
    path = editor.save_file(tmp_path / "suspect")
    assert path == tmp_path / "suspect.png" and path.is_file()
    assert [p.name for p in tmp_path.iterdir()] == ["suspect.png"]  # no temporary file left
    on_disk = cv2.cvtColor(cv2.imread(str(path)), cv2.COLOR_BGR2RGB)
    assert np.array_equal(on_disk, drawn)
    other = SketchCanvas()
    other.load(path)
    assert np.array_equal(other.to_array(), drawn)


def test_a_loaded_photo_is_fitted_on_white(editor, tmp_path):
    wide = np.zeros((50, 200, 3), dtype=np.uint8)
    cv2.imwrite(str(tmp_path / "wide.jpg"), wide)
    assert editor.load_file(tmp_path / "wide.jpg")
    array = editor.canvas.to_array()
    assert (array[0] == 255).all() and (array[-1] == 255).all()  # letterboxed top and bottom
    assert array[HEIGHT // 2, WIDTH // 2].max() < 40
    assert editor.canvas.undo() and editor.canvas.is_empty()


def test_unreadable_files_become_messages(qtbot, editor, tmp_path):
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not a png")
    with qtbot.waitSignal(editor.error, timeout=1000) as blocker:
        assert not editor.load_file(broken)
    assert "not a readable image" in blocker.args[0] and str(broken) in blocker.args[0]
    with qtbot.waitSignal(editor.error, timeout=1000) as blocker:
        assert not editor.load_file(tmp_path / "missing.png")
    assert "does not exist" in blocker.args[0]
    with pytest.raises(SketchFileError, match="does not exist"):
        editor.canvas.save(tmp_path / "no-folder" / "x.png")
    assert editor.canvas.is_empty()
