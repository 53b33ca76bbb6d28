"""The case's notes, newest last, each with its time and what it is about (a step, an item named by camera and
time, its id in the tooltip); "Add note…" asks for a new one (``add_requested``), "Edit note…" or a double
click edits the selected one (``edit_requested(note id)``). Feed it with ``set_case``.

``NoteEditor`` (``ask_note``) is the note entry: a wrapping multi-line editor, Ctrl+Enter saves, Esc cancels."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.state.item_label import short_id
from app.store import CaseState, NoteState

NOTE_ID_ROLE = Qt.ItemDataRole.UserRole + 1
NOTE_TEXT_ROLE = Qt.ItemDataRole.UserRole + 2
SAVE_KEYS = "Ctrl+Enter"


class _NoteText(QPlainTextEdit):
    """The note's text: wraps at the editor's width; Ctrl+Enter submits instead of breaking the line."""

    submitted = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt API
        if (event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
                and event.modifiers() & Qt.KeyboardModifier.ControlModifier):
            event.accept()
            self.submitted.emit()
            return
        super().keyPressEvent(event)


class NoteEditor(QDialog):
    """A note's text in a wrapping multi-line editor. ``Ctrl+Enter`` (or Save) accepts, ``Esc`` (or Cancel)
    rejects; Save is offered only while there is some text. ``text()`` is the text as typed, stripped."""

    def __init__(self, title: str, prompt: str, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.prompt = QLabel(prompt, self)
        self.prompt.setWordWrap(True)
        self.editor = _NoteText(self)
        self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.editor.setTabChangesFocus(True)
        self.editor.setPlainText(text)
        self.editor.moveCursor(self.editor.textCursor().MoveOperation.End)
        self.editor.setPlaceholderText("What you saw, decided or still have to check")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel,
                                        self)
        self.save_button = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        self.save_button.setToolTip(f"Save the note ({SAVE_KEYS}); Esc cancels")
        hint = QLabel(f"{SAVE_KEYS} saves · Esc cancels", self)
        hint.setStyleSheet("color: #6b7280;")
        self.buttons.accepted.connect(self._submit)
        self.buttons.rejected.connect(self.reject)
        self.editor.submitted.connect(self._submit)
        self.editor.textChanged.connect(self._refresh)
        row = QHBoxLayout()
        row.addWidget(hint, 1)
        row.addWidget(self.buttons)
        layout = QVBoxLayout(self)
        layout.addWidget(self.prompt)
        layout.addWidget(self.editor, 1)
        layout.addLayout(row)
        self.resize(520, 300)
        self.editor.setFocus()
        self._refresh()

    def text(self) -> str:
        return self.editor.toPlainText().strip()

    def _refresh(self) -> None:
        self.save_button.setEnabled(bool(self.text()))

    def _submit(self) -> None:
        if self.text():
            self.accept()


def ask_note(parent: QWidget | None, title: str, prompt: str, text: str = "") -> str | None:
    """The text typed in a ``NoteEditor`` (stripped, never empty), or None when cancelled."""
    dialog = NoteEditor(title, prompt, text, parent)
    return dialog.text() if dialog.exec() == QDialog.DialogCode.Accepted else None


class NotesPanel(QWidget):
    """See the module docstring. ``step_label(step id) -> str`` names steps as the timeline does;
    ``item_label(item id) -> str`` names items (``app.state.item_label``)."""

    add_requested = Signal()
    edit_requested = Signal(int)  # the note's id

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
        self.edit_button = QPushButton("Edit note…", self)
        self.edit_button.setToolTip("Change the selected note's text (or double-click it); the earlier text stays "
                                    "in the case's audit trail")
        self.edit_button.clicked.connect(self._edit_selected)
        self.list.itemDoubleClicked.connect(lambda item: self.edit_requested.emit(item.data(NOTE_ID_ROLE)))
        self.list.currentItemChanged.connect(self._refresh)
        row = QHBoxLayout()
        row.setContentsMargins(8, 6, 8, 4)
        row.addStretch(1)
        row.addWidget(self.edit_button)
        row.addWidget(self.add_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(row)
        layout.addWidget(self.empty_hint)
        layout.addWidget(self.list, 1)
        self._case: CaseState | None = None
        self.set_case(None)

    def set_case(self, case: CaseState | None, step_label: Callable[[int], str] | None = None,
                 item_label: Callable[[str], str] | None = None) -> None:
        self._case = case
        self.list.clear()
        notes = () if case is None else case.notes
        for note in notes:
            item = QListWidgetItem(f"{self._head(note, step_label, item_label)}\n{note.text}")
            item.setData(NOTE_ID_ROLE, note.id)
            item.setData(NOTE_TEXT_ROLE, note.text)
            tip = note.text if note.item_id is None else f"{note.text}\n\nItem {note.item_id}"
            item.setToolTip(tip)
            self.list.addItem(item)
        if notes:
            self.list.scrollToBottom()
        self.empty_hint.setVisible(not notes)
        self.add_button.setEnabled(case is not None)
        self._refresh()

    @staticmethod
    def _head(note: NoteState, step_label: Callable[[int], str] | None,
              item_label: Callable[[str], str] | None) -> str:
        about = []
        if note.step_id is not None:
            about.append(f"step {step_label(note.step_id) if step_label else note.step_id}")
        if note.item_id is not None:
            about.append(f"item {(item_label or short_id)(note.item_id)}")
        when = note.at.astimezone().strftime("%Y-%m-%d %H:%M")
        if note.edited_at is not None:
            when += f" (edited {note.edited_at.astimezone().strftime('%Y-%m-%d %H:%M')})"
        return when + (f" · {', '.join(about)}" if about else "")

    def note(self, note_id: int) -> NoteState | None:
        """The shown case's note ``note_id`` (None when it has none)."""
        notes = () if self._case is None else self._case.notes
        return next((note for note in notes if note.id == note_id), None)

    def selected_note_id(self) -> int | None:
        item = self.list.currentItem()
        return None if item is None else item.data(NOTE_ID_ROLE)

    def select_note(self, note_id: int) -> bool:
        for row in range(self.list.count()):
            if self.list.item(row).data(NOTE_ID_ROLE) == note_id:
                self.list.setCurrentRow(row)
                return True
        return False

    def texts(self) -> list[str]:
        return [self.list.item(row).data(NOTE_TEXT_ROLE) for row in range(self.list.count())]

    def heads(self) -> list[str]:
        """Each note's first line (time, step, item), as shown."""
        return [self.list.item(row).text().split("\n", 1)[0] for row in range(self.list.count())]

    def _edit_selected(self) -> None:
        note_id = self.selected_note_id()
        if note_id is not None:
            self.edit_requested.emit(note_id)

    def _refresh(self, *_args) -> None:
        self.edit_button.setEnabled(self._case is not None and self.selected_note_id() is not None)
