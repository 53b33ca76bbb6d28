"""How one result is painted in the grid: a card with the thumbnail (letterboxed), the mark frame and badge,
the rank, the ground-truth tag, the score, camera and time; items the step did not keep are faded."""

from __future__ import annotations

from typing import NamedTuple

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPoint, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QGuiApplication, QPainter, QPalette, QPen
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from app.state.engine_terms import screen_time_short as format_time_short
from app.views.results_model import CONFIRMED, MARK_COLORS, REJECTED, ResultsModel, format_score

THUMB = QSize(80, 160)
PAD = 6
LINE = 15
CELL = QSize(THUMB.width() + 2 * PAD + 8, THUMB.height() + 2 * PAD + 3 * LINE + 4)
THUMB_BACKGROUND = QColor("#262a31")
PENDING_TEXT_COLOR = QColor("#8b929c")  # "…" while a thumbnail loads, "no crop" when it cannot
REJECTED_SHADE = QColor(20, 20, 20, 110)


class ResultDelegate(QStyledItemDelegate):
    """A card per result: thumbnail (letterboxed), mark frame and badge, rank, score, camera, time."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        return QSize(CELL)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        model = index.model()
        if not isinstance(model, ResultsModel) or not 0 <= index.row() < model.rowCount():
            return
        card_data = model.card(index.row())
        fonts = _fonts(painter)
        palette = option.palette
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        focused = bool(option.state & QStyle.StateFlag.State_HasFocus)
        mark = card_data.mark
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if not card_data.kept and not selected:
            painter.setOpacity(0.45)
        card = QRect(option.rect).adjusted(2, 2, -2, -2)
        background = QColor(palette.color(QPalette.ColorRole.Highlight)) if selected else palette.color(
            QPalette.ColorRole.AlternateBase)
        if selected:
            background.setAlpha(55)
        if selected or focused:
            painter.setPen(QPen(palette.color(QPalette.ColorRole.Highlight), 2 if selected else 1))
        else:
            painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(background)
        painter.drawRoundedRect(card, 6, 6)

        box = QRect(card.left() + (card.width() - THUMB.width()) // 2, card.top() + PAD, THUMB.width(),
                    THUMB.height())
        painter.fillRect(box, THUMB_BACKGROUND)
        pixmap = card_data.thumbnail
        if pixmap is not None and not pixmap.isNull():
            x = box.left() + (box.width() - pixmap.width()) // 2
            y = box.top() + (box.height() - pixmap.height()) // 2
            painter.drawPixmap(x, y, pixmap)
        else:
            painter.setPen(PENDING_TEXT_COLOR)
            painter.setFont(fonts.small)
            painter.drawText(box, Qt.AlignmentFlag.AlignCenter, "no crop" if card_data.thumbnail_failed else "…")
        if mark == REJECTED:
            painter.fillRect(box, REJECTED_SHADE)
        if mark in MARK_COLORS:
            pen = QPen(MARK_COLORS[mark], 3)
            pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
            painter.drawRect(box.adjusted(1, 1, -2, -2))  # crisp 3 px frame on the thumbnail's edge
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            self._badge(painter, box, mark)
        self._rank(painter, box, card_data.rank, fonts.tag)
        if card_data.relevant:
            self._truth(painter, box, fonts.tag)

        text_color = palette.color(QPalette.ColorRole.Text)
        muted = QColor(text_color)
        muted.setAlpha(165)
        left, width = card.left() + 5, card.width() - 10
        top = box.bottom() + 5
        painter.setFont(fonts.bold)
        painter.setPen(text_color)
        painter.drawText(QRect(left, top, width, LINE), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                         format_score(card_data.score))
        painter.setFont(fonts.small)
        painter.setPen(muted)
        camera = card_data.camera or "—"
        when = format_time_short(card_data.time)
        for line, text in enumerate((camera, when), start=1):
            painter.drawText(QRect(left, top + line * LINE, width, LINE),
                             Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                             fonts.small_metrics.elidedText(text, Qt.TextElideMode.ElideMiddle, width))
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
    def _rank(painter: QPainter, box: QRect, rank: int | None, font: QFont) -> None:
        if rank is None:
            return
        painter.setFont(font)
        text = f"#{rank}"
        width = painter.fontMetrics().horizontalAdvance(text) + 8
        tag = QRect(box.left() + 3, box.top() + 4, width, 15)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(0, 0, 0, 150))
        painter.drawRoundedRect(tag, 4, 4)
        painter.setPen(QColor("white"))
        painter.drawText(tag, Qt.AlignmentFlag.AlignCenter, text)

    @staticmethod
    def _truth(painter: QPainter, box: QRect, font: QFont) -> None:
        painter.setFont(font)
        tag = QRect(box.left() + 3, box.bottom() - 18, 24, 15)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor("#1f7fbf"))
        painter.drawRoundedRect(tag, 4, 4)
        painter.setPen(QColor("white"))
        painter.drawText(tag, Qt.AlignmentFlag.AlignCenter, "GT")


class _Fonts(NamedTuple):
    bold: QFont
    small: QFont
    small_metrics: QFontMetrics
    tag: QFont


_FONTS: dict[tuple[str, float], _Fonts] = {}


def _fonts(painter: QPainter) -> _Fonts:
    """The card's fonts for the painter's font family and the application's point size (made once)."""
    base = painter.font()
    size = QGuiApplication.font().pointSizeF()
    key = (base.toString(), size)
    fonts = _FONTS.get(key)
    if fonts is None:
        small = _font(base, size, -1)
        fonts = _FONTS[key] = _Fonts(_font(base, size, 0, bold=True), small, QFontMetrics(small),
                                     _font(base, size, -2, bold=True))
    return fonts


def _font(base: QFont, size: float, delta: int, bold: bool = False) -> QFont:
    font = QFont(base)
    font.setPointSizeF(max(6.0, size + delta))
    font.setBold(bold)
    return font
