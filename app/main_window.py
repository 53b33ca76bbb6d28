"""The main window (docs/architecture.md): query panel over the step timeline and the case's notes on the left, the
results grid in the centre, the detail pane over the distribution panel on the right, the open case named
above them and a status bar with progress and cancel.

The window fits a 1366×768 screen and works up to 4K (``app.window.layout``: it opens at a size taken from the
screen, its minimum size ``MINIMUM_SIZE`` is fixed and never grows with content: panes scroll, toolbars wrap,
labels elide), and with ``settings`` it remembers its geometry, its splitters and the last case opened.

The window holds no case data and runs no work: it wires the views to one ``AppState`` (views report, the
state acts and emits, views follow); its menus (``app.window.menus``) call the actions of
``app.window.actions``, which start background jobs on the state's ``JobRunner``; this module follows the
state into the views and shows the one running job (``app.window.job_status``). Errors arrive as
``AppState.error`` sentences and are shown in a dismissible banner and the status bar, never as a traceback
or a blocking box.
"""

from __future__ import annotations

import contextlib
import html
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QMainWindow,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.checkpoint_models import CheckpointModels
from app.gc_freeze import freeze_startup_objects
from app.provenance import SOURCE_LABELS, gallery_summary, similarity_line, view_network
from app.state import AppState
from app.state.item_label import item_label, item_labeller
from app.state.timeline_rows import step_label
from app.state.working_state import step_header
from app.views.case_list import steps_recorded
from app.views.detail import DetailPane
from app.views.distribution import DistributionPanel
from app.views.notes_panel import NotesPanel
from app.views.query_panel import QueryPanel
from app.views.results import ResultsView
from app.views.results_model import DeferredExplanations, ResultSet
from app.views.shortcuts_sheet import ShortcutsSheet
from app.views.timeline import StepTimeline
from app.window.actions import WindowActions
from app.window.banner import Banner
from app.window.job_status import JobStatus
from app.window.layout import CENTRE_MIN_WIDTH, MINIMUM_SIZE, fit_to_screen, restore_layout, save_layout, share_out
from app.window.menus import build_menus, shortcut_rows
from app.workers import cancel_all, preload_worker_modules
from engine.retrieval.evidence.ranking import explanation_line
from engine.retrieval.search import QueryInputError
from engine.retrieval.search.trust import step_trust

__all__ = ["MINIMUM_SIZE", "Banner", "CheckpointModels", "MainWindow"]

#: How long an information message stays in the status bar (ms).
MESSAGE_MS = 8000
#: Results whose tooltip explains their score (the best ones; the detail pane explains any selected item).
EXPLAINED_ITEMS = 200


class MainWindow(WindowActions, QMainWindow):
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
        self._from_top = False  # whether _set_results opens the grid at rank #1 (a newly shown step)
        self._shown_step: tuple[int | None, object] | None = None  # (step id, its result) last put in the grid
        self._shown_case_id: int | None = None
        self._restoring = False  # a case's working state is being put into the controls (no echo back)
        self._shown_gallery = state.gallery  # the gallery and whether any case was shown: a change clears the banner
        self._case_seen = state.case is not None
        # the open gallery summed up (app.provenance): the case line's tooltip and Gallery → Gallery information
        self._gallery_lines: list[str] = [] if state.gallery is None else gallery_summary(state.gallery)
        self.ask_confirmed_cut = self._ask_confirmed_cut
        self._build_views()
        if state.gallery is not None:
            self.results.set_camera_names(state.gallery.columns.cameras.names)
        self.job_status = JobStatus(self.statusBar())
        self.progress_bar, self.cancel_button = self.job_status.progress_bar, self.job_status.cancel_button
        self.cancel_button.clicked.connect(self.cancel_job)
        build_menus(self)
        self._connect()
        self.setMinimumSize(*MINIMUM_SIZE)
        self.fit_to_screen()
        restore_layout(self, settings)
        self._refresh_title()
        self._refresh_search_available()
        self._show_step(state.selected_step_id)

    def fit_to_screen(self) -> None:
        """Open filling the screen's free area (``app.window.layout.fit_to_screen``), panes at their shares."""
        fit_to_screen(self)
        self.reset_layout()

    def reset_layout(self) -> None:
        """Column and pane sizes as shares of the window."""
        share_out(self)

    def shortcut_rows(self) -> list[tuple[str, str]]:
        """Every shortcut of the menus, then the keys focused widgets answer to (the shortcuts sheet)."""
        return shortcut_rows(self)

    def show_shortcuts(self) -> ShortcutsSheet:
        sheet = ShortcutsSheet(self.shortcut_rows(), self)
        sheet.setModal(False)
        sheet.show()
        return sheet

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
        results.find_similar_across_outfits_requested.connect(
            lambda item: state.find_similar(item, outfit_changed=True))
        self.detail.marks_changed.connect(self._mark)
        self.detail.find_similar_requested.connect(state.find_similar)
        self.detail.find_similar_across_outfits_requested.connect(
            lambda item: state.find_similar(item, outfit_changed=True))
        # a dragged cut is a preview; only "Apply cut to this step" acts, on that step (never the next one's rule)
        self.distribution.threshold_changed.connect(results.set_preview_threshold)
        self.distribution.apply_requested.connect(self.apply_cut)
        self.notes.add_requested.connect(self.add_note)
        self.notes.edit_requested.connect(self.edit_note)

        state.case_changed.connect(self._case_changed)
        state.filters_changed.connect(self._filters_changed)
        state.working_state_changed.connect(self._working_state_changed)
        panel.inputs_changed.connect(self._inputs_edited)
        state.gallery_changed.connect(self._gallery_changed)
        state.selected_step_changed.connect(self._show_step)
        state.marks_changed.connect(self._marks_changed)
        state.busy_changed.connect(self._busy_changed)
        state.progress.connect(self.job_status.progress)
        state.error.connect(self.show_error)
        state.message.connect(self.show_message)
        panel.error.connect(lambda text: self.statusBar().showMessage(text, MESSAGE_MS))

    def _step_recorded(self, step_id: int) -> None:
        step = self.state.step_state(step_id)
        if step is not None:
            self.show_message(f"Step {self.step_label(step_id)}: {step.candidates_before:,} → "
                              f"{step.candidates_after:,} candidates in {step.seconds or 0:.2f} s")

    def _mark(self, item_ids: list, mark: str) -> None:
        self.state.mark_many(list(item_ids), mark)

    def _set_filters(self, cameras, time_range) -> None:
        self.state.set_filters(cameras, time_range)

    def _filters_changed(self, filters) -> None:
        """The controls always show the filters the next step will use (the open case's)."""
        self.results.set_filters(filters.cameras, filters.time_range)

    def _working_state_changed(self, working) -> None:
        """A case was opened, created or closed: its own query inputs and filters go back into the controls."""
        self._restoring = True
        try:
            self.query_panel.set_query_inputs(working.inputs)
            self.results.set_filters(working.filters.cameras, working.filters.time_range)
        finally:
            self._restoring = False

    def _inputs_edited(self) -> None:
        if not self._restoring:
            self.state.set_query_inputs(self.query_panel.query_inputs())

    # ------------------------------------------------------------------------------------------ state → views

    def _case_changed(self, case) -> None:
        gallery = self.state.gallery
        labeller = item_labeller(gallery)
        self.timeline.set_case(case, None if gallery is None else len(gallery), item_label=labeller)
        self.timeline.set_selected(self.state.selected_step_id)
        self.notes.set_case(case, self.step_label, labeller)
        case_id = None if case is None else case.case.id
        if case_id != self._shown_case_id:  # a case was opened: put its last description back, remember it
            if self._case_seen:  # a message about the case before is stale now (not one said at startup)
                self.banner.clear()
            self._case_seen = self._case_seen or case_id is not None
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
        """The step's label as the timeline, the status bar and the plot show it ("3", "3a"; "0" for the start;
        ``app.state.timeline_rows.step_label``)."""
        return step_label(self.state.case, step_id)

    def item_label(self, item_id: str) -> str:
        """A gallery item named for the analyst: camera and time (``app.state.item_label``), not its id."""
        return item_label(self.state.gallery, item_id)

    def _gallery_changed(self, gallery) -> None:
        if gallery is not self._shown_gallery:  # a message about the gallery before is stale now
            if self._shown_gallery is not None:
                self.banner.clear()
            self._shown_gallery = gallery
        self._gallery_lines = [] if gallery is None else gallery_summary(gallery)
        self.results.set_camera_names([] if gallery is None else gallery.columns.cameras.names)
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
            stored = None if step_id is None else self.state.step_state(step_id)
            self.distribution.set_step(result, self._confirmed(),
                                       label=None if stored is None else self.step_label(step_id))
            self.results.set_preview_threshold(None)  # a re-plot moves the cut line; the grid keeps the step's

    def _confirmed(self) -> list[str]:
        return [item for item, mark in self.state.marks.items() if mark == "confirmed"]

    def _show_step(self, step_id: int | None) -> None:
        """Results grid and distribution for a step (None: the whole gallery, unscored). A step (or a step's
        result) not shown just before opens at the top of its ranking with rank #1 current; showing the same
        one again keeps the grid's selection and scroll."""
        self.timeline.set_selected(step_id)
        gallery = self.state.gallery
        self.detail.clear()
        self._step_result = None
        if gallery is None:
            self._shown_step = None
            self.results.set_step_summary("")
            self._set_results(ResultSet.empty())
            self.distribution.clear()
            return
        result = self.state.step_result(step_id)
        self._step_result = result
        shown = self._shown_step
        self._from_top = shown is None or shown[0] != step_id or shown[1] is not result
        self._shown_step = (step_id, result)
        stored = None if step_id is None else self.state.step_state(step_id)
        header = step_header(stored, self.step_label(step_id), len(gallery))
        trust = None if result is None else step_trust(result, gallery)
        if trust is not None and trust.warning:
            header = f"{header}\n⚠ {trust.warning}"
        self.results.set_step_summary(header)
        self.distribution.set_can_apply(result is not None and stored is not None and not stored.undone)
        if result is not None:
            lines = DeferredExplanations(lambda: {item: explanation_line(e, labels=SOURCE_LABELS) for item, e in
                                                  result.explanations(EXPLAINED_ITEMS).items()})
            self._set_results(ResultSet.from_step(result, gallery, lines))
            self.results.set_ground_truth(*self._truth_identity(result))
            self.distribution.set_step(result, self._confirmed(),
                                       label=None if stored is None else self.step_label(step_id))
            self.results.set_preview_threshold(None)
        elif stored is not None and stored.gallery_id == self.state.gallery_id:
            kept = list(stored.kept_ids)
            scores = np.asarray(stored.kept_scores, dtype=np.float64)
            self._set_results(ResultSet.from_ids(gallery, kept, scores, kept=np.ones(len(kept), bool)))
            self.results.set_preview_threshold(None)
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

    def _truth_identity(self, result) -> tuple[str | None, bool]:
        """(the gallery identity a step's relevant candidates share, or None; whether it is the ground-truth
        identity chosen now): without a chosen one a find-similar step's ground truth is its example's own."""
        gallery = self.state.gallery
        if result.relevant is None or not result.relevant.any() or gallery is None:
            return None, False
        columns = gallery.columns
        codes = np.unique(columns.identity[np.asarray(result.rows)[np.asarray(result.relevant, bool)]])
        if codes.shape[0] != 1 or codes[0] < 0:
            return None, False
        identity = columns.identities.names[int(codes[0])]
        return identity, identity == self.state.target_identity

    def _set_results(self, results: ResultSet) -> None:
        self._scores = {item: float(score) for item, score in zip(results.ids, results.scores, strict=True)}
        self.results.set_results(results, from_top=self._from_top)

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
                explanation = result.explain(item_id)
                view = explanation.get("view")
                self.detail.set_explanation(explanation, similarity_line(view_network(gallery, view), view))

    def _refresh_title(self) -> None:
        case = self.state.case
        if case is None:
            self.case_label.setText("<span style='color:#6b7280'>No case open — Case → New case or Open case"
                                    "</span>")
        else:
            summary = case.case
            status = "" if summary.status == "open" else f" · <b style='color:#b45309'>{summary.status}</b>"
            gallery = self.state.gallery
            where = "" if gallery is None else f" · gallery {Path(gallery.root).name}"
            self.case_label.setText(f"<b>Case: {html.escape(summary.title)}</b>{status} · "
                                    f"{html.escape(steps_recorded(summary.step_count, case.steps))} · "
                                    f"{len(case.notes)} note{'s' if len(case.notes) != 1 else ''}"
                                    f"{html.escape(where)}")
        self.case_label.setToolTip("\n".join(self._gallery_lines))
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
        self.query_panel.set_search_available(not reason, reason)
        has_case = state.case is not None
        for action in (self.rename_case_action, self.note_action, self.export_action):
            action.setEnabled(has_case)

    # ------------------------------------------------------------------------------------------ jobs

    @property
    def busy(self) -> bool:
        """A background job runs (the state's one busy state)."""
        return self.state.busy

    def _busy_changed(self, busy: bool) -> None:
        self.timeline.set_busy(busy)
        self.query_panel.set_busy(busy, self.state.job_name)
        self.job_status.show_job(busy, self.state.job_name)
        self.cancel_action.setEnabled(busy)
        for action in (self.ingest_action, self.ingest_crops_action, self.open_gallery_action, self.new_case_action,
                       self.open_case_action):
            action.setEnabled(not busy)

    def show_gallery_info(self) -> list[str]:
        """Say what the open gallery holds (its items, the networks it ranks by, its attribute evidence) in the
        banner; returns the lines."""
        if self.state.gallery is None:
            self.show_error("Open a gallery first (Gallery menu)")
            return []
        self.show_notice("\n".join(self._gallery_lines))
        return list(self._gallery_lines)

    def cancel_job(self) -> None:
        self.state.cancel()

    def show_error(self, text: str) -> None:
        self.banner.show_message(text, "error")
        self.statusBar().showMessage(text, MESSAGE_MS)

    def show_message(self, text: str) -> None:
        self.statusBar().showMessage(text, MESSAGE_MS)

    def show_notice(self, text: str) -> None:
        """A notice that stays until dismissed (e.g. how to give a checkpoint)."""
        self.banner.show_message(text, "info")

    # ------------------------------------------------------------------------------------------ closing

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt API
        save_layout(self, self.settings, self.state.case_id)
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
