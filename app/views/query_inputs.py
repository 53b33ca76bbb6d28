"""The query panel's input widgets: attribute chips, the granularity meter, the description editor, the
sketch/IR drop zones and the keep-rule control (``app.views.query_panel`` arranges them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QDragEnterEvent,
    QDropEvent,
    QFont,
    QImage,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPixmap,
)
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.state.engine_terms import LEVELS, ONTOLOGY
from app.state.image_files import QueryInputError, load_query_image
from app.state.query_spec import DEFAULT_RHO, RHO_RANGE, KeepRule
from app.state.suggestions import label, value_label
from app.views.sketch_canvas import IMAGE_FILTER
from app.workers import describe_error

#: (background, text/border) per ontology group.
GROUP_COLOURS: dict[str, tuple[str, str]] = {
    "global_biometrics": ("#eef2ff", "#4338ca"),
    "head": ("#f5f3ff", "#6d28d9"),
    "upper_body": ("#eff6ff", "#1d4ed8"),
    "lower_body": ("#ecfdf5", "#047857"),
    "footwear": ("#fffbeb", "#b45309"),
    "accessories": ("#fdf2f8", "#be185d"),
}
LEVEL_COLOURS: dict[str, str] = dict(zip(LEVELS, ("#93c5fd", "#60a5fa", "#3b82f6", "#2563eb", "#1e40af"),
                                         strict=True))

def section_title(text: str) -> QLabel:
    """A section's grey heading (styled by the panel's ``QLabel#sectionTitle`` rule)."""
    title = QLabel(text)
    title.setObjectName("sectionTitle")
    return title


KEEP_LABELS = {"rho": "Keep fraction ρ", "k": "Keep top k", "threshold": "Keep score ≥"}


def restyle(widget: QWidget) -> None:
    """Re-apply the style sheet after a dynamic property changed."""
    widget.style().unpolish(widget)
    widget.style().polish(widget)


# ============================================================================================ chips and meter


class AttributeChip(QLabel):
    """One parsed attribute, "key: value", coloured by its group; clicking selects its words in the text."""

    span_clicked = Signal(int, int)

    def __init__(self, key: str, value: str, span: dict | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.key, self.value = key, value
        self.plain_text = f"{label(key)}: {value_label(value)}"
        self.setText(f"{label(key)}: <b>{value_label(value)}</b>")
        group = ONTOLOGY.group_of(key)
        self.group = group
        background, foreground = GROUP_COLOURS.get(group, ("#f3f4f6", "#374151"))
        border = QColor(foreground)
        self.setStyleSheet(f"QLabel {{ background: {background}; color: {foreground}; border: 1px solid "
                           f"rgba({border.red()}, {border.green()}, {border.blue()}, 90); "
                           f"border-radius: 9px; padding: 2px 9px; }}")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.set_span(span)

    def set_span(self, span: dict | None) -> None:
        """Where the attribute was read (a parser span: start, end, text), for the tooltip and the click."""
        self.span = (span["start"], span["end"]) if span else None
        where = "the description"
        if span:
            where = f"“{span['text']}” (characters {span['start']}–{span['end']})"
        group = self.group.replace("_", " ")
        self.setToolTip(f"{self.key} = {self.value}\nRead from {where}\nGroup: {group}")

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        if event.button() == Qt.MouseButton.LeftButton and self.span is not None:
            self.span_clicked.emit(*self.span)


class LevelMeter(QWidget):
    """18 cells in five groups (UC … UF): stated attributes fill cells, the current level is highlighted."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._count = 0
        self._level: str | None = None
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMinimumWidth(160)

    @property
    def count(self) -> int:
        return self._count

    @property
    def level(self) -> str | None:
        return self._level

    def set_count(self, count: int) -> None:
        self._count = max(0, int(count))
        self._level = ONTOLOGY.level_of(self._count)
        self.setToolTip(self._tooltip())
        self.update()

    def _tooltip(self) -> str:
        lines = [f"{self._count} attribute{'s' if self._count != 1 else ''} stated"]
        for level in ONTOLOGY.levels:
            mark = "▸ " if level.name == self._level else "   "
            lines.append(f"{mark}{level.name} ({level.label}): {level.min}–{level.max}")
        return "\n".join(lines)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(300, 40)

    def cell_rects(self) -> list[tuple[str, QRect]]:
        """(level, rectangle) of each of the 18 cells."""
        total = ONTOLOGY.levels[-1].max
        gap, cell_gap = 8, 2
        width = self.width() - 1 - gap * (len(ONTOLOGY.levels) - 1)
        cell_width = (width - cell_gap * (total - len(ONTOLOGY.levels))) / total
        rects, x = [], 0.0
        for index, level in enumerate(ONTOLOGY.levels):
            if index:
                x += gap - cell_gap
            for _ in range(level.max - level.min + 1):
                rects.append((level.name, QRect(round(x), 2, max(2, round(cell_width)), 14)))
                x += cell_width + cell_gap
        return rects

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt API
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        cells = self.cell_rects()
        for index, (level, rect) in enumerate(cells):
            filled = index < self._count
            colour = QColor(LEVEL_COLOURS[level]) if filled else QColor("#e5e7eb")
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colour)
            painter.drawRoundedRect(rect, 2, 2)
        font = QFont(self.font())
        for level in ONTOLOGY.levels:
            group = [rect for name, rect in cells if name == level.name]
            span = QRect(group[0].left(), 19, group[-1].right() - group[0].left(), 18)
            current = level.name == self._level
            font.setBold(current)
            painter.setFont(font)
            painter.setPen(QColor(LEVEL_COLOURS[level.name]).darker(130) if current else QColor("#9ca3af"))
            painter.drawText(span, Qt.AlignmentFlag.AlignCenter, level.name)
            if current:
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(QColor(LEVEL_COLOURS[level.name]))
                painter.drawRoundedRect(QRect(span.left(), 37, span.width(), 3), 1, 1)
        painter.end()


# ============================================================================================ inputs


class QueryTextEdit(QPlainTextEdit):
    """The description box (plain text, a few lines): Enter asks to run the step (``submitted``), Shift+Enter
    starts a new line."""

    submitted = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt API
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            modifiers = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
            if modifiers == Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
                event.accept()
                return
            if modifiers == Qt.KeyboardModifier.NoModifier:
                self.submitted.emit()
                event.accept()
                return
        super().keyPressEvent(event)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(300, self.fontMetrics().lineSpacing() * 4 + 14)


class ImageDropZone(QFrame):
    """Drop an IR image file here or load one; shows a thumbnail. Unreadable files become ``error``."""

    image_changed = Signal(object)  # Path | None
    error = Signal(str)

    def __init__(self, what: str = "IR", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.what = what
        self._path: Path | None = None
        self._array: np.ndarray | None = None
        self.setObjectName("dropZone")
        self.setAcceptDrops(True)
        self.thumbnail = QLabel()
        self.thumbnail.setFixedSize(48, 96)
        self.thumbnail.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.thumbnail.setStyleSheet("QLabel { background: #e5e7eb; border-radius: 3px; color: #9ca3af; }")
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.load_button = QPushButton("Load…")
        self.clear_button = QPushButton("Clear")
        buttons = QHBoxLayout()
        buttons.setSpacing(6)
        buttons.addWidget(self.load_button)
        buttons.addWidget(self.clear_button)
        buttons.addStretch(1)
        text = QVBoxLayout()
        text.setSpacing(6)
        text.addWidget(self.caption)
        text.addStretch(1)
        text.addLayout(buttons)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 10)
        layout.setSpacing(10)
        layout.addWidget(self.thumbnail)
        layout.addLayout(text, 1)
        self.load_button.clicked.connect(self._choose)
        self.clear_button.clicked.connect(self.clear)
        self._refresh()

    @property
    def path(self) -> Path | None:
        return self._path

    @property
    def array(self) -> np.ndarray | None:
        """The image as RGB uint8 [H, W, 3], as the engine will read it."""
        return self._array

    def load(self, path: str | Path) -> bool:
        """Check that the file is a readable image and take it. False (and ``error``) otherwise."""
        path = Path(path)
        try:
            array = load_query_image(path, f"{self.what} image")
        except QueryInputError as exc:
            self.clear()  # never leave an older image in place of the one the analyst chose
            self.error.emit(describe_error(exc))
            return False
        self._path, self._array = path, array
        self._refresh()
        self.image_changed.emit(path)
        return True

    def clear(self) -> None:
        if self._path is None:
            return
        self._path = self._array = None
        self._refresh()
        self.image_changed.emit(None)

    def _refresh(self) -> None:
        if self._array is None:
            self.thumbnail.setPixmap(QPixmap())
            self.thumbnail.setText(self.what)
            self.caption.setText(f"<b>Drop an {self.what} image here</b><br>"
                                 f"<span style='color:#6b7280'>or load a PNG / JPG file</span>")
            self.clear_button.setEnabled(False)
            return
        array = np.ascontiguousarray(self._array)
        height, width = array.shape[:2]
        image = QImage(array.data, width, height, 3 * width, QImage.Format.Format_RGB888).copy()
        pixmap = QPixmap.fromImage(image).scaled(self.thumbnail.size(), Qt.AspectRatioMode.KeepAspectRatio,
                                                 Qt.TransformationMode.SmoothTransformation)
        self.thumbnail.setText("")
        self.thumbnail.setPixmap(pixmap)
        self.caption.setText(f"<b>{self._path.name}</b><br><span style='color:#6b7280'>{width} × {height} px"
                             f"</span>")
        self.caption.setToolTip(str(self._path))
        self.clear_button.setEnabled(True)

    def _choose(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, f"Load {self.what} image", "", IMAGE_FILTER)
        if path:
            self.load(path)

    @staticmethod
    def _local_file(event: QDragEnterEvent | QDropEvent) -> Path | None:
        urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
        files = [Path(url.toLocalFile()) for url in urls if url.isLocalFile()]
        return files[0] if files else None

    def _hover(self, on: bool) -> None:
        self.setProperty("hover", on)
        restyle(self)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt API
        if self._local_file(event) is not None:
            event.acceptProposedAction()
            self._hover(True)

    def dragLeaveEvent(self, event) -> None:  # noqa: N802 - Qt API
        self._hover(False)

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt API
        self._hover(False)
        path = self._local_file(event)
        if path is not None:
            event.acceptProposedAction()
            self.load(path)


class KeepControl(QWidget):
    """The keep rule: fraction ρ (0.05–1.0, default 0.5), top k, or a minimum score."""

    changed = Signal(object)  # KeepRule

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.mode = QComboBox()
        for kind, text in KEEP_LABELS.items():
            self.mode.addItem(text, kind)
        self.rho = QDoubleSpinBox()
        self.rho.setRange(*RHO_RANGE)
        self.rho.setSingleStep(0.05)
        self.rho.setDecimals(2)
        self.rho.setValue(DEFAULT_RHO)
        self.rho.setToolTip("Keep ⌈ρ·|C|⌉ of the |C| candidates")
        self.k = QSpinBox()
        self.k.setRange(1, 10_000_000)
        self.k.setValue(100)
        self.k.setGroupSeparatorShown(True)
        self.k.setToolTip("Keep the k best candidates")
        self.threshold = QDoubleSpinBox()
        self.threshold.setRange(-1.0, 1.0)
        self.threshold.setSingleStep(0.01)
        self.threshold.setDecimals(3)
        self.threshold.setValue(0.25)
        self.threshold.setToolTip("Keep candidates scoring at least this much (read it off the distribution)")
        self.stack = QStackedWidget()
        self.stack.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        for box in (self.rho, self.k, self.threshold):
            self.stack.addWidget(box)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(self.mode, 3)
        layout.addWidget(self.stack, 2)
        self.mode.currentIndexChanged.connect(self._mode_changed)
        for box in (self.rho, self.k, self.threshold):
            box.valueChanged.connect(lambda _value: self.changed.emit(self.rule()))

    def _mode_changed(self, index: int) -> None:
        self.stack.setCurrentIndex(index)
        self.changed.emit(self.rule())

    def rule(self) -> KeepRule:
        kind = self.mode.currentData()
        value = {"rho": self.rho.value(), "k": self.k.value(), "threshold": self.threshold.value()}[kind]
        return KeepRule(kind, value)

    def set_rule(self, rule: KeepRule) -> None:
        box = {"rho": self.rho, "k": self.k, "threshold": self.threshold}[rule.kind]
        box.setValue(rule.value)
        self.mode.setCurrentIndex(self.mode.findData(rule.kind))


# ============================================================================================ the panel
