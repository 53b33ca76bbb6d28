"""The step timeline: the case's steps as a tree, one row per step (unique label such as 3 or 3a, level, query,
candidates before → after, keep rule); branches hang off the step they start from, indented, in the order they
were made (``app.state.timeline_rows``); the active path is drawn in the accent colour and a line under the
title says where the next step continues from.

The widget only reports: ``step_selected(step id | None)`` when a row is clicked (None: the start, the whole
gallery), ``undo_requested()`` (Undo button, Ctrl+Z, context menu on the head step) and
``branch_requested(step id | None)`` (Branch button, Ctrl+B, context menu). Feed it with ``set_case``.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QModelIndex, QPoint, QPointF, QRect, QSize, Qt, Signal
from PySide6.QtGui import QAction, QColor, QFont, QFontMetrics, QKeySequence, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.state.timeline_rows import GraphCell, TimelineRow, graph, timeline_rows
from app.store import CaseState

ROW_ROLE = Qt.ItemDataRole.UserRole + 1
CELL_ROLE = Qt.ItemDataRole.UserRole + 2
LANE_WIDTH = 16
GUTTER = 12
ACCENT = QColor("#2563eb")
MUTED = QColor("#9ca3af")
TEXT = QColor("#111827")
SUBTLE = QColor("#6b7280")
SELECTED = QColor("#e8f0fe")
LEVEL_COLOURS = {"UC": "#93c5fd", "C": "#60a5fa", "M": "#3b82f6", "F": "#2563eb", "UF": "#1e40af"}


def _lane_x(lane: int) -> float:
    return GUTTER + lane * LANE_WIDTH


class StepRowDelegate(QStyledItemDelegate):
    """Paints one ``TimelineRow`` with its ``GraphCell``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lanes = 1

    def _fonts(self, option: QStyleOptionViewItem) -> tuple[QFont, QFont, QFont]:
        base = QFont(option.font)
        bold = QFont(base)
        bold.setBold(True)
        small = QFont(base)
        small.setPointSizeF(base.pointSizeF() * 0.88)
        return base, bold, small

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:  # noqa: N802 - Qt API
        base, _, small = self._fonts(option)
        height = QFontMetrics(base).lineSpacing() * 2 + QFontMetrics(small).lineSpacing() + 14
        return QSize(240, height)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        row: TimelineRow = index.data(ROW_ROLE)
        cell: GraphCell = index.data(CELL_ROLE)
        rect = option.rect
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if option.state & QStyle.StateFlag.State_Selected:
            painter.fillRect(rect, SELECTED)
            painter.fillRect(QRect(rect.left(), rect.top(), 3, rect.height()), ACCENT)
        elif option.state & QStyle.StateFlag.State_MouseOver:
            painter.fillRect(rect, QColor("#f5f7fa"))
        self._paint_graph(painter, rect, row, cell)
        self._paint_text(painter, option, rect, row)
        painter.setPen(QPen(QColor("#eef0f3"), 1))
        painter.drawLine(rect.bottomLeft(), rect.bottomRight())
        painter.restore()

    def _paint_graph(self, painter: QPainter, rect: QRect, row: TimelineRow, cell: GraphCell) -> None:
        top, bottom = rect.top(), rect.bottom() + 1
        middle = rect.top() + 17
        x = rect.left() + _lane_x(cell.lane)
        line = QPen(QColor("#c7ccd4"), 2)
        active_line = QPen(ACCENT, 2)
        for lane in cell.through:
            painter.setPen(active_line if lane in cell.through_active else line)
            lane_x = rect.left() + _lane_x(lane)
            painter.drawLine(QPointF(lane_x, top), QPointF(lane_x, bottom))
        on_path = row.active and not row.undone
        if cell.up:
            painter.setPen(active_line if on_path else line)
            painter.drawLine(QPointF(x, top), QPointF(x, middle))
        if cell.down:
            painter.setPen(active_line if cell.down_active else line)
            painter.drawLine(QPointF(x, middle), QPointF(x, bottom))
        if cell.elbow:
            parent_x = rect.left() + _lane_x(cell.lane - 1)
            path = QPainterPath(QPointF(parent_x, top))
            path.lineTo(parent_x, middle - 6)
            path.quadTo(parent_x, middle, parent_x + 6, middle)
            path.lineTo(x, middle)
            painter.setPen(active_line if on_path else line)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPath(path)
        radius = 5.5 if row.head else 4.5
        if row.undone:
            painter.setPen(QPen(MUTED, 1.5, Qt.PenStyle.DotLine))
            painter.setBrush(QColor("white"))
        elif row.active:
            painter.setPen(QPen(ACCENT, 2))
            painter.setBrush(ACCENT if not row.head else QColor("white"))
        else:
            painter.setPen(QPen(QColor("#8b93a1"), 2))
            painter.setBrush(QColor("white"))
        painter.drawEllipse(QPointF(x, middle), radius, radius)
        if row.head:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(ACCENT)
            painter.drawEllipse(QPointF(x, middle), 2.5, 2.5)

    def _paint_text(self, painter: QPainter, option: QStyleOptionViewItem, rect: QRect,
                    row: TimelineRow) -> None:
        base, bold, small = self._fonts(option)
        left = rect.left() + _lane_x(self.lanes - 1) + LANE_WIDTH
        right = rect.right() - 8
        line_height = QFontMetrics(base).lineSpacing()
        y = rect.top() + 8
        title_colour = MUTED if row.undone else TEXT
        # line 1: title, level badge, head tag ... counts on the right
        painter.setFont(bold)
        title_font = QFont(bold)
        title_font.setStrikeOut(row.undone)
        painter.setFont(title_font)
        painter.setPen(title_colour)
        title_width = QFontMetrics(title_font).horizontalAdvance(row.title)
        painter.drawText(QRect(left, y, title_width + 2, line_height), Qt.AlignmentFlag.AlignVCenter,
                         row.title)
        x = left + title_width + 8
        if row.level:
            light = row.level in ("UC", "C")  # pale badges get dark text
            x = self._badge(painter, small, x, y, line_height, row.level,
                            QColor(LEVEL_COLOURS.get(row.level, "#6b7280")),
                            QColor("#1e3a8a") if light else QColor("white"))
        if row.head:
            x = self._badge(painter, small, x, y, line_height, "current", QColor("#dbeafe"), ACCENT)
        if row.undone:
            x = self._badge(painter, small, x, y, line_height, "undone", QColor("#f3f4f6"), SUBTLE)
        painter.setFont(base)
        painter.setPen(SUBTLE if row.undone else TEXT)
        counts_width = QFontMetrics(base).horizontalAdvance(row.counts)
        painter.drawText(QRect(max(x, right - counts_width), y, counts_width + 1, line_height),
                         Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, row.counts)
        # line 2: the query
        y += line_height + 1
        painter.setPen(SUBTLE if row.undone else QColor("#1f2937"))
        query = QFontMetrics(base).elidedText(row.query, Qt.TextElideMode.ElideRight, right - left)
        painter.drawText(QRect(left, y, right - left, line_height), Qt.AlignmentFlag.AlignVCenter, query)
        # line 3: keep rule, time, branch origin
        y += line_height + 1
        notes = [part for part in (row.keep, None if row.seconds is None else f"{row.seconds:.2f} s") if part]
        if row.branch_of is not None:
            notes.append("branch from start" if row.branch_of == "0" else f"branch from step {row.branch_of}")
        painter.setFont(small)
        painter.setPen(SUBTLE)
        small_height = QFontMetrics(small).lineSpacing()
        text = QFontMetrics(small).elidedText(" · ".join(notes), Qt.TextElideMode.ElideRight, right - left)
        painter.drawText(QRect(left, y, right - left, small_height), Qt.AlignmentFlag.AlignVCenter, text)

    @staticmethod
    def _badge(painter: QPainter, font: QFont, x: int, y: int, height: int, text: str, background: QColor,
               foreground: QColor) -> int:
        metrics = QFontMetrics(font)
        width = metrics.horizontalAdvance(text) + 10
        box = QRect(x, y + (height - metrics.height()) // 2 - 1, width, metrics.height() + 2)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(background)
        painter.drawRoundedRect(box, box.height() / 2, box.height() / 2)
        painter.setFont(font)
        painter.setPen(foreground)
        painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)
        return box.right() + 6


class StepTimeline(QWidget):
    """See the module docstring."""

    step_selected = Signal(object)  # step id | None
    undo_requested = Signal()
    branch_requested = Signal(object)  # step id | None

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows: list[TimelineRow] = []
        self._case: CaseState | None = None
        self._busy = False
        self._updating = False

        title = QLabel("Steps")
        title_font = QFont(title.font())
        title_font.setPointSizeF(title_font.pointSizeF() * 1.15)
        title_font.setBold(True)
        title.setFont(title_font)
        self.undo_button = QToolButton()
        self.undo_button.setText("Undo step")
        self.branch_button = QToolButton()
        self.branch_button.setText("Branch here")
        for button in (self.undo_button, self.branch_button):
            button.setAutoRaise(True)
            button.setCursor(Qt.CursorShape.PointingHandCursor)
        header = QHBoxLayout()
        header.setContentsMargins(12, 10, 8, 0)
        header.addWidget(title)
        header.addStretch(1)
        header.addWidget(self.undo_button)
        header.addWidget(self.branch_button)
        self.next_label = QLabel()
        self.next_label.setWordWrap(True)
        self.next_label.setContentsMargins(12, 0, 8, 4)
        self.next_label.setStyleSheet("color: #1d4ed8;")

        self.list = QListWidget()
        self.delegate = StepRowDelegate(self.list)
        self.list.setItemDelegate(self.delegate)
        self.list.setMouseTracking(True)
        self.list.setFrameShape(QListWidget.Shape.NoFrame)
        self.list.setVerticalScrollMode(QListWidget.ScrollMode.ScrollPerPixel)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.setStyleSheet("QListWidget { background: white; outline: 0; } "
                                "QListWidget::item:selected { background: transparent; }")
        self.empty_hint = QLabel("Run a search: each step narrows the candidates and appears here.")
        self.empty_hint.setWordWrap(True)
        self.empty_hint.setStyleSheet("color: #9ca3af; background: white; padding: 4px 12px 10px 12px;")

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(header)
        layout.addWidget(self.next_label)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.empty_hint)

        self.undo_action = QAction("Undo last step", self)
        self.undo_action.setShortcut(QKeySequence("Ctrl+Z"))
        self.undo_action.setToolTip("Undo the current step; it stays in the case, greyed (Ctrl+Z)")
        self.branch_action = QAction("Branch from selected step", self)
        self.branch_action.setShortcut(QKeySequence("Ctrl+B"))
        self.branch_action.setToolTip("Continue the search from the selected step; the later steps are kept "
                                      "as a branch (Ctrl+B)")
        for action in (self.undo_action, self.branch_action):
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            self.addAction(action)
        pairs = ((self.undo_button, self.undo_action), (self.branch_button, self.branch_action))
        for button, action in pairs:
            button.setToolTip(action.toolTip())
            button.clicked.connect(action.trigger)

        self.undo_action.triggered.connect(self._undo)
        self.branch_action.triggered.connect(self._branch_selected)
        self.list.currentItemChanged.connect(self._current_changed)
        self.list.customContextMenuRequested.connect(self._context_menu)
        self.set_case(None)

    # ------------------------------------------------------------------------------------------ feeding

    def rows(self) -> list[TimelineRow]:
        return list(self._rows)

    def set_case(self, case: CaseState | None, gallery_size: int | None = None, *,
                 selected: int | None | str = "keep", item_label: Callable[[str], str] | None = None) -> None:
        """Show ``case``'s steps. ``selected``: the step id to select (None: the start); by default the
        current selection is kept when the same case still has that step, else the head is selected.
        ``item_label`` names a find-similar step's example item (``app.state.item_label``; its id is in the
        row's tooltip)."""
        same_case = case is not None and self._case is not None and case.case.id == self._case.case.id
        previous = self.selected_step_id() if selected == "keep" else selected
        self._case = case
        self._rows = timeline_rows(case, gallery_size, item_label)
        cells = graph(self._rows)
        self.delegate.lanes = max(row.lane for row in self._rows) + 1
        self._updating = True
        try:
            self.list.clear()
            for row, cell in zip(self._rows, cells, strict=True):
                item = QListWidgetItem()
                item.setData(ROW_ROLE, row)
                item.setData(CELL_ROLE, cell)
                item.setToolTip(self._tooltip(row))
                self.list.addItem(item)
            ids = [row.step_id for row in self._rows]
            if selected == "keep" and (not same_case or previous not in ids):
                previous = None if case is None else case.case.head_step_id
            self._select_row(ids.index(previous) if previous in ids else 0)
        finally:
            self._updating = False
        self.empty_hint.setVisible(len(self._rows) <= 1)
        self.next_label.setText(self.next_step_text())
        self.next_label.setVisible(case is not None)
        self._refresh_actions()

    def next_step_text(self) -> str:
        """Where the next search continues from (feedback for Undo and Branch here)."""
        head = self._head()
        if self._case is None:
            return ""
        if head is None:
            return "Next step searches the whole gallery"
        row = next((row for row in self._rows if row.step_id == head), None)
        label = head if row is None else row.label
        later = any(step.parent_id == head and not step.undone for step in self._case.steps)
        return f"Next step continues from step {label}" + (" as a new branch" if later else "")

    def set_selected(self, step_id: int | None) -> None:
        """Select a step's row without emitting ``step_selected`` (the state already knows)."""
        ids = [row.step_id for row in self._rows]
        if step_id in ids:
            self._updating = True
            try:
                self._select_row(ids.index(step_id))
            finally:
                self._updating = False
            self._refresh_actions()

    def set_busy(self, busy: bool) -> None:
        """While a job runs, undo and branch are unavailable."""
        self._busy = bool(busy)
        self._refresh_actions()

    def selected_step_id(self) -> int | None:
        row = self._selected_row()
        return None if row is None else row.step_id

    def _selected_row(self) -> TimelineRow | None:
        item = self.list.currentItem()
        return None if item is None else item.data(ROW_ROLE)

    def _select_row(self, index: int) -> None:
        self.list.setCurrentRow(index)
        self.list.scrollToItem(self.list.item(index))

    @staticmethod
    def _tooltip(row: TimelineRow) -> str:
        if row.step_id is None:
            return "The whole gallery, before the first step"
        lines = [f"{row.title}: {row.query}", f"Candidates {row.counts} ({row.keep})"]
        if row.example_item:
            lines.append(f"Example item {row.example_item}")
        if row.level:
            lines.append(f"Level {row.level}")
        if row.undone:
            lines.append("Undone: kept in the case, not on the current path")
        return "\n".join(lines)

    # ------------------------------------------------------------------------------------------ actions

    def _head(self) -> int | None:
        return None if self._case is None else self._case.case.head_step_id

    def _can_branch(self, row: TimelineRow | None) -> bool:
        if self._busy or self._case is None or row is None or row.undone:
            return False
        return row.step_id != self._head()

    def _refresh_actions(self) -> None:
        has_head = self._case is not None and self._head() is not None
        self.undo_action.setEnabled(has_head and not self._busy)
        self.branch_action.setEnabled(self._can_branch(self._selected_row()))
        self.undo_button.setEnabled(self.undo_action.isEnabled())
        self.branch_button.setEnabled(self.branch_action.isEnabled())

    def _undo(self) -> None:
        if self.undo_action.isEnabled():
            self.undo_requested.emit()

    def _branch_selected(self) -> None:
        row = self._selected_row()
        if self._can_branch(row):
            self.branch_requested.emit(row.step_id)

    def _current_changed(self, current: QListWidgetItem | None, _previous: QListWidgetItem | None) -> None:
        self._refresh_actions()
        if current is not None and not self._updating:
            self.step_selected.emit(current.data(ROW_ROLE).step_id)

    def context_menu_for(self, row: TimelineRow) -> QMenu:
        """The menu a right click on ``row`` opens (exposed for tests)."""
        menu = QMenu(self)
        show = menu.addAction("Show results" if row.step_id is not None else "Show the whole gallery")
        show.triggered.connect(lambda: self._select_and_emit(row.step_id))
        branch = menu.addAction("Branch from here" if row.step_id is not None
                                else "Start over from the gallery")
        branch.setShortcut(self.branch_action.shortcut())
        branch.setEnabled(self._can_branch(row))
        branch.triggered.connect(lambda: self.branch_requested.emit(row.step_id))
        if row.head and row.step_id is not None:
            undo = menu.addAction("Undo this step")
            undo.setShortcut(self.undo_action.shortcut())
            undo.setEnabled(not self._busy)
            undo.triggered.connect(self.undo_requested.emit)
        return menu

    def _select_and_emit(self, step_id: int | None) -> None:
        ids = [row.step_id for row in self._rows]
        if step_id in ids:
            self._select_row(ids.index(step_id))

    def _context_menu(self, position: QPoint) -> None:
        item = self.list.itemAt(position)
        if item is None:
            return
        self.context_menu_for(item.data(ROW_ROLE)).exec(self.list.viewport().mapToGlobal(position))
