"""``SightingsCanvas``: the lanes of the sightings timeline, painted (``app.state.sightings_rows`` shapes what it
shows). One lane per camera, the sightings as marks from start to end on a shared time axis, consecutive
confirmed sightings joined by a line (solid across cameras, dotted within one) labelled with the gap where it
fits; proposed sightings hollow and dashed, joined by a dashed line to the confirmed sighting nearest in time.

Mouse: a click on a mark selects it, the wheel zooms around the pointer (Shift+wheel pans), a drag pans, a right
click opens the mark's menu. Keys: Left/Right the previous/next sighting in time, Up/Down the nearest in the
lane above/below, Home/End the first/last, Enter selects, +/- zoom, 0 fits all; on a proposed sighting C/R
confirm/reject its items; on a confirmed one F follows it to the next camera (when offered).

Signals: ``activated(place)`` (click, Enter, the menu's "Show"), ``confirm_requested(list)``,
``reject_requested(list)`` (item ids), ``follow_requested(int)`` (the confirmed sighting's index)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QContextMenuEvent,
    QFont,
    QFontMetrics,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QWheelEvent,
)
from PySide6.QtWidgets import QMenu, QToolTip, QWidget

from app.state.sightings_rows import EMPTY, SightingsChart
from app.state.time_axis import ticks

ACCENT = QColor("#2563eb")
PROPOSED_COLOUR = QColor("#d97706")
TEXT = QColor("#374151")
SUBTLE = QColor("#6b7280")
GRID = QColor("#e5e7eb")
LANE_SHADE = QColor("#f8fafc")
MARK_MIN = 10.0  # pixels: the narrowest mark (a sighting of one instant)
PAD = 10.0  # pixels kept free at either end of the axis
ZOOM_STEP = 1.5
#: The keys the lanes answer to themselves, before the window's shortcuts.
OWN_KEYS = frozenset((Qt.Key.Key_Left, Qt.Key.Key_Right, Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_Home,
                      Qt.Key.Key_End, Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Plus, Qt.Key.Key_Equal,
                      Qt.Key.Key_Minus, Qt.Key.Key_0, Qt.Key.Key_C, Qt.Key.Key_R, Qt.Key.Key_F))
EMPTY_TEXT = "Confirm items: their sightings appear here, one lane per camera"


class SightingsCanvas(QWidget):
    """See the module docstring."""

    activated = Signal(int)
    confirm_requested = Signal(list)
    reject_requested = Signal(list)
    follow_requested = Signal(int)
    view_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.chart: SightingsChart = EMPTY
        self.current: int | None = None
        self.follow_available = False
        self._view: tuple[float, float] | None = None
        self._drag: tuple[float, tuple[float, float]] | None = None
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(True)
        self.setMinimumHeight(64)
        self.setAutoFillBackground(False)

    # ------------------------------------------------------------------------------------------ feeding

    def set_chart(self, chart: SightingsChart) -> None:
        """Show ``chart``; the current sighting stays when it is still there (same kind, most items shared), the
        zoom when everything still fits in it."""
        previous = None if self.current is None else self.chart.rows[self.current]
        self.chart = chart
        self.current = None if previous is None else chart.place_of(previous.kind, previous.items)
        span = chart.span()
        if span is None:
            self._view = None
        elif self._view is None or span[0] < self._view[0] or span[1] > self._view[1]:
            self.fit_all()
        self.update()

    # ------------------------------------------------------------------------------------------ the view

    def visible_range(self) -> tuple[float, float] | None:
        """The seconds at the left and the right end of the axis (None: nothing to show)."""
        return self._view

    def fit_all(self) -> None:
        span = self.chart.span()
        if span is None:
            self._view = None
        else:
            start, end = span
            pad = max((end - start) * 0.03, 30.0 if self.chart.wall_clock else 1.0)
            self._view = (start - pad, end + pad)
        self.update()
        self.view_changed.emit()

    def zoom(self, factor: float, anchor: float | None = None) -> None:
        """Show ``factor`` times the time shown now (< 1 zooms in), keeping ``anchor`` (seconds; the middle of
        the current sighting, else of the view) where it is on screen."""
        if self._view is None:
            return
        start, end = self._view
        if anchor is None:
            anchor = (start + end) / 2 if self.current is None else self._middle(self.current)
        full = self.chart.span()
        longest = max(4 * (full[1] - full[0]), 120.0)
        width = min(max((end - start) * factor, 1.0), longest)
        share = (anchor - start) / (end - start)
        self._set_view(anchor - share * width, width)

    def pan(self, pixels: float) -> None:
        """Move the view ``pixels`` to the right (negative: left)."""
        if self._view is not None:
            start, end = self._view
            self._set_view(start + pixels / self._scale(), end - start)

    def _set_view(self, start: float, width: float) -> None:
        first, last = self.chart.span()
        start = min(max(start, first - width * 0.9), last - width * 0.1)  # some of the sightings stay in view
        self._view = (start, start + width)
        self.update()
        self.view_changed.emit()

    def _middle(self, place: int) -> float:
        row = self.chart.rows[place]
        return (row.start + row.end) / 2

    # ------------------------------------------------------------------------------------------ geometry

    def gutter(self) -> float:
        """Pixels left of the axis for the lanes' camera names."""
        metrics = QFontMetrics(self.font())
        widest = max((metrics.horizontalAdvance(name) for name in self.chart.lanes), default=0)
        return min(max(widest + 16.0, 44.0), 120.0)

    def axis_height(self) -> float:
        return QFontMetrics(self._small_font()).lineSpacing() + 10.0

    def lane_height(self) -> float:
        lanes = max(len(self.chart.lanes), 1)
        return min((self.height() - self.axis_height() - 4) / lanes, 34.0)

    def lane_middle(self, lane: int) -> float:
        return 4 + (lane + 0.5) * self.lane_height()

    def _scale(self) -> float:
        start, end = self._view
        return max(self.width() - self.gutter() - 2 * PAD, 1.0) / (end - start)

    def x_of(self, seconds: float) -> float:
        """Where ``seconds`` falls on screen (the view must be set)."""
        return self.gutter() + PAD + (seconds - self._view[0]) * self._scale()

    def time_at(self, x: float) -> float:
        return self._view[0] + (x - self.gutter() - PAD) / self._scale()

    def mark_rect(self, place: int) -> QRectF:
        """The rectangle of the mark of row ``place``."""
        row = self.chart.rows[place]
        left, right = self.x_of(row.start), self.x_of(row.end)
        if right - left < MARK_MIN:
            middle = (left + right) / 2
            left, right = middle - MARK_MIN / 2, middle + MARK_MIN / 2
        height = min(self.lane_height() * 0.62, 18.0)
        middle_y = self.lane_middle(self.chart.lane(place))
        return QRectF(left, middle_y - height / 2, right - left, height)

    def mark_at(self, point: QPointF | QPoint) -> int | None:
        """The place of the mark under ``point`` (proposals drawn over confirmed ones win), or None."""
        if self._view is None:
            return None
        point = QPointF(point)
        for place in reversed(self._paint_order()):
            if self.mark_rect(place).adjusted(-2, -2, 2, 2).contains(point):
                return place
        return None

    def _paint_order(self) -> list[int]:
        rows = self.chart.rows
        return sorted(range(len(rows)), key=lambda place: (rows[place].proposed, place))

    # ------------------------------------------------------------------------------------------ painting

    def _small_font(self) -> QFont:
        font = QFont(self.font())
        font.setPointSizeF(font.pointSizeF() * 0.86)
        return font

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802 - Qt API
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.fillRect(self.rect(), QColor("white"))
        if self._view is None:
            painter.setPen(SUBTLE)
            painter.drawText(self.rect().adjusted(12, 0, -12, 0),
                             Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, EMPTY_TEXT)
            return
        painter.setClipRect(QRectF(0, 0, self.width(), self.height()))
        self._paint_lanes(painter)
        painter.save()
        painter.setClipRect(QRectF(self.gutter(), 0, self.width() - self.gutter(), self.height()))
        self._paint_links(painter)
        for place in self._paint_order():
            self._paint_mark(painter, place)
        painter.restore()
        if self.hasFocus() and self.current is None:
            painter.setPen(QPen(ACCENT, 1, Qt.PenStyle.DotLine))
            painter.drawRect(self.rect().adjusted(0, 0, -1, -1))

    def _paint_lanes(self, painter: QPainter) -> None:
        lane_height, gutter = self.lane_height(), self.gutter()
        bottom = 4 + lane_height * len(self.chart.lanes)
        for lane, camera in enumerate(self.chart.lanes):
            top = 4 + lane * lane_height
            if lane % 2 == 0:
                painter.fillRect(QRectF(0, top, self.width(), lane_height), LANE_SHADE)
            painter.setPen(TEXT)
            painter.drawText(QRectF(6, top, gutter - 10, lane_height),
                             Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                             QFontMetrics(self.font()).elidedText(camera, Qt.TextElideMode.ElideRight,
                                                                  int(gutter - 10)))
        painter.setPen(QPen(GRID, 1))
        painter.drawLine(QPointF(gutter, 4), QPointF(gutter, bottom))
        painter.drawLine(QPointF(gutter, bottom), QPointF(self.width(), bottom))
        small = self._small_font()
        painter.setFont(small)
        metrics = QFontMetrics(small)
        start, end = self._view
        pixels = self.width() - gutter - 2 * PAD
        last_right = gutter
        for seconds, text in ticks(start, end, max(pixels, 1.0)):
            x = self.x_of(seconds)
            if x < gutter or x > self.width():
                continue
            painter.setPen(QPen(GRID, 1))
            painter.drawLine(QPointF(x, 4), QPointF(x, bottom + 3))
            width = metrics.horizontalAdvance(text)
            left = min(max(x - width / 2, gutter + 2), self.width() - width - 2)
            if left > last_right + 4:
                painter.setPen(SUBTLE)
                painter.drawText(QRectF(left, bottom + 4, width + 1, metrics.lineSpacing()),
                                 Qt.AlignmentFlag.AlignCenter, text)
                last_right = left + width
        painter.setFont(self.font())

    def _paint_links(self, painter: QPainter) -> None:
        rows = self.chart.rows
        small = self._small_font()
        metrics = QFontMetrics(small)
        painter.setFont(small)
        for gap in self.chart.gaps:
            before, after = self.mark_rect(gap.before), self.mark_rect(gap.after)
            one = QPointF(before.right(), before.center().y())
            two = QPointF(after.left(), after.center().y())
            pen = QPen(ACCENT, 1.6) if gap.camera_change else QPen(SUBTLE, 1.2, Qt.PenStyle.DotLine)
            painter.setPen(pen)
            painter.drawLine(one, two)
            width = metrics.horizontalAdvance(gap.text) + 8
            if two.x() - one.x() >= width + 6:
                middle = (one + two) / 2
                box = QRectF(middle.x() - width / 2, middle.y() - metrics.height() / 2 - 1, width,
                             metrics.height() + 2)
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(QColor(255, 255, 255, 230))
                painter.drawRoundedRect(box, 4, 4)
                painter.setPen(ACCENT if gap.camera_change else SUBTLE)
                painter.drawText(box, Qt.AlignmentFlag.AlignCenter, gap.text)
        confirmed = [place for place, row in enumerate(rows) if not row.proposed]
        if confirmed:
            painter.setPen(QPen(PROPOSED_COLOUR, 1.2, Qt.PenStyle.DashLine))
            for place, row in enumerate(rows):
                if row.proposed:
                    nearest = min(confirmed, key=lambda k: abs(self._middle(k) - self._middle(place)))
                    painter.drawLine(self.mark_rect(nearest).center(), self.mark_rect(place).center())
        painter.setFont(self.font())

    def _paint_mark(self, painter: QPainter, place: int) -> None:
        row = self.chart.rows[place]
        rect = self.mark_rect(place)
        if row.proposed:
            painter.setPen(QPen(PROPOSED_COLOUR, 1.8, Qt.PenStyle.DashLine))
            painter.setBrush(QColor(255, 255, 255, 235))
        else:
            painter.setPen(QPen(ACCENT.darker(130), 1))
            painter.setBrush(ACCENT)
        painter.drawRoundedRect(rect, 3, 3)
        if place == self.current:
            painter.setPen(QPen(QColor("#111827"), 2))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(rect.adjusted(-3, -3, 3, 3), 4, 4)

    # ------------------------------------------------------------------------------------------ interaction

    def set_current(self, place: int | None) -> None:
        """Make row ``place`` current (panned into view), without selecting it."""
        self.current = place
        if place is not None and self._view is not None:
            rect = self.mark_rect(place)
            if rect.right() < self.gutter() or rect.left() > self.width():
                start, end = self._view
                self._set_view(self._middle(place) - (end - start) / 2, end - start)
        self.update()

    def activate(self, place: int) -> None:
        self.set_current(place)
        self.activated.emit(place)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt API
        key, chart, current = event.key(), self.chart, self.current
        moves = {Qt.Key.Key_Left: lambda: chart.step_time(current, -1),
                 Qt.Key.Key_Right: lambda: chart.step_time(current, 1),
                 Qt.Key.Key_Up: lambda: chart.step_lane(current, -1),
                 Qt.Key.Key_Down: lambda: chart.step_lane(current, 1),
                 Qt.Key.Key_Home: lambda: chart.step_time(None, 1),
                 Qt.Key.Key_End: lambda: chart.step_time(None, -1)}
        row = None if current is None else chart.rows[current]
        if key in moves:
            self.set_current(moves[key]())
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and current is not None:
            self.activate(current)
        elif key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom(1 / ZOOM_STEP)
        elif key == Qt.Key.Key_Minus:
            self.zoom(ZOOM_STEP)
        elif key == Qt.Key.Key_0:
            self.fit_all()
        elif key in (Qt.Key.Key_C, Qt.Key.Key_R) and row is not None and row.proposed:
            (self.confirm_requested if key == Qt.Key.Key_C else self.reject_requested).emit(list(row.items))
        elif key == Qt.Key.Key_F and row is not None and not row.proposed and self.follow_available:
            self.follow_requested.emit(row.index)
        else:
            super().keyPressEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        self.setFocus(Qt.FocusReason.MouseFocusReason)
        if event.button() != Qt.MouseButton.LeftButton or self._view is None:
            return
        place = self.mark_at(event.position())
        if place is not None:
            self.activate(place)
        else:
            self._drag = (event.position().x(), self._view)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        if self._drag is not None and self._view is not None:
            x, (start, end) = self._drag
            self._set_view(start - (event.position().x() - x) / self._scale(), end - start)

    def mouseReleaseEvent(self, _event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        self._drag = None

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 - Qt API
        if self._view is None:
            return
        delta = event.angleDelta()
        if delta.x() or event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self.pan(-(delta.x() or delta.y()) / 2)
        elif delta.y():
            self.zoom(ZOOM_STEP ** (-delta.y() / 120), self.time_at(event.position().x()))
        event.accept()

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ShortcutOverride and event.key() in OWN_KEYS and not (
                event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier & ~Qt.KeyboardModifier.ShiftModifier):
            event.accept()  # the window's one-key shortcuts (F: find similar) wait while the lanes have the focus
            return True
        if event.type() == QEvent.Type.ToolTip:
            place = self.mark_at(event.pos())
            if place is None:
                QToolTip.hideText()
            else:
                QToolTip.showText(event.globalPos(), self.tooltip(place), self)
            return True
        return super().event(event)

    def tooltip(self, place: int) -> str:
        """The mark's tooltip: its label, span and scores, and the gaps either side."""
        lines = [self.chart.rows[place].tooltip()]
        for gap in self.chart.gaps:
            if gap.after == place:
                lines.append(f"{gap.text} after {self.chart.rows[gap.before].camera}")
            if gap.before == place:
                lines.append(f"{gap.text} before {self.chart.rows[gap.after].camera}")
        return "\n".join(lines)

    def context_menu_for(self, place: int) -> QMenu:
        """The menu a right click on row ``place``'s mark opens (exposed for tests)."""
        row = self.chart.rows[place]
        menu = QMenu(self)
        entries = [("Show its items", "Return", lambda: self.activate(place), True)]
        if row.proposed:
            entries += [("Confirm these items", "C", lambda: self.confirm_requested.emit(list(row.items)), True),
                        ("Reject these items", "R", lambda: self.reject_requested.emit(list(row.items)), True)]
        else:
            entries.append(("Follow to the next camera", "F", lambda: self.follow_requested.emit(row.index),
                            self.follow_available))
        for text, key, act, enabled in entries:
            action = menu.addAction(text)
            action.setShortcut(QKeySequence(key))
            action.setEnabled(enabled)
            action.triggered.connect(act)
        return menu

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802 - Qt API
        place = self.mark_at(event.pos())
        if place is not None:
            self.set_current(place)
            self.context_menu_for(place).exec(event.globalPos())
