"""The question to ask the witness next, under the query box: the sentence ("Was the top red, blue or black? —
41 % / 32 % / 18 % of the 210 candidates"), one button per offered value and "Don't know", and beside the title
how the witness saw the person ("Seen: normally / at night / from far", the witness prior's conditions), which
re-ranks the questions (docs/methods.md §10).

The bar shows what ``app.state.witness_questions`` offers and emits intents: ``answered(key, value)``,
``unknown(key)`` and ``condition_chosen(name)``; it hides itself when there is no question. Questions after a
step that is not the head are shown read-only: the answers disabled, with a note saying where the next search
continues from.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.state.suggestions import value_label
from app.views.flow_layout import FlowLayout

_STYLE = """
QFrame#witnessQuestion { background: #f0f9ff; border: 1px solid #bae6fd; border-radius: 6px; }
QFrame#witnessQuestion QLabel#questionTitle { color: #0369a1; font-weight: 600; }
QFrame#witnessQuestion QPushButton { padding: 3px 9px; }
QFrame#witnessQuestion QLabel#questionNote { color: #475569; font-style: italic; }
"""


class QuestionBar(QFrame):
    """See the module docstring. Public parts: ``title``, ``seen`` (the viewing condition's combo: label shown,
    name as item data), ``sentence``, ``note``, ``answer_buttons`` (value → button), ``dont_know_button``."""

    answered = Signal(str, str)  # key, value
    unknown = Signal(str)  # key
    condition_chosen = Signal(str)  # a viewing condition's name (``engine.kernel.witness_prior``)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("witnessQuestion")
        self.setStyleSheet(_STYLE)
        self.title = QLabel("Ask the witness")
        self.title.setObjectName("questionTitle")
        self.seen = QComboBox()
        self.seen.setToolTip("How the witness saw the person: the questions are ranked by what such a witness can "
                             "tell (the case keeps it for its next steps)")
        self.seen.activated.connect(lambda index: self.condition_chosen.emit(self.seen.itemData(index)))
        header = QHBoxLayout()
        header.setContentsMargins(0, 0, 0, 0)
        header.addWidget(self.title, 1)
        header.addWidget(QLabel("Seen:"))
        header.addWidget(self.seen)
        self.sentence = QLabel()
        self.sentence.setWordWrap(True)
        self.note = QLabel()
        self.note.setObjectName("questionNote")
        self.note.setWordWrap(True)
        self.note.hide()
        self.buttons = FlowLayout(spacing=5)
        buttons_box = QWidget()
        buttons_box.setLayout(self.buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(4)
        layout.addLayout(header)
        layout.addWidget(self.sentence)
        layout.addWidget(self.note)
        layout.addWidget(buttons_box)
        self.answer_buttons: dict[str, QPushButton] = {}
        self.dont_know_button: QPushButton | None = None
        self.key: str | None = None
        self.hide()

    def set_conditions(self, choices: Sequence[tuple[str, str]], current: str) -> None:
        """The viewing conditions to choose from, (name, label) each, with ``current`` chosen."""
        if [(self.seen.itemData(i), self.seen.itemText(i)) for i in range(self.seen.count())] != list(choices):
            self.seen.clear()
            for name, label in choices:
                self.seen.addItem(label, name)
        self.seen.setCurrentIndex(max(0, self.seen.findData(current)))

    def show_question(self, key: str | None, sentence: str, values: Sequence[str], note: str = "") -> None:
        """Show the question about ``key`` with one button per value (None: no question, the bar hides); with a
        ``note`` the question is shown read-only (the answers disabled, the note under it)."""
        self.buttons.clear()
        self.answer_buttons, self.dont_know_button, self.key = {}, None, key
        if key is None:
            self.hide()
            return
        self.sentence.setText(sentence)
        self.note.setText(note)
        self.note.setVisible(bool(note))
        for value in values:
            button = QPushButton(value_label(value))
            button.setToolTip(f"The witness says {value_label(value)}: add it to the description and search")
            button.clicked.connect(lambda _=False, value=value: self.answered.emit(key, value))
            button.setEnabled(not note)
            self.buttons.addWidget(button)
            self.answer_buttons[value] = button
        if note:
            self.show()
            return
        self.dont_know_button = QPushButton("Don't know")
        self.dont_know_button.setToolTip("The witness does not know: do not ask this again on this branch")
        self.dont_know_button.clicked.connect(lambda: self.unknown.emit(key))
        self.buttons.addWidget(self.dont_know_button)
        self.show()
