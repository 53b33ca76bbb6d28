"""The query panel's description: the editor, a chip per stated attribute, the granularity meter and the "add
next" suggestions.

Text is parsed on every edit (``app.state.query_reading.read_description``, well under a millisecond): each
stated attribute becomes a chip coloured by its ontology group, the count fills the 18-cell meter
(docs/methods.md §1.1: UC 1–5, C 6–8, M 9–11, F 12–14, UF 15–18) and the attributes not yet stated become
suggestions whose values append a sentence the parser reads back. ``parsed(ParseResult)`` follows every edit.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QTextCursor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMenu, QToolButton, QVBoxLayout, QWidget

from app.state.engine_terms import ONTOLOGY, level_label
from app.state.query_reading import ParseResult, read_description
from app.state.suggestions import append_sentence, label, suggestion_sentence, value_label
from app.views.flow_layout import FlowLayout
from app.views.query_inputs import LEVEL_COLOURS, AttributeChip, LevelMeter, QueryTextEdit, section_title

VISIBLE_SUGGESTIONS = 5


class DescriptionSection(QWidget):
    """See the module docstring. Public parts: ``text_edit``, ``chips``, ``no_attributes``, ``level_summary``,
    ``meter``, ``suggestions``."""

    parsed = Signal(object)  # ParseResult of the text, on every edit

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._parse = read_description("")
        self._shown_attributes: tuple[tuple[str, str], ...] | None = None
        self.text_edit = QueryTextEdit()
        self.text_edit.setPlaceholderText("Describe the person, e.g. “a tall woman in a red jacket, blue "
                                          "jeans and white sneakers, carrying a black backpack”")
        self.text_edit.setTabChangesFocus(True)
        self.chips = FlowLayout(spacing=5)
        chips_box = QWidget()
        chips_box.setLayout(self.chips)
        self.no_attributes = QLabel("No attributes recognised yet")
        self.no_attributes.setStyleSheet("color: #9ca3af;")
        self.level_summary = QLabel()
        self.meter = LevelMeter()
        self.suggestions = FlowLayout(spacing=5)
        suggestions_box = QWidget()
        suggestions_box.setLayout(self.suggestions)
        level_row = QHBoxLayout()
        level_row.addWidget(section_title("Granularity"))
        level_row.addStretch(1)
        level_row.addWidget(self.level_summary)
        text_layout = QVBoxLayout(self)
        text_layout.setContentsMargins(0, 0, 0, 0)
        text_layout.setSpacing(6)
        text_layout.addWidget(self.text_edit)
        text_layout.addWidget(self.no_attributes)
        text_layout.addWidget(chips_box)
        text_layout.addSpacing(2)
        text_layout.addLayout(level_row)
        text_layout.addWidget(self.meter)
        text_layout.addWidget(section_title("Add next"))
        text_layout.addWidget(suggestions_box)

        self.text_edit.textChanged.connect(self._text_changed)
        self._text_changed()

    def text(self) -> str:
        return self.text_edit.toPlainText()

    def set_text(self, text: str) -> None:
        self.text_edit.setPlainText(text)
        self.text_edit.moveCursor(QTextCursor.MoveOperation.End)

    @property
    def parse_result(self) -> ParseResult:
        return self._parse

    def chip_widgets(self) -> list[AttributeChip]:
        return [w for w in self.chips.widgets() if isinstance(w, AttributeChip)]

    def suggestion_buttons(self) -> list[QToolButton]:
        return [w for w in self.suggestions.widgets() if isinstance(w, QToolButton)]

    def _text_changed(self) -> None:
        self._parse = result = read_description(self.text())
        spans = {span["attribute"]: span for span in result.spans}
        attributes = tuple(result.attributes.items())
        if attributes == self._shown_attributes:  # most keystrokes: only the words' positions moved
            for chip in self.chip_widgets():
                chip.set_span(spans.get(chip.key))
            self.parsed.emit(result)
            return
        self._shown_attributes = attributes
        self.chips.clear()
        for key, value in result.attributes.items():
            chip = AttributeChip(key, value, spans.get(key))
            chip.span_clicked.connect(self.select_span)
            self.chips.addWidget(chip)
        self.no_attributes.setVisible(not result.attributes)
        self.meter.set_count(result.count)
        if result.level is None:
            self.level_summary.setText("<span style='color:#9ca3af'>no level yet</span>")
        else:
            label_text = level_label(result.level)
            noun = "attribute" if result.count == 1 else "attributes"
            colour = QColor(LEVEL_COLOURS[result.level]).darker(160).name()
            self.level_summary.setText(f"{result.count} {noun} · "
                                       f"<b style='color:{colour}'>{result.level}</b> {label_text}")
        self._refresh_suggestions(result)
        self.parsed.emit(result)

    def _refresh_suggestions(self, result: ParseResult) -> None:
        self.suggestions.clear()
        shown, more = result.missing[:VISIBLE_SUGGESTIONS], result.missing[VISIBLE_SUGGESTIONS:]
        for key in shown:
            button = self._suggestion_button(f"+ {label(key)}", self._values_menu(key, result))
            values = ", ".join(value_label(v) for v in ONTOLOGY.attributes[key])
            button.setToolTip(f"Add {label(key)}: {values}")
            button.setProperty("key", key)
            self.suggestions.addWidget(button)
        if more:
            menu = QMenu(self)
            for key in more:
                sub = self._values_menu(key, result, menu)
                sub.setTitle(label(key))
                menu.addMenu(sub)
            button = self._suggestion_button(f"{len(more)} more…", menu)
            button.setToolTip("Other attributes the description does not state yet")
            self.suggestions.addWidget(button)

    def _suggestion_button(self, text: str, menu: QMenu) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setProperty("suggestion", True)
        button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        button.setMenu(menu)
        button.setCursor(Qt.CursorShape.PointingHandCursor)
        menu.setParent(button, menu.windowFlags())
        return button

    def _values_menu(self, key: str, result: ParseResult, parent: QWidget | None = None) -> QMenu:
        menu = QMenu(parent or self)
        for value in ONTOLOGY.attributes[key]:
            action = menu.addAction(value_label(value))
            action.setData((key, value))
            action.setToolTip(suggestion_sentence(key, value, result.attributes))
            action.triggered.connect(
                lambda _checked=False, key=key, value=value: self.add_attribute(key, value))
        return menu

    def add_attribute(self, key: str, value: str) -> None:
        """Append a sentence stating ``key = value`` and put the cursor after it."""
        sentence = suggestion_sentence(key, value, self._parse.attributes)
        self.set_text(append_sentence(self.text(), sentence))
        self.text_edit.setFocus()

    def select_span(self, start: int, end: int) -> None:
        cursor = self.text_edit.textCursor()
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        self.text_edit.setTextCursor(cursor)
        self.text_edit.setFocus()
