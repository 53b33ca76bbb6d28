"""The results grid's own widgets: the icon-mode list with its keys, and the time box of the time filter."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent, QValidator
from PySide6.QtWidgets import QAbstractItemView, QAbstractSpinBox, QDoubleSpinBox, QListView, QWidget

from app.state.engine_terms import read_screen_time as parse_time
from app.views.result_card import CELL, ResultDelegate
from app.views.results_model import CLEAR, CONFIRMED, REJECTED, format_time

#: Rows laid out per pass of the event loop (a few milliseconds each: a million rows take about fifty passes).
LAYOUT_BATCH = 20_000


class ResultsGrid(QListView):
    """Icon-mode list with the grid's keys: C confirm, R reject, U clear, F find similar, Enter open,
    Ctrl+C copy ids; arrows, Home/End, Page Up/Down and Shift/Ctrl selection as in any item view."""

    mark_requested = Signal(str)
    open_requested = Signal()
    find_similar_requested = Signal()
    copy_requested = Signal()

    _KEYS = {Qt.Key.Key_C: CONFIRMED, Qt.Key.Key_R: REJECTED, Qt.Key.Key_U: CLEAR}

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # list mode wrapping left to right: the same grid as icon mode, but laid out as flow positions (icon
        # mode keeps an item per row and walks them all whenever many rows change), in batches between events
        self.setViewMode(QListView.ViewMode.ListMode)
        self.setMovement(QListView.Movement.Static)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setFlow(QListView.Flow.LeftToRight)
        self.setWrapping(True)
        self.setUniformItemSizes(True)
        self.setLayoutMode(QListView.LayoutMode.Batched)
        self.setBatchSize(LAYOUT_BATCH)
        self.setGridSize(CELL)
        self.setSpacing(0)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setSelectionRectVisible(True)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.verticalScrollBar().setSingleStep(24)
        self.setMouseTracking(True)
        self.setItemDelegate(ResultDelegate(self))
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key, modifiers = event.key(), event.modifiers()
        plain = not modifiers & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
                                 | Qt.KeyboardModifier.MetaModifier)
        if plain and key in self._KEYS:
            self.mark_requested.emit(self._KEYS[key])
        elif plain and key == Qt.Key.Key_F and not modifiers & Qt.KeyboardModifier.ShiftModifier:
            self.find_similar_requested.emit()
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.open_requested.emit()
        elif key == Qt.Key.Key_C and modifiers & Qt.KeyboardModifier.ControlModifier:
            self.copy_requested.emit()
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    def keyboardSearch(self, search: str) -> None:
        """Letters are commands here, not a jump-to-id search."""


class TimeSpinBox(QDoubleSpinBox):
    """Seconds shown and typed as ``format_time`` text (footage clock or wall-clock date)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setDecimals(1)
        self.setKeyboardTracking(False)
        self.setButtonSymbols(QAbstractSpinBox.ButtonSymbols.NoButtons)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)

    def textFromValue(self, value: float) -> str:
        return format_time(value)

    def valueFromText(self, text: str) -> float:
        value = parse_time(text)
        return self.value() if value is None else value

    def validate(self, text: str, pos: int):
        state = QValidator.State.Acceptable if parse_time(text) is not None else QValidator.State.Intermediate
        return state, text, pos

    def fit_text(self, bounds: tuple[float, float]) -> None:
        """Width for the longest text the range produces."""
        metrics = self.fontMetrics()
        widest = max(metrics.horizontalAdvance(format_time(v)) for v in bounds)
        self.setMinimumWidth(widest + 18)
