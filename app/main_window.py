"""The main window (docs/architecture.md): query panel over the step timeline and the case's notes on the left, the
results grid in the centre, the detail pane over the distribution panel on the right, the open case named
above them and a status bar with progress and cancel.

The window fits a 1366×768 screen and works up to 4K: it opens at a size taken from the screen, its minimum
size (``MINIMUM_SIZE``) is fixed and never grows with content (panes scroll, toolbars wrap, labels elide),
and with ``settings`` it remembers its geometry, its splitters and the last case opened.

The window holds no case data: it wires the views to one ``AppState`` (views report, the state acts and
emits, views follow). Errors arrive as ``AppState.error`` sentences and are shown in a dismissible banner
and the status bar, never as a traceback or a blocking box. Footage ingest runs in a worker with the same
progress bar and cancel button.
"""

from __future__ import annotations

import contextlib
import html
import math
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QAction, QCloseEvent, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.gc_freeze import freeze_long_lived_objects, freeze_startup_objects
from app.state import AppState, KeepRule
from app.views.case_list import choose_case
from app.views.detail import DetailPane
from app.views.distribution import DistributionPanel
from app.views.export_dialog import ask_export
from app.views.notes_panel import NotesPanel
from app.views.query_panel import QueryPanel
from app.views.results import ResultsView
from app.views.results_model import DeferredExplanations, ResultSet
from app.views.shortcuts_sheet import WIDGET_KEYS, ShortcutsSheet, action_rows
from app.views.timeline import StepTimeline
from app.workers import Job, WorkerHandle, cancel_all, describe_error, preload_worker_modules, run_in_worker
from engine.attributes.ranking import explanation_line
from engine.search import QueryInputError

DEFAULT_SIZE = (1500, 950)  # without a screen to measure
#: The largest opening size: the window fills the screen's free area up to this (a 4K screen gets a window,
#: not a wall).
LARGEST_OPENING_SIZE = (2560, 1440)
#: The window's minimum: fits a 1366×768 screen with a task bar; content never raises it.
MINIMUM_SIZE = (1000, 600)
#: Shares of the width for the left, centre and right columns.
COLUMN_SHARES = (0.27, 0.43, 0.30)
CENTRE_MIN_WIDTH = 300
#: Shares of the left column's height (query, steps/notes) and of the right one's (detail, plot).
LEFT_SHARES, RIGHT_SHARES = (0.6, 0.4), (0.52, 0.48)
#: How long an information message stays in the status bar (ms).
MESSAGE_MS = 8000
#: Results whose tooltip explains their score (the best ones; the detail pane explains any selected item).
EXPLAINED_ITEMS = 200


class CheckpointModels:
    """One checkpoint's model, loaded once on first use (from any thread), and its query and ingest encoders,
    each made once: making one hashes every weight for the model's fingerprint (and the ingest encoder runs a
    probe), work that held the interpreter long enough to stall the window at every ingest and gallery open."""

    def __init__(self, checkpoint: str | Path, device: str | None = "cpu") -> None:
        self.checkpoint = Path(checkpoint)
        self.device = device
        self._model = None
        self._query_encoder = None
        self._ingest_encoder = None
        self._lock = threading.RLock()

    def model(self):
        with self._lock:
            if self._model is None:
                from engine.models import load

                self._model = load(self.checkpoint, device=self.device)
                freeze_long_lived_objects()
            return self._model

    def query_encoder(self, _gallery=None):
        """An ``engine.search`` query encoder with the checkpoint's attribute weight, made once (the
        ``encoder_factory`` of ``AppState.load_gallery``)."""
        with self._lock:
            if self._query_encoder is None:
                from engine.search.opening import query_encoder

                self._query_encoder = query_encoder(self.model(), self.checkpoint)
                freeze_long_lived_objects()  # its tokenizer's tables are long-lived objects too
            return self._query_encoder

    def ingest_encoder(self):
        """The ``engine.ingest`` encoder of the checkpoint's model."""
        with self._lock:
            if self._ingest_encoder is None:
                from engine.ingest import ModelEncoder

                self._ingest_encoder = ModelEncoder(self.model())
                freeze_long_lived_objects()
            return self._ingest_encoder

    def domain_weights(self):
        """The checkpoint's attribute weight per gallery domain (ingest records the gallery's in the gallery)."""
        from engine.attributes.ranking import DomainWeights

        return DomainWeights.of_checkpoint(self.checkpoint)


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

    def text(self) -> str:
        return "" if self.isHidden() else self.label.text()


class MainWindow(QMainWindow):
    """See the module docstring. ``models`` (optional) loads the checkpoint for galleries opened from the
    Gallery menu and for ingest; without it only find-similar works on a newly opened gallery."""

    def __init__(self, state: AppState, models: CheckpointModels | None = None,
                 parent: QWidget | None = None, *, settings: QSettings | None = None) -> None:
        super().__init__(parent)
        preload_worker_modules()
        freeze_startup_objects()  # a full garbage collection over them stalled the window ~0.5 s
        self.state = state
        self.models = models
        self.settings = settings
        self._scores: dict[str, float] = {}
        self._step_result = None
        self._ingest: WorkerHandle | None = None
        self._shown_case_id: int | None = None
        #: Asked when a cut would fall above confirmed items: (items, rule) -> "keep" | "clear" | "cancel".
        self.ask_confirmed_cut: Callable[[list[tuple[str, float]], KeepRule], str] = self._ask_confirmed_cut
        self._build_views()
        self._build_status_bar()
        self._build_menus()
        self._connect()
        self.setMinimumSize(*MINIMUM_SIZE)
        self.fit_to_screen()
        self._restore_layout()
        self._refresh_title()
        self._refresh_search_available()
        self._show_step(state.selected_step_id)

    # ------------------------------------------------------------------------------------------ layout

    def _build_views(self) -> None:
        self.query_panel = QueryPanel()
        self.timeline = StepTimeline()
        self.notes = NotesPanel()
        self.results = ResultsView()
        self.detail = DetailPane()
        self.distribution = DistributionPanel()
        self.banner = Banner()
        self.case_label = QLabel()
        self.case_label.setTextFormat(Qt.TextFormat.RichText)
        self.case_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.case_label.setContentsMargins(4, 0, 4, 0)

        self.side_tabs = QTabWidget()
        self.side_tabs.setDocumentMode(True)
        self.side_tabs.addTab(self.timeline, "Steps")
        self.side_tabs.addTab(self.notes, "Notes")
        self.detail_scroll = QScrollArea()
        self.detail_scroll.setWidget(self.detail)
        self.detail_scroll.setWidgetResizable(True)
        self.detail_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.detail_scroll.setMinimumHeight(140)

        self.left = QSplitter(Qt.Orientation.Vertical)
        self.left.addWidget(self.query_panel)
        self.left.addWidget(self.side_tabs)
        self.right = QSplitter(Qt.Orientation.Vertical)
        self.right.addWidget(self.detail_scroll)
        self.right.addWidget(self.distribution)
        self.columns = QSplitter(Qt.Orientation.Horizontal)
        for widget in (self.left, self.results, self.right):
            self.columns.addWidget(widget)
        self.results.setMinimumWidth(CENTRE_MIN_WIDTH)  # room for two thumbnails; the side columns size to content
        self.columns.setStretchFactor(1, 1)
        for splitter in (self.left, self.right, self.columns):
            splitter.setChildrenCollapsible(False)
            splitter.setHandleWidth(6)

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(6, 4, 6, 0)
        layout.setSpacing(4)
        layout.addWidget(self.case_label)
        layout.addWidget(self.banner)
        layout.addWidget(self.columns, 1)
        self.setCentralWidget(central)

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.progress_bar = QProgressBar()
        self.progress_bar.setMaximumWidth(260)
        self.progress_bar.setTextVisible(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the running job (Esc)")
        self.cancel_button.clicked.connect(self.cancel_job)
        self.job_label = QLabel()
        for widget in (self.job_label, self.progress_bar, self.cancel_button):
            bar.addPermanentWidget(widget)
            widget.hide()

    def _build_menus(self) -> None:
        menu = self.menuBar()
        case = menu.addMenu("&Case")
        self.new_case_action = self._action(case, "&New case…", self.new_case, QKeySequence.StandardKey.New)
        self.open_case_action = self._action(case, "&Open case…", self.open_case, QKeySequence.StandardKey.Open)
        self.rename_case_action = self._action(case, "&Rename case…", self.rename_case, "F2")
        self.note_action = self._action(case, "Add &note…", self.add_note, "Ctrl+Shift+N")
        case.addSeparator()
        self.export_action = self._action(case, "&Export report…", self.export_report, "Ctrl+E")
        self.export_action.setToolTip("Write the case report (PDF or HTML, faces optionally blurred) with its "
                                      "manifest (Ctrl+E)")
        case.addSeparator()
        self._action(case, "&Quit", self.close, QKeySequence.StandardKey.Quit)

        gallery = menu.addMenu("&Gallery")
        self.open_gallery_action = self._action(gallery, "&Open gallery…", self.open_gallery, "Ctrl+G")
        self.ingest_action = self._action(gallery, "&Ingest footage…", self.ingest_footage, "Ctrl+I")
        self.ingest_crops_action = self._action(gallery, "Ingest a folder of &person crops…", self.ingest_crops)

        search = menu.addMenu("&Search")
        search.addAction(self.query_panel.search_action)
        search.addAction(self.timeline.undo_action)
        search.addAction(self.timeline.branch_action)
        self.find_similar_action = self._action(search, "Find &similar to the selected item",
                                                self.find_similar_selected, "F")
        self.find_similar_action.setToolTip("Next step ranks by likeness to the selected item (F)")
        self.results.addAction(self.find_similar_action)
        self.detail.similar_button.setText("Find similar  (F)")
        self.target_action = self._action(search, "Ground-truth &identity…", self.choose_target_identity)
        self.target_action.setToolTip("Trainers: score the next steps against a known identity of a built world")
        search.addSeparator()
        self.restore_action = self._action(search, "&Re-run the case's steps", self.state.restore_session)
        self.cancel_action = self._action(search, "&Cancel running job", self.cancel_job, "Esc")

        view = menu.addMenu("&View")
        focus_query = self._action(view, "Focus &query", self.query_panel.text_edit.setFocus, "Ctrl+1")
        focus_query.setShortcuts([QKeySequence("Ctrl+1"), QKeySequence("Ctrl+L")])
        self._action(view, "Focus &results", self.results.grid.setFocus, "Ctrl+2")
        self._action(view, "Focus s&teps", self._focus_steps, "Ctrl+3")
        self._action(view, "&Notes", self._show_notes, "Ctrl+4")
        self._action(view, "Whole &gallery (before step 1)", lambda: self.state.select_step(None), "Ctrl+Home")
        self._action(view, "&Dismiss message", self.banner.hide, "Ctrl+D")
        self._action(view, "Reset &layout", self.reset_layout)

        help_menu = menu.addMenu("&Help")
        self.shortcuts_action = self._action(help_menu, "&Keyboard shortcuts…", self.show_shortcuts, "F1")

    def _action(self, menu, text: str, slot: Callable[[], object], shortcut=None) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(lambda _checked=False: slot())
        menu.addAction(action)
        return action

    def shortcut_rows(self) -> list[tuple[str, str]]:
        """Every shortcut of the menus, then the keys focused widgets answer to (the shortcuts sheet)."""
        actions = [action for top in self.menuBar().actions() for action in top.menu().actions()]
        return action_rows(actions) + list(WIDGET_KEYS)

    def show_shortcuts(self) -> ShortcutsSheet:
        sheet = ShortcutsSheet(self.shortcut_rows(), self)
        sheet.setModal(False)
        sheet.show()
        return sheet

    def _focus_steps(self) -> None:
        self.side_tabs.setCurrentWidget(self.timeline)
        self.timeline.list.setFocus()

    def _show_notes(self) -> None:
        self.side_tabs.setCurrentWidget(self.notes)
        self.notes.list.setFocus()

    # ------------------------------------------------------------------------------------------ sizes

    def fit_to_screen(self) -> None:
        """Open filling the screen's free area less a window frame (up to ``LARGEST_OPENING_SIZE``; never below
        the minimum the screen allows); ``DEFAULT_SIZE`` when there is no screen to measure."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        width, height = DEFAULT_SIZE
        if screen is not None:
            free = screen.availableGeometry()
            width = min(LARGEST_OPENING_SIZE[0], free.width() - 16)
            height = min(LARGEST_OPENING_SIZE[1], free.height() - 40)
            self.setMinimumSize(min(MINIMUM_SIZE[0], free.width()), min(MINIMUM_SIZE[1], free.height()))
        self.resize(max(width, self.minimumWidth()), max(height, self.minimumHeight()))
        self.reset_layout()

    def reset_layout(self) -> None:
        """Column and pane sizes as shares of the window."""
        width = max(self.width(), self.minimumWidth())
        height = max(self.height(), self.minimumHeight())
        self.columns.setSizes([round(width * share) for share in COLUMN_SHARES])
        self.left.setSizes([round(height * share) for share in LEFT_SHARES])
        self.right.setSizes([round(height * share) for share in RIGHT_SHARES])

    def _restore_layout(self) -> None:
        if self.settings is None:
            return
        geometry = self.settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        for name, splitter in (("columns", self.columns), ("left", self.left), ("right", self.right)):
            saved = self.settings.value(f"window/{name}")
            if saved is not None:
                splitter.restoreState(saved)

    def _save_layout(self) -> None:
        if self.settings is None:
            return
        self.settings.setValue("window/geometry", self.saveGeometry())
        for name, splitter in (("columns", self.columns), ("left", self.left), ("right", self.right)):
            self.settings.setValue(f"window/{name}", splitter.saveState())
        if self.state.case_id is not None:
            self.settings.setValue("case/last", self.state.case_id)
        self.settings.sync()

    # ------------------------------------------------------------------------------------------ wiring

    def _connect(self) -> None:
        state, panel, timeline, results = self.state, self.query_panel, self.timeline, self.results
        panel.search_requested.connect(state.search)
        panel.cancel_requested.connect(state.cancel)
        timeline.step_selected.connect(state.select_step)
        timeline.undo_requested.connect(self.undo_step)
        timeline.branch_requested.connect(self.branch_from)
        state.step_recorded.connect(self._step_recorded)
        results.marks_changed.connect(self._mark)
        results.filters_changed.connect(self._set_filters)
        results.current_changed.connect(self._show_item)
        results.open_requested.connect(self._show_item)
        results.find_similar_requested.connect(state.find_similar)
        self.detail.marks_changed.connect(self._mark)
        self.detail.find_similar_requested.connect(state.find_similar)
        # a dragged cut is a preview; only "Apply cut to this step" acts, on that step (never the next one's rule)
        self.distribution.threshold_changed.connect(results.set_preview_threshold)
        self.distribution.apply_requested.connect(self.apply_cut)
        self.notes.add_requested.connect(self.add_note)

        state.case_changed.connect(self._case_changed)
        state.gallery_changed.connect(self._gallery_changed)
        state.selected_step_changed.connect(self._show_step)
        state.marks_changed.connect(self._marks_changed)
        state.busy_changed.connect(self._busy_changed)
        state.progress.connect(self._progress)
        state.error.connect(self.show_error)
        state.message.connect(self.show_message)
        panel.error.connect(lambda text: self.statusBar().showMessage(text, MESSAGE_MS))

    def undo_step(self) -> bool:
        head = self.state.head_step_id
        label = None if head is None else self.step_label(head)
        if not self.state.undo_step():
            return False
        self.show_message(f"Step {label} undone (kept in the case, greyed). {self.timeline.next_step_text()}")
        return True

    def branch_from(self, step_id: int | None) -> bool:
        """"Branch here": the next step continues from ``step_id``; says so at once."""
        if not self.state.branch_from(step_id):
            return False
        where = "the whole gallery" if step_id is None else f"step {self.step_label(step_id)}"
        self.show_message(f"Branch from {where}: the next search starts a new branch there; the later steps "
                          f"are kept")
        return True

    def _step_recorded(self, step_id: int) -> None:
        step = self.state.step_state(step_id)
        if step is not None:
            self.show_message(f"Step {self.step_label(step_id)}: {step.candidates_before:,} → "
                              f"{step.candidates_after:,} candidates in {step.seconds or 0:.2f} s")

    def _mark(self, item_ids: list, mark: str) -> None:
        self.state.mark_many(list(item_ids), mark)

    def _set_filters(self, cameras, time_range) -> None:
        self.state.set_filters(cameras, time_range)

    # ------------------------------------------------------------------------------------------ state → views

    def _case_changed(self, case) -> None:
        gallery = self.state.gallery
        self.timeline.set_case(case, None if gallery is None else len(gallery))
        self.timeline.set_selected(self.state.selected_step_id)
        self.notes.set_case(case, self.step_label)
        case_id = None if case is None else case.case.id
        if case_id != self._shown_case_id:  # a case was opened: put its last description back, remember it
            self._shown_case_id = case_id
            head = None if case is None or case.case.head_step_id is None else self.state.step_state(
                case.case.head_step_id)
            self.query_panel.set_query_text(None if head is None else head.query_text)
            if case_id is not None and self.settings is not None:
                self.settings.setValue("case/last", case_id)
        head_id = self.state.head_step_id
        head = None if head_id is None else self.state.step_state(head_id)
        self.query_panel.set_previous_view(None if head is None else head.view)
        self._refresh_title()
        self._refresh_search_available()

    def step_label(self, step_id: int | None) -> str:
        """The step's label as the timeline shows it ("3", "3a"; "0" for the start)."""
        for row in self.timeline.rows():
            if row.step_id == step_id:
                return row.label
        return str(step_id)

    def _gallery_changed(self, gallery) -> None:
        self._case_changed(self.state.case)
        self._show_step(self.state.selected_step_id)
        self.query_panel.set_token_counter(_token_counter(self.state.encoder))

    def _marks_changed(self, marks: dict) -> None:
        self.results.set_mark_map(marks)
        item_id = self.detail.item_id()
        if item_id is not None:
            self.detail.set_mark(marks.get(item_id))
        step_id = self.state.selected_step_id
        result = self.state.step_result(step_id)
        if result is not None:
            self.distribution.set_step(result, self._confirmed())
            self.results.set_preview_threshold(None)  # a re-plot moves the cut line; the grid keeps the step's

    def _confirmed(self) -> list[str]:
        return [item for item, mark in self.state.marks.items() if mark == "confirmed"]

    def _show_step(self, step_id: int | None) -> None:
        """Results grid and distribution for a step (None: the whole gallery, unscored)."""
        self.timeline.set_selected(step_id)
        gallery = self.state.gallery
        self.detail.clear()
        self._step_result = None
        if gallery is None:
            self._set_results(ResultSet.empty())
            self.distribution.clear()
            return
        result = self.state.step_result(step_id)
        self._step_result = result
        stored = None if step_id is None else self.state.step_state(step_id)
        self.distribution.set_can_apply(result is not None and stored is not None and not stored.undone)
        if result is not None:
            lines = DeferredExplanations(lambda: {item: explanation_line(e) for item, e in
                                                  result.explanations(EXPLAINED_ITEMS).items()})
            self._set_results(ResultSet.from_step(result, gallery, lines))
            self.distribution.set_step(result, self._confirmed())
            if stored is not None:
                self.distribution.title.setText(self.distribution.title.text().replace(
                    f"Step {result.index + 1} ", f"Step {self.step_label(step_id)} ", 1))
            self.results.set_preview_threshold(None)
        elif stored is not None and stored.gallery_id == self.state.gallery_id:
            kept = list(stored.kept_ids)
            scores = np.asarray(stored.kept_scores, dtype=np.float64)
            self._set_results(ResultSet.from_ids(gallery, kept, scores, kept=np.ones(len(kept), bool)))
            if kept:
                self.distribution.set_scores(scores, len(kept), keep_rule=stored.keep_rule,
                                             keep_value=stored.keep_value,
                                             title=f"Step {self.step_label(step_id)} · kept items as stored "
                                                   f"(re-run the case for every candidate's score)")
            else:
                self.distribution.clear()
        elif stored is not None:
            self._set_results(ResultSet.empty())
            self.distribution.clear()
            self.show_message(f"Step {self.step_label(step_id)} was searched on another gallery: open it to see its "
                              f"items")
        else:
            ids = gallery.ids
            self._set_results(ResultSet.from_ids(gallery, ids, np.full(len(ids), math.nan)))
            self.distribution.clear()
        self.results.set_mark_map(self.state.marks)

    def _set_results(self, results: ResultSet) -> None:
        self._scores = {item: float(score) for item, score in zip(results.ids, results.scores, strict=True)}
        self.results.set_results(results)

    def _show_item(self, item_id: str) -> None:
        gallery = self.state.gallery
        if not item_id or gallery is None:
            self.detail.clear()
            return
        score = self._scores.get(item_id)
        self.detail.set_gallery_item(gallery, item_id, score=None if score is None or math.isnan(score) else score,
                                     mark=self.state.marks.get(item_id))
        result = self._step_result
        if result is not None:
            with contextlib.suppress(QueryInputError):  # the item was not a candidate of the step
                self.detail.set_explanation(result.explain(item_id))

    def _refresh_title(self) -> None:
        case = self.state.case
        if case is None:
            self.case_label.setText("<span style='color:#6b7280'>No case open — Case → New case or Open case"
                                    "</span>")
        else:
            summary = case.case
            steps = sum(1 for step in case.steps if not step.undone)
            status = "" if summary.status == "open" else f" · <b style='color:#b45309'>{summary.status}</b>"
            gallery = self.state.gallery
            where = "" if gallery is None else f" · gallery {Path(gallery.root).name}"
            self.case_label.setText(f"<b>Case: {html.escape(summary.title)}</b>{status} · "
                                    f"{steps} step{'s' if steps != 1 else ''} · {len(case.notes)} "
                                    f"note{'s' if len(case.notes) != 1 else ''}{html.escape(where)}")
        parts = ["Lineup"]
        case = self.state.case
        parts.append("no case open" if case is None else f"Case: {case.case.title}"
                     + ("" if case.case.status == "open" else f" ({case.case.status})"))
        gallery = self.state.gallery
        parts.append("no gallery" if gallery is None else f"Gallery: {Path(gallery.root).name} "
                     f"({len(gallery):,} items)")
        self.setWindowTitle(" — ".join(parts))

    def _refresh_search_available(self) -> None:
        state = self.state
        reason = ""
        if state.case is None:
            reason = "Open or create a case first (Case menu)"
        elif state.gallery is None:
            reason = "Open a gallery first (Gallery menu)"
        elif state.case.case.status != "open":
            reason = f"Case {state.case.case.title!r} is {state.case.case.status}"
        elif self._ingest is not None:
            reason = "Ingest is running: wait for it or cancel it"
        self.query_panel.set_search_available(not reason, reason)
        has_case = state.case is not None
        for action in (self.rename_case_action, self.note_action, self.export_action):
            action.setEnabled(has_case)

    # ------------------------------------------------------------------------------------------ jobs

    @property
    def busy(self) -> bool:
        return self.state.busy or self._ingest is not None

    def _busy_changed(self, busy: bool) -> None:
        self.query_panel.set_busy(busy)
        self.timeline.set_busy(busy)
        self._show_job(busy, self.state.job_name)

    def _show_job(self, busy: bool, name: str) -> None:
        busy = busy or self.busy
        self.job_label.setText(name)
        self.progress_bar.setRange(0, 0)
        for widget in (self.job_label, self.progress_bar, self.cancel_button):
            widget.setVisible(busy)
        self.cancel_action.setEnabled(busy)
        for action in (self.ingest_action, self.ingest_crops_action, self.open_gallery_action, self.new_case_action,
                       self.open_case_action):
            action.setEnabled(not busy)

    def _progress(self, done: int, total: int, message: str) -> None:
        if total > 0:
            self.progress_bar.setRange(0, total)
            self.progress_bar.setValue(min(done, total))
            self.progress_bar.setFormat("%v / %m  (%p%)")
        else:
            self.progress_bar.setRange(0, 0)
        if message:
            self.job_label.setText(message)

    def cancel_job(self) -> None:
        if self._ingest is not None:
            self._ingest.cancel()
        self.state.cancel()

    def show_error(self, text: str) -> None:
        self.banner.show_message(text, "error")
        self.statusBar().showMessage(text, MESSAGE_MS)

    def show_message(self, text: str) -> None:
        self.statusBar().showMessage(text, MESSAGE_MS)

    def show_notice(self, text: str) -> None:
        """A notice that stays until dismissed (e.g. how to give a checkpoint)."""
        self.banner.show_message(text, "info")

    # ------------------------------------------------------------------------------------------ menu actions

    def new_case(self, title: str | None = None) -> int | None:
        if title is None:
            title, ok = QInputDialog.getText(self, "New case", "Case title:")
            if not ok:
                return None
        if not title.strip():
            self.show_error("A case needs a title")
            return None
        return self.state.new_case(title.strip())

    def open_case(self, case_id: int | None = None) -> bool:
        if case_id is None:
            cases = self.state.cases()
            if not cases:
                self.show_error("The case database has no cases yet: create one with Case → New case")
                return False
            case_id = choose_case(cases, self.state.case_id, self)
            if case_id is None:
                return False
        if not self.state.open_case(case_id):
            return False
        self.restore_if_needed()
        return True

    def restore_if_needed(self) -> None:
        """Re-run the open case's active path in a worker when its results are not in memory (a reopened
        case), so the grid and the plot show every candidate again."""
        state = self.state
        head = state.head_step_id
        if (head is not None and state.step_result(head) is None and state.encoder is not None
                and state.gallery_id is not None and not state.busy):
            state.restore_session()

    def rename_case(self, title: str | None = None) -> bool:
        if self.state.case is None:
            self.show_error("Open or create a case first")
            return False
        if title is None:
            title, ok = QInputDialog.getText(self, "Rename case", "Case title:", text=self.state.case.case.title)
            if not ok:
                return False
        return self.state.rename_case(title.strip())

    def add_note(self, text: str | None = None) -> int | None:
        if self.state.case is None:
            self.show_error("Open or create a case first")
            return None
        item_id = self.detail.item_id()
        if text is None:
            about = f" about {item_id}" if item_id else ""
            text, ok = QInputDialog.getMultiLineText(self, "Add note", f"Note{about}:")
            if not ok:
                return None
        if not text.strip():
            self.show_error("A note needs some text")
            return None
        return self.state.add_note(text.strip(), item_id=item_id, step_id=self.state.selected_step_id)

    def export_report(self, path: str | Path | None = None, blur_faces: bool | None = None):
        """Write the open case's report (PDF or HTML by the file's ending) and its manifest; asks where (and
        whether to blur faces) when not told. Returns the ``ReportResult`` or None."""
        state = self.state
        if state.case is None or state.store is None:
            self.show_error("Open or create a case first")
            return None
        if path is None:
            safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in state.case.case.title).strip("-")
            answer = ask_export(Path.home() / f"{safe or 'case'}-report.pdf", self)
            if answer is None:
                return None
            path, chosen_blur = answer
            blur_faces = chosen_blur if blur_faces is None else blur_faces
        from app.report import export_report

        QGuiApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            result = export_report(state.store.path, state.case_id, path, blur_faces=bool(blur_faces))
        except (ValueError, OSError) as exc:
            self.show_error(f"The report could not be written: {describe_error(exc)}")
            return None
        finally:
            QGuiApplication.restoreOverrideCursor()
        pages = "" if result.pages is None else f", {result.pages} pages"
        self.show_notice(f"Report written: {result.report_path}{pages} (manifest {result.manifest_path.name}; "
                         f"check it with `lineup report verify`)")
        return result

    def apply_cut(self, threshold: float) -> WorkerHandle | None:
        """Run the shown step again keeping scores ≥ ``threshold`` (the cut dragged on its plot). A cut above
        confirmed items asks first: keep them (confirmed items are always kept), clear their marks, or cancel."""
        step_id = self.state.selected_step_id
        if step_id is None or self.state.step_result(step_id) is None:
            self.show_error("Choose a step searched in this session to apply a cut to")
            return None
        rule = KeepRule("threshold", float(threshold))
        below = self.state.confirmed_below(step_id, rule)
        if below:
            choice = self.ask_confirmed_cut(below, rule)
            if choice == "cancel":
                self.distribution.reset_cut()
                self.results.set_preview_threshold(None)
                return None
            if choice == "clear" and not self.state.mark_many([item for item, _ in below], "cleared"):
                return None
        label = self.step_label(step_id)
        handle = self.state.rerun_with_keep(step_id, rule)
        if handle is not None:
            self.show_message(f"Step {label} runs again keeping {rule.describe()}; the next step keeps its own rule")
        return handle

    def _ask_confirmed_cut(self, below: list[tuple[str, float]], rule: KeepRule) -> str:
        names = ", ".join(f"{item} ({score:.3f})" for item, score in below[:5])
        more = f" and {len(below) - 5} more" if len(below) > 5 else ""
        box = QMessageBox(QMessageBox.Icon.Warning, "Confirmed items below the cut",
                          f"{rule.describe().capitalize()} falls above {len(below)} confirmed "
                          f"item{'s' if len(below) != 1 else ''}: {names}{more}.", parent=self)
        box.setInformativeText("Confirmed items are kept whatever the rule. Keep them, or clear their marks so "
                               "the cut drops them?")
        keep = box.addButton("Keep confirmed items", QMessageBox.ButtonRole.AcceptRole)
        clear = box.addButton("Clear their marks and cut them", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(keep)
        box.exec()
        clicked = box.clickedButton()
        return "keep" if clicked is keep else "clear" if clicked is clear else "cancel"

    def choose_target_identity(self, identity: str | None = None) -> bool:
        """Ask for (or take) the ground-truth identity; an empty answer clears it."""
        if identity is None:
            current = self.state.target_identity or ""
            identity, ok = QInputDialog.getText(self, "Ground truth", "Identity of the person sought in this "
                                                "built world (empty: none):", text=current)
            if not ok:
                return False
        return self.state.set_target_identity(identity.strip() or None)

    def find_similar_selected(self) -> None:
        in_detail = self.detail.isAncestorOf(QApplication.focusWidget()) if QApplication.focusWidget() else False
        item_id = (self.detail.item_id() if in_detail else None) or self.results.current_id() or self.detail.item_id()
        if not item_id:
            self.show_error("Select an item in the results first")
            return
        self.state.find_similar(item_id)

    def open_gallery(self, path: str | Path | None = None) -> WorkerHandle | None:
        if path is None:
            path = QFileDialog.getExistingDirectory(self, "Open gallery folder")
            if not path:
                return None
        factory = None if self.models is None else self.models.query_encoder
        if self.models is None:
            self.show_notice("No checkpoint was given: only find-similar searches work on this gallery. "
                             "Start with `lineup app --checkpoint PATH` for text, sketch and IR queries.")
        handle = self.state.load_gallery(path, factory)
        if handle is not None:
            handle.result.connect(lambda _value: self.restore_if_needed())
        return handle

    def ingest_crops(self, source: str | Path | None = None) -> WorkerHandle | None:
        """Ingest a folder of ready person crops (every image is one person; ``engine.ingest.crops``)."""
        if source is None and self.state.gallery is not None and self.models is not None and not self.busy:
            source = QFileDialog.getExistingDirectory(self, "A folder of person crops")
            if not source:
                return None
        return self.ingest_footage(source, crops=True)

    def ingest_footage(self, source: str | Path | None = None, crops: bool = False) -> WorkerHandle | None:
        """Ingest a video or a folder of footage (``crops``: a folder of person crops) into the current gallery
        (in a worker), then reopen it."""
        gallery = self.state.gallery
        if gallery is None:
            self.show_error("Open a gallery first: footage is ingested into the current gallery")
            return None
        if self.models is None:
            self.show_error("Ingest needs the gallery's model: start with `lineup app --checkpoint PATH`")
            return None
        if self.busy:
            self.show_error("Another job is running: wait for it or cancel it")
            return None
        if source is None:
            source, _ = QFileDialog.getOpenFileName(self, "Ingest a video", "",
                                                    "Videos (*.mp4 *.avi *.mov *.mkv);;All files (*)")
            if not source:
                source = QFileDialog.getExistingDirectory(self, "…or a folder of footage / images")
            if not source:
                return None
        root, models = Path(gallery.root), self.models

        def work(job: Job):
            from engine.ingest import IngestOptions, ingest

            job.progress(0, 0, "Loading the model")
            encoder = models.ingest_encoder()
            return ingest(source, root, encoder, options=IngestOptions(crops=crops),
                          progress=job.engine_progress(f"Ingesting {Path(source).name}"),
                          weights=models.domain_weights())

        def done(summary) -> None:
            totals = summary.totals()
            self.show_message(f"Ingest: {totals.get('items_added', 0):,} items added to {root.name}")
            self.open_gallery(root)

        def finished() -> None:
            self._ingest = None
            self._show_job(False, "")
            self._refresh_search_available()

        self._ingest = run_in_worker(work, on_result=done, on_error=self.show_error, on_progress=self._progress,
                                     on_cancelled=lambda: self.show_message("Ingest cancelled"),
                                     on_finished=finished, name="Ingesting")
        self._refresh_search_available()
        self._show_job(True, "Ingesting")
        return self._ingest

    # ------------------------------------------------------------------------------------------ closing

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt API
        self._save_layout()
        if self._ingest is not None:
            self._ingest.cancel()
        self.state.close()
        cancel_all(timeout_ms=3000)
        self.detail.wait(2000)
        super().closeEvent(event)



def _token_counter(encoder) -> Callable[[str], tuple[int, int]] | None:
    """(tokens, context length) of a text with the encoder's model tokenizer, or None without one."""
    tokenizer = getattr(getattr(encoder, "model", None), "tokenizer", None)
    if tokenizer is None:
        return None
    return lambda text: (tokenizer.lengths([text])[0], tokenizer.context_length)
