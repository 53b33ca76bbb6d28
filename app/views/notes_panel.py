"""The case's notes, newest last, each with its time and what it is about (an item, a step); "Add note…" asks
for a new one (``add_requested``). Feed it with ``set_case``."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QPushButton, QVBoxLayout, QWidget

from app.store import CaseState


class NotesPanel(QWidget):
    """See the module docstring. ``step_label(step id) -> str`` names steps as the timeline does."""

    add_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.list = QListWidget(self)
        self.list.setWordWrap(True)
        self.list.setAlternatingRowColors(True)
        self.list.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.empty_hint = QLabel("No notes yet. Notes are kept with the case and printed in its report.", self)
        self.empty_hint.setWordWrap(True)
        self.empty_hint.setStyleSheet("color: #9ca3af; padding: 4px 12px;")
        self.add_button = QPushButton("Add note…", self)
        self.add_button.clicked.connect(self.add_requested)
        row = QHBoxLayout()
        row.setContentsMargins(8, 6, 8, 4)
        row.addStretch(1)
        row.addWidget(self.add_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(row)
        layout.addWidget(self.empty_hint)
        layout.addWidget(self.list, 1)
        self.set_case(None)

    def set_case(self, case: CaseState | None, step_label: Callable[[int], str] | None = None) -> None:
        self.list.clear()
        notes = () if case is None else case.notes
        for note in notes:
            about = []
            if note.step_id is not None:
                about.append(f"step {step_label(note.step_id) if step_label else note.step_id}")
            if note.item_id is not None:
                about.append(f"item {note.item_id}")
            when = note.at.astimezone().strftime("%Y-%m-%d %H:%M")
            head = when + (f" · {', '.join(about)}" if about else "")
            item = QListWidgetItem(f"{head}\n{note.text}")
            item.setToolTip(note.text)
            self.list.addItem(item)
        if notes:
            self.list.scrollToBottom()
        self.empty_hint.setVisible(not notes)
        self.add_button.setEnabled(case is not None)

    def texts(self) -> list[str]:
        return [self.list.item(row).text().split("\n", 1)[1] for row in range(self.list.count())]
