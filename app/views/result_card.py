"""How one result is painted in the grid: a card with the thumbnail (letterboxed), the mark frame and badge,
the rank, the ground-truth tag, the score, camera and time; items the step did not keep are faded."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPoint, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QGuiApplication, QPainter, QPainterPath, QPalette, QPen
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from app.views.results_model import CONFIRMED, MARK_COLORS, REJECTED, ResultsModel, format_score
from engine.timefmt import screen_time_short as format_time_short

THUMB = QSize(80, 160)
PAD = 6
LINE = 15
CELL = QSize(THUMB.width() + 2 * PAD + 8, THUMB.height() + 2 * PAD + 3 * LINE + 4)


class ResultDelegate(QStyledItemDelegate):
    """A card per result: thumbnail (letterboxed), mark frame and badge, rank, score, camera, time."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        return QSize(CELL)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        palette = option.palette
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        focused = bool(option.state & QStyle.StateFlag.State_HasFocus)
        mark = index.data(ResultsModel.MarkRole)
        kept = index.data(ResultsModel.KeptRole)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if not kept and not selected:
            painter.setOpacity(0.45)
        card = QRect(option.rect).adjusted(2, 2, -2, -2)
        background = QColor(palette.color(QPalette.ColorRole.Highlight)) if selected else palette.color(
            QPalette.ColorRole.AlternateBase)
        if selected:
            background.setAlpha(55)
        path = QPainterPath()
        path.addRoundedRect(card, 6, 6)
        painter.fillPath(path, background)
        if selected or focused:
            pen = QPen(palette.color(QPalette.ColorRole.Highlight), 2 if selected else 1)
            painter.setPen(pen)
            painter.drawPath(path)

        box = QRect(card.left() + (card.width() - THUMB.width()) // 2, card.top() + PAD, THUMB.width(),
                    THUMB.height())
        painter.fillRect(box, QColor("#262a31"))
        pixmap = index.data(ResultsModel.ThumbnailRole)
        if pixmap is not None and not pixmap.isNull():
            x = box.left() + (box.width() - pixmap.width()) // 2
            y = box.top() + (box.height() - pixmap.height()) // 2
            painter.drawPixmap(x, y, pixmap)
        else:
            painter.setPen(QColor("#8b929c"))
            painter.setFont(_font(painter, -1))
            text = "no crop" if index.data(ResultsModel.ThumbnailFailedRole) else "…"
            painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)
        if mark == REJECTED:
            painter.fillRect(box, QColor(20, 20, 20, 110))
        if mark in MARK_COLORS:
            pen = QPen(MARK_COLORS[mark], 3)
            pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
            painter.drawRect(box.adjusted(1, 1, -2, -2))  # crisp 3 px frame on the thumbnail's edge
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            self._badge(painter, box, mark)
        self._rank(painter, box, index.data(ResultsModel.RankRole))
        if index.data(ResultsModel.RelevantRole):
            self._truth(painter, box)

        text_color = palette.color(QPalette.ColorRole.Text)
        muted = QColor(text_color)
        muted.setAlpha(165)
        left, width = card.left() + 5, card.width() - 10
        top = box.bottom() + 5
        bold = _font(painter, 0, bold=True)
        painter.setFont(bold)
        painter.setPen(text_color)
        painter.drawText(QRect(left, top, width, LINE), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                         format_score(index.data(ResultsModel.ScoreRole)))
        small = _font(painter, -1)
        painter.setFont(small)
        painter.setPen(muted)
        metrics = painter.fontMetrics()
        camera = index.data(ResultsModel.CameraRole) or "—"
        when = format_time_short(index.data(ResultsModel.TimeRole))
        for line, text in enumerate((camera, when), start=1):
            painter.drawText(QRect(left, top + line * LINE, width, LINE),
                             Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                             metrics.elidedText(text, Qt.TextElideMode.ElideMiddle, width))
        painter.restore()

    @staticmethod
    def _badge(painter: QPainter, box: QRect, mark: str) -> None:
        size = 18
        circle = QRect(box.right() - size - 3, box.top() + 4, size, size)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(MARK_COLORS[mark])
        painter.drawEllipse(circle)
        pen = QPen(QColor("white"), 2.2)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        painter.setPen(pen)
        c = circle.center()
        if mark == CONFIRMED:
            painter.drawPolyline([QPoint(c.x() - 4, c.y()), QPoint(c.x() - 1, c.y() + 3), QPoint(c.x() + 4, c.y() - 3)])
        else:
            painter.drawLine(c.x() - 3, c.y() - 3, c.x() + 3, c.y() + 3)
            painter.drawLine(c.x() - 3, c.y() + 3, c.x() + 3, c.y() - 3)

    @staticmethod
    def _rank(painter: QPainter, box: QRect, rank: int | None) -> None:
        if rank is None:
            return
        painter.setFont(_font(painter, -2, bold=True))
        text = f"#{rank}"
        width = painter.fontMetrics().horizontalAdvance(text) + 8
        tag = QRect(box.left() + 3, box.top() + 4, width, 15)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(0, 0, 0, 150))
        painter.drawRoundedRect(tag, 4, 4)
        painter.setPen(QColor("white"))
        painter.drawText(tag, Qt.AlignmentFlag.AlignCenter, text)

    @staticmethod
    def _truth(painter: QPainter, box: QRect) -> None:
        painter.setFont(_font(painter, -2, bold=True))
        tag = QRect(box.left() + 3, box.bottom() - 18, 24, 15)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor("#1f7fbf"))
        painter.drawRoundedRect(tag, 4, 4)
        painter.setPen(QColor("white"))
        painter.drawText(tag, Qt.AlignmentFlag.AlignCenter, "GT")


def _font(painter: QPainter, delta: int, bold: bool = False) -> QFont:
    font = QFont(painter.font())
    size = QGuiApplication.font().pointSizeF()
    font.setPointSizeF(max(6.0, size + delta))
    font.setBold(bold)
    return font
