"""The question to ask the witness next, under the query box: the sentence ("Was the top red, blue or black? —
41 % / 32 % / 18 % of the 210 candidates"), one button per offered value and "Don't know" (docs/methods.md §10).

The bar shows what ``app.state.witness_questions`` offers and emits intents: ``answered(key, value)`` and
``unknown(key)``; it hides itself when there is no question.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QLabel, QPushButton, QVBoxLayout, QWidget

from app.state.suggestions import value_label
from app.views.flow_layout import FlowLayout

_STYLE = """
QFrame#witnessQuestion { background: #f0f9ff; border: 1px solid #bae6fd; border-radius: 6px; }
QFrame#witnessQuestion QLabel#questionTitle { color: #0369a1; font-weight: 600; }
QFrame#witnessQuestion QPushButton { padding: 3px 9px; }
"""


class QuestionBar(QFrame):
    """See the module docstring. Public parts: ``title``, ``sentence``, ``answer_buttons`` (value → button),
    ``dont_know_button``."""

    answered = Signal(str, str)  # key, value
    unknown = Signal(str)  # key

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("witnessQuestion")
        self.setStyleSheet(_STYLE)
        self.title = QLabel("Ask the witness")
        self.title.setObjectName("questionTitle")
        self.sentence = QLabel()
        self.sentence.setWordWrap(True)
        self.buttons = FlowLayout(spacing=5)
        buttons_box = QWidget()
        buttons_box.setLayout(self.buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(4)
        layout.addWidget(self.title)
        layout.addWidget(self.sentence)
        layout.addWidget(buttons_box)
        self.answer_buttons: dict[str, QPushButton] = {}
        self.dont_know_button: QPushButton | None = None
        self.key: str | None = None
        self.hide()

    def show_question(self, key: str | None, sentence: str, values: Sequence[str]) -> None:
        """Show the question about ``key`` with one button per value (None: no question, the bar hides)."""
        self.buttons.clear()
        self.answer_buttons, self.dont_know_button, self.key = {}, None, key
        if key is None:
            self.hide()
            return
        self.sentence.setText(sentence)
        for value in values:
            button = QPushButton(value_label(value))
            button.setToolTip(f"The witness says {value_label(value)}: add it to the description and search")
            button.clicked.connect(lambda _=False, value=value: self.answered.emit(key, value))
            self.buttons.addWidget(button)
            self.answer_buttons[value] = button
        self.dont_know_button = QPushButton("Don't know")
        self.dont_know_button.setToolTip("The witness does not know: do not ask this again on this branch")
        self.dont_know_button.clicked.connect(lambda: self.unknown.emit(key))
        self.buttons.addWidget(self.dont_know_button)
        self.show()
