"""The detail pane's small widgets: a picture scaled to fit (or a note in its place), a one-line label that
elides in the middle, and a hash written in groups that wrap (``app.views.detail`` lays them out)."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ImageView(QWidget):
    """An image scaled to fit (aspect kept, never enlarged beyond ``max_zoom``), or a centred note."""

    def __init__(self, note: str, parent: QWidget | None = None, max_zoom: float = 4.0) -> None:
        super().__init__(parent)
        self._image: QImage | None = None
        self._note = note
        self._max_zoom = max_zoom
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def set_image(self, image: QImage | None, note: str = "") -> None:
        self._image = image
        self._note = note
        self.update()

    def image(self) -> QImage | None:
        return self._image

    def note(self) -> str:
        return self._note

    def sizeHint(self) -> QSize:
        return QSize(240, 240)

    def paintEvent(self, _event) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), QColor("#262a31"))
        if self._image is None or self._image.isNull():
            painter.setPen(QColor("#9aa1ab"))
            painter.drawText(self.rect().adjusted(12, 12, -12, -12),
                             Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self._note)
            return
        size = self._image.size()
        factor = min(self.width() / size.width(), self.height() / size.height(), self._max_zoom)
        width, height = max(1, int(size.width() * factor)), max(1, int(size.height() * factor))
        target = QRect((self.width() - width) // 2, (self.height() - height) // 2, width, height)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, factor < 1.5)
        painter.drawImage(target, self._image)


class ElidedLabel(QLabel):
    """A one-line label that elides its text in the middle to fit; the full text is its tooltip."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def set_full_text(self, text: str) -> None:
        self._full = text
        self.setToolTip(text if text not in ("", "—") else "")
        self._elide()

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name: every caller gets the eliding
        self.set_full_text(text)

    def full_text(self) -> str:
        return self._full

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        QLabel.setText(self, self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideMiddle,
                                                           max(40, self.width())))


HASH_GROUP = 8


def split_hash(digest: str) -> str:
    """A 64-digit hash in groups of eight that wrap to the pane's width (copying keeps every digit)."""
    if len(digest) != 64:
        return digest
    return " ".join(digest[i:i + HASH_GROUP] for i in range(0, 64, HASH_GROUP))


