"""``Banner``: the main window's dismissible one-line message across its top (errors and notices)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget


class Banner(QFrame):
    """A dismissible one-line message across the top of the window (errors and notices)."""

    STYLES = {
        "error": "background:#fdecea; border:1px solid #f5c2c0; color:#8a1c1c;",
        "info": "background:#eaf2fd; border:1px solid #bcd4f5; color:#1c3f8a;",
    }

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.dismiss_button = QToolButton(self)
        self.dismiss_button.setText("✕")
        self.dismiss_button.setToolTip("Dismiss (Esc)")
        self.dismiss_button.setAutoRaise(True)
        self.dismiss_button.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 5, 6, 5)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.dismiss_button, 0, Qt.AlignmentFlag.AlignTop)
        self.kind = ""
        self.hide()

    def show_message(self, text: str, kind: str = "error") -> None:
        self.kind = kind
        self.setStyleSheet(f"Banner {{{self.STYLES[kind]} border-radius:4px;}} QLabel {{border:none;}}")
        self.label.setText(text)
        self.show()

    def clear(self) -> None:
        """Hide the message and forget it (a case or gallery change makes the one shown stale)."""
        self.kind = ""
        self.label.clear()
        self.hide()

    def text(self) -> str:
        return "" if self.isHidden() else self.label.text()
