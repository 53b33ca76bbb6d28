"""The main window (DESIGN "The app"): query panel and step timeline on the left, the results grid in the
centre, the detail pane over the distribution panel on the right, a status bar with progress and cancel.

The window holds no case data: it wires the views to one ``AppState`` (views report, the state acts and
emits, views follow). Errors arrive as ``AppState.error`` sentences and are shown in a dismissible banner
and the status bar, never as a traceback or a blocking box. Footage ingest runs in a worker with the same
progress bar and cancel button.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.state import AppState
from app.views.detail import DetailPane
from app.views.distribution import DistributionPanel
from app.views.query_panel import QueryPanel
from app.views.results import ResultsView
from app.views.results_model import ResultSet
from app.views.timeline import StepTimeline
from app.workers import Job, WorkerHandle, cancel_all, preload_worker_modules, run_in_worker
from engine.attributes.ranking import explanation_line
from engine.search import QueryInputError

DEFAULT_SIZE = (1500, 950)
#: Left, centre, right column widths at the default size.
COLUMN_SIZES = (390, 680, 430)
LEFT_MIN_WIDTH = 320
#: How long an information message stays in the status bar (ms).
MESSAGE_MS = 8000
#: Results whose tooltip explains their score (the best ones; the detail pane explains any selected item).
EXPLAINED_ITEMS = 200


class CheckpointModels:
    """One checkpoint's model, loaded once on first use (from any thread), for query and ingest encoders."""

    def __init__(self, checkpoint: str | Path, device: str | None = "cpu") -> None:
        self.checkpoint = Path(checkpoint)
        self.device = device
        self._model = None
        self._lock = threading.Lock()

    def model(self):
        with self._lock:
            if self._model is None:
                from engine.models import load

                self._model = load(self.checkpoint, device=self.device)
            return self._model

    def query_encoder(self, _gallery=None):
        """An ``engine.search`` query encoder with the checkpoint's attribute weight (the ``encoder_factory`` of
        ``AppState.load_gallery``)."""
        from engine.search.opening import query_encoder

        return query_encoder(self.model(), self.checkpoint)

    def ingest_encoder(self):
        from engine.ingest import ModelEncoder

        return ModelEncoder(self.model())

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
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        preload_worker_modules()
        self.state = state
        self.models = models
        self._scores: dict[str, float] = {}
        self._step_result = None
        self._ingest: WorkerHandle | None = None
        self._build_views()
        self._build_status_bar()
        self._build_menus()
        self._connect()
        self.resize(*DEFAULT_SIZE)
        self._refresh_title()
        self._refresh_search_available()
        self._show_step(state.selected_step_id)

    # ------------------------------------------------------------------------------------------ layout

    def _build_views(self) -> None:
        self.query_panel = QueryPanel()
        self.timeline = StepTimeline()
        self.results = ResultsView()
        self.detail = DetailPane()
        self.distribution = DistributionPanel()
        self.banner = Banner()

        query_scroll = QScrollArea()
        query_scroll.setWidget(self.query_panel)
        query_scroll.setWidgetResizable(True)
        query_scroll.setFrameShape(QFrame.Shape.NoFrame)
        query_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        query_scroll.setMinimumWidth(LEFT_MIN_WIDTH)
        self.timeline.setMinimumWidth(LEFT_MIN_WIDTH)

        self.left = QSplitter(Qt.Orientation.Vertical)
        self.left.addWidget(query_scroll)
        self.left.addWidget(self.timeline)
        self.left.setSizes([560, 330])
        self.right = QSplitter(Qt.Orientation.Vertical)
        self.right.addWidget(self.detail)
        self.right.addWidget(self.distribution)
        self.right.setSizes([520, 370])
        self.columns = QSplitter(Qt.Orientation.Horizontal)
        for widget in (self.left, self.results, self.right):
            self.columns.addWidget(widget)
        self.columns.setSizes(list(COLUMN_SIZES))
        self.columns.setStretchFactor(1, 1)
        for splitter in (self.left, self.right, self.columns):
            splitter.setChildrenCollapsible(False)
            splitter.setHandleWidth(6)

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(6, 6, 6, 0)
        layout.setSpacing(6)
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
                                                self.find_similar_selected, "Shift+F")
        self.find_similar_action.setToolTip("Next step ranks by likeness to the selected item (F in the grid)")
        self.target_action = self._action(search, "Ground-truth &identity…", self.choose_target_identity)
        self.target_action.setToolTip("Trainers: score the next steps against a known identity of a built world")
        search.addSeparator()
        self.restore_action = self._action(search, "&Re-run the case's steps", self.state.restore_session)
        self.cancel_action = self._action(search, "&Cancel running job", self.cancel_job, "Esc")

        view = menu.addMenu("&View")
        self._action(view, "Focus &query", self.query_panel.text_edit.setFocus, "Ctrl+L")
        self._action(view, "Focus &results", self.results.setFocus, "Ctrl+R")
        self._action(view, "Whole &gallery (before step 1)", lambda: self.state.select_step(None), "Ctrl+Home")
        self._action(view, "&Dismiss message", self.banner.hide, "Ctrl+D")
        self._action(view, "Reset &layout", self.reset_layout)

    def _action(self, menu, text: str, slot: Callable[[], object], shortcut=None) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(lambda _checked=False: slot())
        menu.addAction(action)
        return action

    def reset_layout(self) -> None:
        self.columns.setSizes(list(COLUMN_SIZES))
        self.left.setSizes([560, 330])
        self.right.setSizes([520, 370])

    # ------------------------------------------------------------------------------------------ wiring

    def _connect(self) -> None:
        state, panel, timeline, results = self.state, self.query_panel, self.timeline, self.results
        panel.search_requested.connect(state.search)
        panel.cancel_requested.connect(state.cancel)
        timeline.step_selected.connect(state.select_step)
        timeline.undo_requested.connect(state.undo_step)
        timeline.branch_requested.connect(state.branch_from)
        results.marks_changed.connect(self._mark)
        results.filters_changed.connect(self._set_filters)
        results.current_changed.connect(self._show_item)
        results.open_requested.connect(self._show_item)
        results.find_similar_requested.connect(state.find_similar)
        self.detail.marks_changed.connect(self._mark)
        self.detail.find_similar_requested.connect(state.find_similar)
        self.distribution.threshold_changed.connect(results.set_preview_threshold)
        self.distribution.threshold_released.connect(panel.set_threshold)

        state.case_changed.connect(self._case_changed)
        state.gallery_changed.connect(self._gallery_changed)
        state.selected_step_changed.connect(self._show_step)
        state.marks_changed.connect(self._marks_changed)
        state.busy_changed.connect(self._busy_changed)
        state.progress.connect(self._progress)
        state.error.connect(self.show_error)
        state.message.connect(self.show_message)
        panel.error.connect(lambda text: self.statusBar().showMessage(text, MESSAGE_MS))

    def _mark(self, item_ids: list, mark: str) -> None:
        self.state.mark_many(list(item_ids), mark)

    def _set_filters(self, cameras, time_range) -> None:
        self.state.set_filters(cameras, time_range)

    # ------------------------------------------------------------------------------------------ state → views

    def _case_changed(self, case) -> None:
        gallery = self.state.gallery
        self.timeline.set_case(case, None if gallery is None else len(gallery))
        self.timeline.set_selected(self.state.selected_step_id)
        self._refresh_title()
        self._refresh_search_available()

    def _gallery_changed(self, gallery) -> None:
        self._case_changed(self.state.case)
        self._show_step(self.state.selected_step_id)

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
        if result is not None:
            lines = {item: explanation_line(e) for item, e in result.explanations(EXPLAINED_ITEMS).items()}
            self._set_results(ResultSet.from_step(result, gallery, lines))
            self.distribution.set_step(result, self._confirmed())
            self.results.set_preview_threshold(None)
        elif stored is not None and stored.gallery_id == self.state.gallery_id:
            kept = list(stored.kept_ids)
            scores = np.asarray(stored.kept_scores, dtype=np.float64)
            self._set_results(ResultSet.from_ids(gallery, kept, scores, kept=np.ones(len(kept), bool)))
            if kept:
                self.distribution.set_scores(scores, len(kept), keep_rule=stored.keep_rule,
                                             keep_value=stored.keep_value,
                                             title=f"Step {stored.seq} · kept items as stored (re-run the "
                                                   f"case for every candidate's score)")
            else:
                self.distribution.clear()
        elif stored is not None:
            self._set_results(ResultSet.empty())
            self.distribution.clear()
            self.show_message(f"Step {stored.seq} was searched on another gallery: open it to see its items")
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
        for action in (self.rename_case_action, self.note_action):
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
            labels = [f"#{c.id}  {c.title}  ({c.step_count} steps, {c.status})" for c in cases]
            label, ok = QInputDialog.getItem(self, "Open case", "Case:", labels, 0, False)
            if not ok:
                return False
            case_id = cases[labels.index(label)].id
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
        item_id = self.results.current_id() or self.detail.item_id()
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
        if self._ingest is not None:
            self._ingest.cancel()
        self.state.close()
        cancel_all(timeout_ms=3000)
        self.detail.wait(2000)
        super().closeEvent(event)

