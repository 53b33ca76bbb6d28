"""Sketch query input: a white 1:2 canvas shaped like a person crop, with pen, eraser, width, undo, clear,
load and save. ``SketchCanvas`` is the drawing surface; ``SketchEditor`` adds its tool bar.

The image is ``CANVAS_SIZE`` logical pixels (128 × 256) drawn at ``SUPERSAMPLE``× for smooth strokes; the
engine gets it as RGB uint8 ``[H, W, 3]`` (``to_array``) and resizes it like any query image.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
from PySide6.QtCore import QEvent, QPoint, QPointF, QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QImage,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
)
from PySide6.QtWidgets import (
    QButtonGroup,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.state.image_files import QueryInputError, load_query_image
from app.workers import describe_error

CANVAS_SIZE = QSize(128, 256)
SUPERSAMPLE = 2
UNDO_LIMIT = 50
DEFAULT_WIDTH = 3
WIDTH_RANGE = (1, 24)
INK = QColor(20, 20, 24)
PAPER = QColor(255, 255, 255)
IMAGE_FILTER = "Images (*.png *.jpg *.jpeg *.bmp)"


class SketchFileError(ValueError):
    """A sketch file cannot be read or written."""


class SketchCanvas(QWidget):
    """Draw with the left mouse button. ``changed`` fires after every stroke, undo, clear and load."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._image = self._blank()
        self._undo: list[QImage] = []
        self._tool = "pen"
        self._width = DEFAULT_WIDTH
        self._last: QPointF | None = None
        self.setCursor(Qt.CursorShape.CrossCursor)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(140, 280)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, False)

    # ------------------------------------------------------------------------------------------ state

    @staticmethod
    def _blank() -> QImage:
        image = QImage(CANVAS_SIZE * SUPERSAMPLE, QImage.Format.Format_RGB32)
        image.fill(PAPER)
        return image

    @property
    def tool(self) -> str:
        return self._tool

    def set_tool(self, tool: str) -> None:
        """"pen" or "eraser"."""
        if tool not in ("pen", "eraser"):
            raise ValueError(f"sketch tool must be 'pen' or 'eraser', got {tool!r}")
        self._tool = tool

    @property
    def pen_width(self) -> int:
        return self._width

    def set_pen_width(self, width: int) -> None:
        """Stroke width in logical canvas pixels (1–24)."""
        if not WIDTH_RANGE[0] <= int(width) <= WIDTH_RANGE[1]:
            raise ValueError(f"pen width must lie in {WIDTH_RANGE}, got {width}")
        self._width = int(width)

    @property
    def can_undo(self) -> bool:
        return bool(self._undo)

    def image(self) -> QImage:
        """A copy of the drawing."""
        return self._image.copy()

    def to_array(self) -> np.ndarray:
        """The drawing as RGB uint8 ``[H, W, 3]`` (H = 2·W)."""
        rgb = self._image.convertToFormat(QImage.Format.Format_RGB888)
        height, width, stride = rgb.height(), rgb.width(), rgb.bytesPerLine()
        rows = np.frombuffer(rgb.constBits(), dtype=np.uint8, count=stride * height).reshape(height, stride)
        return rows[:, : width * 3].reshape(height, width, 3).copy()

    def is_empty(self) -> bool:
        """True when every pixel is white (nothing drawn, or everything erased)."""
        return bool((self.to_array() == 255).all())

    # ------------------------------------------------------------------------------------------ edits

    def _push_undo(self) -> None:
        self._undo.append(self._image.copy())
        del self._undo[:-UNDO_LIMIT]

    def undo(self) -> bool:
        """Restore the drawing before the last stroke, clear or load. False when there is nothing to undo."""
        if not self._undo:
            return False
        self._image = self._undo.pop()
        self.update()
        self.changed.emit()
        return True

    def clear(self) -> None:
        """Blank the canvas (undoable)."""
        if self.is_empty():
            return
        self._push_undo()
        self._image = self._blank()
        self.update()
        self.changed.emit()

    def set_image(self, image: QImage) -> None:
        """Replace the drawing with ``image`` fitted inside the canvas on white (undoable)."""
        if image.isNull():
            raise SketchFileError("the sketch image is empty")
        self._push_undo()
        blank = self._blank()
        scaled = image.scaled(blank.size(), Qt.AspectRatioMode.KeepAspectRatio,
                              Qt.TransformationMode.SmoothTransformation)
        painter = QPainter(blank)
        offset = QPoint((blank.width() - scaled.width()) // 2, (blank.height() - scaled.height()) // 2)
        painter.drawImage(offset, scaled)
        painter.end()
        self._image = blank
        self.update()
        self.changed.emit()

    def reset(self, array: np.ndarray | None = None) -> None:
        """Start over with ``array`` (RGB uint8, fitted on white) or a blank canvas, with no undo history (a
        case's own sketch put back: nothing of the sketch before stays to undo into)."""
        self._image = self._blank()
        self._undo.clear()
        if array is not None:
            array = np.ascontiguousarray(array)
            height, width = array.shape[:2]
            self.set_image(QImage(array.data, width, height, 3 * width, QImage.Format.Format_RGB888).copy())
            self._undo.clear()
        self.update()
        self.changed.emit()

    def load(self, path: str | Path) -> None:
        """Load a PNG/JPG sketch (fitted, keeping its aspect). Raises ``SketchFileError`` naming the file."""
        path = Path(path)
        if not path.is_file():
            raise SketchFileError(f"sketch file {path} does not exist")
        try:
            array = load_query_image(path, "sketch")
        except QueryInputError as exc:
            raise SketchFileError(str(exc)) from None
        array = np.ascontiguousarray(array)
        height, width = array.shape[:2]
        self.set_image(QImage(array.data, width, height, 3 * width, QImage.Format.Format_RGB888).copy())

    def save(self, path: str | Path) -> Path:
        """Write the drawing as PNG (atomically: a temporary file renamed into place). Returns the path."""
        path = Path(path)
        if path.suffix.lower() != ".png":
            path = path.with_name(path.name + ".png")
        folder = path.parent if str(path.parent) else Path(".")
        if not folder.is_dir():
            raise SketchFileError(f"cannot save the sketch: folder {folder} does not exist")
        handle, temp = tempfile.mkstemp(prefix=".sketch-", suffix=".png", dir=folder)
        os.close(handle)
        try:
            if not self._image.save(temp, "PNG"):
                raise SketchFileError(f"cannot write the sketch to {path}")
            os.replace(temp, path)
        finally:
            if os.path.exists(temp):
                os.remove(temp)
        return path

    def stroke(self, points: list[tuple[float, float]]) -> None:
        """Draw a stroke through canvas points (logical pixels) with the current tool, as the mouse would."""
        if not points:
            return
        self._push_undo()
        previous = None
        for x, y in points:
            point = QPointF(x * SUPERSAMPLE, y * SUPERSAMPLE)
            self._draw_segment(previous or point, point)
            previous = point
        self.update()
        self.changed.emit()

    def _draw_segment(self, start: QPointF, end: QPointF) -> None:
        painter = QPainter(self._image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        colour = INK if self._tool == "pen" else PAPER
        width = self._width * SUPERSAMPLE * (2 if self._tool == "eraser" else 1)
        painter.setPen(QPen(colour, width, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap,
                            Qt.PenJoinStyle.RoundJoin))
        if start == end:
            painter.drawPoint(start)
        else:
            painter.drawLine(start, end)
        painter.end()

    # ------------------------------------------------------------------------------------------ widget

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(180, 360)

    def target_rect(self) -> QRect:
        """Where the canvas is drawn inside the widget (1:2, centred, 6 px margin)."""
        area = self.rect().adjusted(6, 6, -6, -6)
        height = min(area.height(), area.width() * 2)
        width = height // 2
        return QRect(area.center().x() - width // 2 + 1, area.center().y() - height // 2 + 1, width, height)

    def _to_image(self, position: QPointF) -> QPointF:
        target = self.target_rect()
        scale = self._image.width() / max(1, target.width())
        return QPointF((position.x() - target.x()) * scale, (position.y() - target.y()) * scale)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt API
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        target = self.target_rect()
        painter.fillRect(target.adjusted(1, 2, 1, 2), QColor(0, 0, 0, 28))  # soft drop shadow
        painter.drawImage(target, self._image)
        painter.setPen(QPen(QColor(190, 195, 204), 1))
        painter.drawRect(target.adjusted(0, 0, -1, -1))
        if not self._undo and self.is_empty():
            painter.setPen(QColor(160, 166, 176))
            painter.drawText(target, Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
                             "Draw the person")
        painter.end()

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        if event.button() != Qt.MouseButton.LeftButton:
            return
        self._push_undo()
        self._last = self._to_image(event.position())
        self._draw_segment(self._last, self._last)
        self.update()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        if self._last is None or not event.buttons() & Qt.MouseButton.LeftButton:
            return
        point = self._to_image(event.position())
        self._draw_segment(self._last, point)
        self._last = point
        self.update()

    def event(self, event: QEvent) -> bool:
        # with the canvas focused, Ctrl+Z undoes a stroke rather than the window's "undo step" shortcut
        if event.type() == QEvent.Type.ShortcutOverride and event.matches(QKeySequence.StandardKey.Undo):
            event.accept()
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt API
        if event.matches(QKeySequence.StandardKey.Undo):
            self.undo()
            event.accept()
            return
        super().keyPressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        if event.button() == Qt.MouseButton.LeftButton and self._last is not None:
            self._last = None
            self.changed.emit()


def _tool_button(text: str, tip: str, *, checkable: bool = False) -> QToolButton:
    button = QToolButton()
    button.setText(text)
    button.setToolTip(tip)
    button.setCheckable(checkable)
    button.setAutoRaise(True)
    button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    return button


class SketchEditor(QWidget):
    """The canvas with its tools. ``changed`` mirrors the canvas; ``error`` carries readable messages."""

    changed = Signal()
    error = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.canvas = SketchCanvas(self)
        self.pen_button = _tool_button("Pen", "Draw (black)", checkable=True)
        self.eraser_button = _tool_button("Eraser", "Erase (paints white, twice the pen width)",
                                          checkable=True)
        self.pen_button.setChecked(True)
        tools = QButtonGroup(self)
        tools.setExclusive(True)
        tools.addButton(self.pen_button)
        tools.addButton(self.eraser_button)
        self.width_box = QSpinBox()
        self.width_box.setRange(*WIDTH_RANGE)
        self.width_box.setValue(DEFAULT_WIDTH)
        self.width_box.setSuffix(" px")
        self.width_box.setToolTip("Pen width")
        self.undo_button = _tool_button("Undo stroke", "Undo the last stroke (Ctrl+Z while the canvas has focus; "
                                                        "elsewhere Ctrl+Z undoes the last search step)")
        self.clear_button = _tool_button("Clear", "Blank the canvas (undoable)")
        self.load_button = _tool_button("Load…", "Load a sketch image (PNG or JPG)")
        self.save_button = _tool_button("Save…", "Save the sketch as PNG")

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.setSpacing(2)
        for widget in (self.pen_button, self.eraser_button):
            top.addWidget(widget)
        top.addSpacing(6)
        top.addWidget(QLabel("Width"))
        top.addWidget(self.width_box)
        top.addStretch(1)
        bottom = QHBoxLayout()
        bottom.setContentsMargins(0, 0, 0, 0)
        bottom.setSpacing(2)
        for widget in (self.undo_button, self.clear_button):
            bottom.addWidget(widget)
        bottom.addStretch(1)
        for widget in (self.load_button, self.save_button):
            bottom.addWidget(widget)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.canvas, 1)
        layout.addLayout(bottom)

        self.pen_button.toggled.connect(lambda on: on and self.canvas.set_tool("pen"))
        self.eraser_button.toggled.connect(lambda on: on and self.canvas.set_tool("eraser"))
        self.width_box.valueChanged.connect(self.canvas.set_pen_width)
        self.undo_button.clicked.connect(self.canvas.undo)
        self.clear_button.clicked.connect(self.canvas.clear)
        self.load_button.clicked.connect(self._choose_load)
        self.save_button.clicked.connect(self._choose_save)
        self.canvas.changed.connect(self._refresh)
        self.canvas.changed.connect(self.changed)
        self._refresh()

    def _refresh(self) -> None:
        self.undo_button.setEnabled(self.canvas.can_undo)
        empty = self.canvas.is_empty()
        self.clear_button.setEnabled(not empty)
        self.save_button.setEnabled(not empty)

    def load_file(self, path: str | Path) -> bool:
        """Load a sketch file; an unreadable one becomes an ``error`` message. True when loaded."""
        try:
            self.canvas.load(path)
        except SketchFileError as exc:
            self.error.emit(describe_error(exc))
            return False
        return True

    def save_file(self, path: str | Path) -> Path | None:
        """Save as PNG; a failure becomes an ``error`` message. Returns the written path or None."""
        try:
            return self.canvas.save(path)
        except (SketchFileError, OSError) as exc:
            self.error.emit(describe_error(exc))
            return None

    def _choose_load(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load sketch", "", IMAGE_FILTER)
        if path:
            self.load_file(path)

    def _choose_save(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save sketch", "sketch.png", "PNG image (*.png)")
        if path:
            self.save_file(path)
