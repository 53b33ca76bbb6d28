"""The query panel: describe the person (text with live attribute chips, a granularity meter and "add next"
suggestions: ``app.views.query_description``), draw a sketch, drop an IR image, choose the level and the keep
rule, and ask for a search.

The panel only reports: ``search_requested(QuerySpec)`` on Search,
Enter in the description (Shift+Enter: a new line) or Ctrl+Enter, ``cancel_requested()`` while busy;
``app.state.AppState.search`` runs it. A description with no recognised attribute, or longer than the model's
context, is held with a warning and a "Run anyway" choice. Level, keep rule and the Search button sit below the
scrolling inputs, so they never scroll out of view. A score threshold read off one kind of step is held the same
way before a step of another score scale. The input widgets themselves live in ``app.views.query_inputs``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import (
    QAction,
    QFont,
    QKeySequence,
)
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.jobs import SearchStepJob
from app.state.engine_terms import LEVELS, ONTOLOGY, QUERY_CONTROLS
from app.state.query_reading import (  # noqa: F401 - which view a query ranks by, importable from here
    ParseResult,
    QueryInputError,
    build_spec,
    query_warnings,
    read_description,
    score_scale,
    spec_view,
)
from app.state.query_spec import KeepRule, QuerySpec
from app.state.working_state import QueryInputs
from app.views.query_description import DescriptionSection
from app.views.query_inputs import AttributeChip, ImageDropZone, KeepControl, restyle, section_title
from app.views.sketch_canvas import SketchEditor
from app.views.witness_question import QuestionBar

ACCENT = "#2563eb"
MODALITIES = tuple(m.name for m in QUERY_CONTROLS)
MODALITY_LABELS = {m.name: m.control for m in QUERY_CONTROLS}
RUN_KEYS = "Enter in the description, or Ctrl+Enter anywhere; Shift+Enter starts a new line"

_PANEL_STYLE = f"""
QToolButton[modality="true"] {{
    border: 1px solid #c5cad3; border-radius: 11px; padding: 2px 12px; background: #f6f7f9; color: #374151;
}}
QToolButton[modality="true"]:checked {{ background: {ACCENT}; border-color: {ACCENT}; color: white; }}
QToolButton[suggestion="true"] {{
    border: 1px dashed #aab1bd; border-radius: 9px; padding: 2px 9px; color: #374151; background: transparent;
}}
QToolButton[suggestion="true"]:hover {{ border-color: {ACCENT}; color: {ACCENT}; }}
QToolButton[suggestion="true"]::menu-indicator {{ image: none; width: 0px; }}
QPushButton#searchButton {{
    background: {ACCENT}; color: white; border: none; border-radius: 5px; padding: 7px 12px; font-weight: 600;
}}
QPushButton#searchButton:hover {{ background: #1d4ed8; }}
QPushButton#searchButton:disabled {{ background: #a8bdf0; }}
QPushButton#searchButton[busy="true"] {{ background: #6b7280; }}
QLabel#sectionTitle {{ color: #6b7280; font-weight: 600; }}
QLabel#message {{ color: #b91c1c; }}
QFrame#warningBox {{ background: #fff7e6; border: 1px solid #f3c969; border-radius: 5px; }}
QLabel#warning {{ color: #7a4b00; }}
QFrame#dropZone {{ border: 1px dashed #aab1bd; border-radius: 6px; background: #fafbfc; }}
QFrame#dropZone[hover="true"] {{ border-color: {ACCENT}; background: #eff6ff; }}
"""


def _error_label() -> QLabel:
    """A red line under an input that says what is wrong with it (hidden while there is nothing to say)."""
    label = QLabel()
    label.setObjectName("message")
    label.setWordWrap(True)
    label.hide()
    return label



def _image_section(title: str, editor: QWidget, error: QLabel, stretch: int = 0) -> QWidget:
    """A titled query image input (sketch or IR) with its inline error line under it."""
    section = QWidget()
    layout = QVBoxLayout(section)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(4)
    layout.addWidget(section_title(title))
    layout.addWidget(editor, stretch)
    layout.addWidget(error)
    return section


#: The one job the button's "Cancel search" names.
SEARCH_JOB = SearchStepJob.name


class QueryPanel(QWidget):
    """See the module docstring. Public parts: ``text_edit``, ``sketch`` (``SketchEditor``), ``ir_zone``,
    ``level_box``, ``keep``, ``search_button``, ``search_action`` (Ctrl+Enter), ``footer`` (always in view)."""

    search_requested = Signal(object)  # QuerySpec
    cancel_requested = Signal()
    parsed = Signal(object)  # ParseResult of the text, on every edit
    inputs_changed = Signal()  # modalities, sketch, IR image, level or keep rule edited (``query_inputs``)
    error = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setStyleSheet(_PANEL_STYLE)
        self._parse = read_description("")
        self._shown_attributes: tuple[tuple[str, str], ...] | None = None
        self._busy = False
        self._available, self._unavailable_reason = True, ""
        self._token_counter: Callable[[str], tuple[int, int]] | None = None
        self._previous_view: str | None = None  # the view the step this one continues from ranked by

        self.modality_buttons: dict[str, QToolButton] = {}
        toggles = QHBoxLayout()
        toggles.setSpacing(4)
        title = QLabel("Query")
        title_font = QFont(title.font())
        title_font.setPointSizeF(title_font.pointSizeF() * 1.15)
        title_font.setBold(True)
        title.setFont(title_font)
        toggles.addWidget(title)
        toggles.addStretch(1)
        for name in MODALITIES:
            button = QToolButton()
            button.setText(MODALITY_LABELS[name])
            button.setCheckable(True)
            button.setProperty("modality", True)
            button.setToolTip(f"Use the {MODALITY_LABELS[name].lower()} in the query")
            self.modality_buttons[name] = button
            toggles.addWidget(button)

        # the description, with its chips, meter and suggestions
        self.description = DescriptionSection()
        self.text_section = self.description
        self.text_edit = self.description.text_edit
        self.chips, self.suggestions = self.description.chips, self.description.suggestions
        self.meter, self.level_summary = self.description.meter, self.description.level_summary
        self.no_attributes = self.description.no_attributes
        self.question_bar = QuestionBar()  # the next question to ask the witness, under the description

        # sketch and IR, each with its own inline error line
        self.sketch = SketchEditor()
        self.sketch_error = _error_label()
        self.sketch_section = _image_section("Sketch", self.sketch, self.sketch_error, stretch=1)
        self.ir_zone = ImageDropZone("IR")
        self.ir_error = _error_label()
        self.ir_section = _image_section("Infrared image", self.ir_zone, self.ir_error)

        # options
        self.level_box = QComboBox()
        self.level_box.addItem("Auto", None)
        for level in ONTOLOGY.levels:
            self.level_box.addItem(f"{level.name} — {level.label}", level.name)
        self.level_box.setToolTip("Granularity level of the text query: automatic (parser, then the model's "
                                  "classifier) or fixed; sketch and IR queries have no level")
        self.level_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.level_box.setMinimumContentsLength(8)
        self.keep = KeepControl()
        options = QGridLayout()
        options.setHorizontalSpacing(8)
        options.setVerticalSpacing(6)
        options.addWidget(QLabel("Level"), 0, 0)
        options.addWidget(self.level_box, 0, 1)
        options.addWidget(QLabel("Keep"), 1, 0)
        options.addWidget(self.keep, 1, 1)
        options.setColumnStretch(1, 1)

        self.message = QLabel()
        self.message.setObjectName("message")
        self.message.setWordWrap(True)
        self.message.hide()
        self.warning = QLabel()
        self.warning.setObjectName("warning")
        self.warning.setWordWrap(True)
        self.run_anyway_button = QPushButton("Run anyway")
        self.run_anyway_button.setToolTip("Run the step as it stands (Enter again does the same)")
        self.warning_box = QFrame()
        self.warning_box.setObjectName("warningBox")
        warning_layout = QVBoxLayout(self.warning_box)
        warning_layout.setContentsMargins(8, 6, 8, 6)
        warning_layout.setSpacing(4)
        warning_layout.addWidget(self.warning)
        warning_layout.addWidget(self.run_anyway_button, 0, Qt.AlignmentFlag.AlignRight)
        self.warning_box.hide()
        self._warned_spec: tuple | None = None
        self.search_button = QPushButton("Search")
        self.search_button.setObjectName("searchButton")
        self.search_button.setToolTip(f"Run the next step ({RUN_KEYS})")
        self.search_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.search_action = QAction("Run search step", self)
        self.search_action.setShortcuts([QKeySequence("Ctrl+Return"), QKeySequence("Ctrl+Enter")])
        self.search_action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        self.search_action.setToolTip(f"Run the next step ({RUN_KEYS})")
        self.addAction(self.search_action)

        # the description, sketch and IR scroll; level, keep and the Search button stay in view below them
        body = QWidget()
        body_layout = QVBoxLayout(body)
        body_layout.setContentsMargins(12, 10, 12, 6)
        body_layout.setSpacing(10)
        body_layout.addLayout(toggles)
        body_layout.addWidget(self.text_section)
        body_layout.addWidget(self.question_bar)
        body_layout.addWidget(self.sketch_section, 1)
        body_layout.addWidget(self.ir_section)
        body_layout.addStretch(1)
        self.body_scroll = QScrollArea()
        self.body_scroll.setWidget(body)
        self.body_scroll.setWidgetResizable(True)
        self.body_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.body_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.footer = QWidget()
        footer_layout = QVBoxLayout(self.footer)
        footer_layout.setContentsMargins(12, 6, 12, 10)
        footer_layout.setSpacing(6)
        footer_layout.addLayout(options)
        footer_layout.addWidget(self.message)
        footer_layout.addWidget(self.warning_box)
        footer_layout.addWidget(self.search_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.body_scroll, 1)
        layout.addWidget(self.footer)

        self.description.parsed.connect(self._parsed)
        self.text_edit.submitted.connect(self._submitted)
        self.search_button.clicked.connect(self._button_clicked)
        self.search_action.triggered.connect(self.request_search)
        self.run_anyway_button.clicked.connect(lambda: self.request_search(force=True))
        self.sketch.error.connect(lambda text: self._show_inline(self.sketch_error, text))
        self.ir_zone.error.connect(lambda text: self._show_inline(self.ir_error, text))
        self.sketch.changed.connect(self._clear_message)
        self.sketch.changed.connect(self.sketch_error.hide)
        self.ir_zone.image_changed.connect(self._ir_changed)
        for name, button in self.modality_buttons.items():
            button.toggled.connect(lambda on, name=name: self._modality_toggled(name, on))
        self.set_modalities(text=True, sketch=False, ir=False)
        for signal in (self.sketch.changed, self.ir_zone.image_changed, self.level_box.currentIndexChanged,
                       self.keep.changed, *(button.toggled for button in self.modality_buttons.values())):
            signal.connect(self.inputs_changed)

    # ------------------------------------------------------------------------------------------ text

    def text(self) -> str:
        return self.description.text()

    def set_text(self, text: str) -> None:
        self.description.set_text(text)

    @property
    def parse_result(self) -> ParseResult:
        return self._parse

    def chip_widgets(self) -> list[AttributeChip]:
        return self.description.chip_widgets()

    def suggestion_buttons(self) -> list[QToolButton]:
        return self.description.suggestion_buttons()

    def add_attribute(self, key: str, value: str) -> None:
        """Append a sentence stating ``key = value`` and put the cursor after it."""
        self.description.add_attribute(key, value)

    def select_span(self, start: int, end: int) -> None:
        self.description.select_span(start, end)

    def _parsed(self, result: ParseResult) -> None:
        self._parse = result
        self._clear_message()
        self._refresh_level_box()
        self.parsed.emit(result)

    # ------------------------------------------------------------------------------------------ modalities

    def modalities(self) -> dict[str, bool]:
        return {name: button.isChecked() for name, button in self.modality_buttons.items()}

    def set_modalities(self, *, text: bool | None = None, sketch: bool | None = None,
                       ir: bool | None = None) -> None:
        for name, on in (("text", text), ("sketch", sketch), ("ir", ir)):
            if on is not None:
                self.modality_buttons[name].setChecked(on)
                self._modality_toggled(name, on)

    def _refresh_level_box(self) -> None:
        """The level is the text's: "Auto (C)" with a description, "no level" for a sketch or IR query alone."""
        text_on = self.modality_buttons["text"].isChecked() if self.modality_buttons else True
        if not text_on:
            self.level_box.setItemText(0, "None (image query)")
        else:
            level = self._parse.level
            self.level_box.setItemText(0, "Auto" if level is None else f"Auto ({level})")
        self.level_box.setEnabled(text_on)

    def _modality_toggled(self, name: str, on: bool) -> None:
        section = {"text": self.text_section, "sketch": self.sketch_section, "ir": self.ir_section}[name]
        section.setVisible(on)
        self._refresh_level_box()
        self._clear_message()
        if on and name == "text":
            self.text_edit.setFocus()

    def set_ir_image(self, path: str | Path) -> bool:
        """Load an IR query image (turns the IR modality on). False with a message when unreadable."""
        if not self.ir_zone.load(path):
            return False
        self.set_modalities(ir=True)
        return True

    def _ir_changed(self, path: Path | None) -> None:
        self._clear_message()
        if path is not None:
            self.ir_error.hide()

    # ------------------------------------------------------------------------------------------ options

    def level_override(self) -> str | None:
        return self.level_box.currentData()

    def set_level_override(self, level: str | None) -> None:
        index = self.level_box.findData(level)
        if index < 0:
            raise ValueError(f"level must be one of {list(LEVELS)} or None, got {level!r}")
        self.level_box.setCurrentIndex(index)

    def keep_rule(self) -> KeepRule:
        return self.keep.rule()

    def set_keep(self, rule: KeepRule) -> None:
        self.keep.set_rule(rule)

    def set_threshold(self, value: float) -> None:
        """Keep by minimum score (e.g. a threshold read off the distribution plot)."""
        self.keep.set_rule(KeepRule("threshold", round(float(value), 3)))

    # ------------------------------------------------------------------------------------------ working state

    def query_inputs(self) -> QueryInputs:
        """The inputs besides the description as they stand (the case's working state keeps them)."""
        canvas = self.sketch.canvas
        return QueryInputs(modalities=frozenset(name for name, on in self.modalities().items() if on),
                           sketch=None if canvas.is_empty() else canvas.to_array(),
                           ir=None if self.ir_zone.path is None else str(self.ir_zone.path),
                           level=self.level_override(), keep=self.keep_rule())

    def set_query_inputs(self, inputs: QueryInputs) -> None:
        """Put a case's inputs back (a new case's clean ones): nothing of another case's sketch or IR image
        stays, not even in the sketch's undo history."""
        self.sketch.canvas.reset(inputs.sketch)
        self.sketch_error.hide()
        self.ir_error.hide()
        if inputs.ir is None or not self.ir_zone.load(inputs.ir):
            self.ir_zone.clear()
        self.level_box.setCurrentIndex(max(0, self.level_box.findData(inputs.level)))
        self.set_keep(inputs.keep)
        self.set_modalities(**{name: name in inputs.modalities for name in MODALITIES})
        self._clear_message()

    # ------------------------------------------------------------------------------------------ search

    def set_query_text(self, text: str | None) -> None:
        """Put a stored step's description back (a reopened case), without running anything."""
        self.set_text(text or "")
        self._clear_message()

    def current_spec(self) -> QuerySpec:
        """The query as set up now; raises ``QueryInputError`` (a readable message) when nothing is given."""
        on = self.modalities()
        sketch = None
        if on["sketch"] and not self.sketch.canvas.is_empty():
            sketch = self.sketch.canvas.to_array()
        return build_spec(on, text=self.text(), sketch=sketch, ir=self.ir_zone.path, level=self.level_override(),
                          keep=self.keep_rule())

    def set_token_counter(self, counter: Callable[[str], tuple[int, int]] | None) -> None:
        """``counter(text) -> (tokens, context length)`` of the model's tokenizer (None: no model to ask), so a
        description the model would cut short is flagged before the step runs."""
        self._token_counter = counter

    def set_previous_view(self, view: str | None) -> None:
        """The gallery view the step this one continues from ranked by (its score scale), or None."""
        self._previous_view = view

    def query_warnings(self, spec: QuerySpec) -> list[str]:
        """Why the step may not do what the analyst expects (empty when nothing is wrong)."""
        return query_warnings(spec, self._parse, previous_view=self._previous_view,
                              token_counter=self._token_counter)

    def request_search(self, force: bool = False) -> QuerySpec | None:
        """Emit ``search_requested`` with the current spec (or show why it cannot). A query with a warning
        (``query_warnings``) is held with a "Run anyway" choice; ``force`` (or asking again for the same
        query) runs it."""
        if self._busy or not self._available:
            if not self._available and self._unavailable_reason:
                self._show_error(self._unavailable_reason)
            return None
        try:
            spec = self.current_spec()
        except QueryInputError as exc:
            self._show_error(str(exc))
            return None
        key = (spec.text, spec.kind, spec.level, spec.keep)
        warnings = self.query_warnings(spec)
        if warnings and not force and self._warned_spec != key:
            self._clear_message()
            self._warned_spec = key
            self.warning.setText(" ".join(warnings))
            self.warning_box.show()
            self.error.emit(warnings[0])
            return None
        self._clear_message()
        self.search_requested.emit(spec)
        return spec

    def _submitted(self) -> None:
        """Enter in the description: run (or cancel nothing while a step runs)."""
        if not self._busy:
            self.request_search()

    def _button_clicked(self) -> None:
        if self._busy:
            self.cancel_requested.emit()
        else:
            self.request_search()

    def set_busy(self, busy: bool, job: str = "") -> None:
        """While a job runs the button cancels it, saying which: "Cancel search" for a search step, else the
        job's own name (``BackgroundJob.name``, e.g. "Cancel loading gallery" while the model loads)."""
        self._busy = bool(busy)
        searching = not job or job == SEARCH_JOB
        doing = "search" if searching else job[:1].lower() + job[1:]
        self.search_button.setText(f"Cancel {doing}" if busy else "Search")
        self.search_button.setToolTip(("Stop the running step" if searching else f"Stop: {job}") if busy
                                      else f"Run the next step ({RUN_KEYS})")
        self.search_button.setProperty("busy", self._busy)
        restyle(self.search_button)
        self._refresh_button()

    def set_search_available(self, available: bool, reason: str = "") -> None:
        """Disable searching (e.g. no case or gallery open), saying why in the button's tooltip."""
        self._available, self._unavailable_reason = bool(available), reason
        self._refresh_button()

    def _refresh_button(self) -> None:
        enabled = self._busy or self._available
        self.search_button.setEnabled(enabled)
        self.search_action.setEnabled(self._available and not self._busy)
        if not self._available and not self._busy and self._unavailable_reason:
            self.search_button.setToolTip(self._unavailable_reason)

    def _show_error(self, message: str) -> None:
        self.message.setText(message)
        self.message.show()
        self.error.emit(message)

    def _show_inline(self, label: QLabel, message: str) -> None:
        """An error about one input, shown under that input (and in the status bar)."""
        label.setText(message)
        label.show()
        self.error.emit(message)

    def _clear_message(self) -> None:
        self._warned_spec = None
        self.warning_box.hide()
        if not self.message.isHidden():
            self.message.clear()
            self.message.hide()
