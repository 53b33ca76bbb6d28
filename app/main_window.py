"""The main window (docs/architecture.md): query panel over the step timeline and the case's notes on the left, the
results grid in the centre, the detail pane over the distribution panel on the right, the open case named
above them, the sightings timeline under them and a status bar with progress and cancel.

The window fits a 1366×768 screen and works up to 4K (``app.window.layout``: it opens at a size taken from the
screen, its minimum size ``MINIMUM_SIZE`` is fixed and never grows with content: panes scroll, toolbars wrap,
labels elide), and with ``settings`` it remembers its geometry, its splitters and the last case opened.

The window holds no case data and runs no work: it wires the views to one ``AppState`` (views report, the
state acts and emits, views follow) and composes its parts (``app.window``), each with one job and handed what
it works on: ``Panes`` (the widgets and their layout), ``Messages`` (the banner and the status bar),
``CaseActions``, ``ReportExport``, ``GalleryActions`` and ``StepActions`` (what the menus, buttons and keys do;
work goes to background jobs on the state's ``JobRunner``), ``WindowMenus`` (the menu bar and its keys),
``CaseView`` (the open case and gallery in the case line, the title and the controls), ``StepDisplay`` (the step
on view in the grid, the plot and the detail pane), ``QuestionDisplay`` (the question to ask the witness after
it), ``SightingsDisplay`` (the case's sightings on the timeline) and ``JobStatus`` (the one running job). Errors
arrive as ``AppState.error`` sentences and are shown in a dismissible banner and the status bar, never as a
traceback or a blocking box.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QMainWindow, QMessageBox, QWidget

from app.checkpoint_models import CheckpointModels
from app.gc_freeze import freeze_startup_objects
from app.state import AppState, KeepRule
from app.state.item_label import item_label
from app.state.timeline_rows import step_label
from app.views.shortcuts_sheet import ShortcutsSheet
from app.window.banner import Banner
from app.window.case_actions import CaseActions
from app.window.case_view import CaseView
from app.window.export_actions import ReportExport
from app.window.gallery_actions import GalleryActions
from app.window.job_status import JobStatus
from app.window.layout import (
    MINIMUM_SIZE,
    SIGHTINGS_OPEN_FROM,
    fit_to_screen,
    restore_layout,
    save_layout,
    share_out,
)
from app.window.menus import ACTION_NAMES, WindowMenus, shortcut_rows
from app.window.messages import Messages
from app.window.panes import Panes
from app.window.sightings import SightingsDisplay
from app.window.step_actions import StepActions
from app.window.step_display import StepDisplay
from app.window.witness_display import QuestionDisplay
from app.workers import WorkerHandle, cancel_all, preload_worker_modules

__all__ = ["MINIMUM_SIZE", "Banner", "CheckpointModels", "MainWindow"]


class MainWindow(QMainWindow):
    """See the module docstring. ``models`` (optional) loads the checkpoint for galleries opened from the
    Gallery menu and for ingest; without it only find-similar works on a newly opened gallery. The views
    (``query_panel``, ``timeline``, ``notes``, ``results``, ``detail``, ``distribution``, ``banner``, …) and the
    menus' actions (``new_case_action``, ``export_action``, ``cancel_action``, …) are attributes."""

    def __init__(self, state: AppState, models: CheckpointModels | None = None,
                 parent: QWidget | None = None, *, settings: QSettings | None = None) -> None:
        super().__init__(parent)
        preload_worker_modules()
        freeze_startup_objects()  # a full garbage collection over them stalled the window ~0.5 s
        self.state = state
        self.models = models
        self.settings = settings
        self.panes = panes = Panes()
        self.setCentralWidget(panes.central)
        for name in ("query_panel", "timeline", "notes", "results", "detail", "distribution", "sightings", "banner",
                     "case_label", "side_tabs", "detail_scroll", "left", "right", "columns", "rows"):
            setattr(self, name, getattr(panes, name))
        self.messages = Messages(panes.banner, self.statusBar())
        self.job_status = JobStatus(self.statusBar())
        self.progress_bar, self.cancel_button = self.job_status.progress_bar, self.job_status.cancel_button
        self.cancel_button.clicked.connect(self.cancel_job)

        self.cases = CaseActions(self, state, self.messages, panes.detail, panes.notes)
        self.export = ReportExport(self, state, self.messages)
        self.galleries = GalleryActions(self, state, models, self.messages,
                                        restore_if_needed=self.cases.restore_if_needed,
                                        summary=lambda: self.case_view.gallery_lines)
        self.steps = StepActions(self, state, self.messages, results=panes.results, detail=panes.detail,
                                 distribution=panes.distribution, timeline=panes.timeline)
        self.menus = WindowMenus(self, panes, state, self.messages, cases=self.cases, export=self.export,
                                 galleries=self.galleries, steps=self.steps, reset_layout=self.reset_layout,
                                 show_shortcuts=self.show_shortcuts)
        for name in ACTION_NAMES:
            setattr(self, name, getattr(self.menus, name))
        self.case_view = CaseView(state, settings, query_panel=panes.query_panel, timeline=panes.timeline,
                                  notes=panes.notes, results=panes.results, banner=panes.banner,
                                  case_label=panes.case_label, set_title=self.setWindowTitle,
                                  set_case_open=self.menus.set_case_open)
        self.step_display = StepDisplay(state, self.messages, results=panes.results, detail=panes.detail,
                                        distribution=panes.distribution, timeline=panes.timeline)
        self.sightings_display = SightingsDisplay(state, panes.sightings, self.messages, results=panes.results,
                                                  show_item=self.step_display.show_item,
                                                  follow_item=self.steps.follow_item,
                                                  follow_window=self.steps.follow_window,
                                                  set_follow_window=self.steps.set_follow_window)
        self._connect()
        self.witness = QuestionDisplay(state, panes.query_panel, self.messages)
        self.setMinimumSize(*MINIMUM_SIZE)
        self.fit_to_screen()
        restore_layout(self, panes.splitters(), settings)
        self.case_view.refresh_title()
        self.case_view.refresh_search_available()
        self.step_display.show_step(state.selected_step_id)

    # ------------------------------------------------------------------------------------------ wiring

    def _connect(self) -> None:
        state, panes, messages = self.state, self.panes, self.messages
        panel, timeline, results, detail = panes.query_panel, panes.timeline, panes.results, panes.detail
        panel.search_requested.connect(state.search)
        panel.cancel_requested.connect(state.cancel)
        timeline.step_selected.connect(state.select_step)
        timeline.undo_requested.connect(self.steps.undo_step)
        timeline.branch_requested.connect(self.steps.branch_from)
        state.step_recorded.connect(self._step_recorded)
        results.marks_changed.connect(self._mark)
        results.filters_changed.connect(state.set_filters)
        results.current_changed.connect(self.step_display.show_item)
        results.open_requested.connect(self.step_display.show_item)
        results.find_similar_requested.connect(state.find_similar)
        results.find_similar_across_outfits_requested.connect(
            lambda item: state.find_similar(item, outfit_changed=True))
        detail.marks_changed.connect(self._mark)
        detail.find_similar_requested.connect(state.find_similar)
        detail.find_similar_across_outfits_requested.connect(
            lambda item: state.find_similar(item, outfit_changed=True))
        # a dragged cut is a preview; only "Apply cut to this step" acts, on that step (never the next one's rule)
        panes.distribution.threshold_changed.connect(results.set_preview_threshold)
        panes.distribution.apply_requested.connect(self.steps.apply_cut)
        panes.notes.add_requested.connect(self.cases.add_note)
        panes.notes.edit_requested.connect(self.cases.edit_note)

        state.case_changed.connect(self.case_view.case_changed)
        state.filters_changed.connect(self.case_view.filters_changed)
        state.working_state_changed.connect(self.case_view.working_state_changed)
        panel.inputs_changed.connect(self.case_view.inputs_edited)
        state.gallery_changed.connect(self._gallery_changed)
        state.selected_step_changed.connect(self.step_display.show_step)
        state.marks_changed.connect(self.step_display.marks_changed)
        state.busy_changed.connect(self._busy_changed)
        state.progress.connect(self.job_status.progress)
        state.error.connect(messages.error)
        state.message.connect(messages.message)
        panel.error.connect(messages.message)

    def _step_recorded(self, step_id: int) -> None:
        step = self.state.step_state(step_id)
        if step is not None:
            self.show_message(f"Step {self.step_label(step_id)}: {step.candidates_before:,} → "
                              f"{step.candidates_after:,} candidates in {step.seconds or 0:.2f} s")

    def _mark(self, item_ids: list, mark: str) -> None:
        self.state.mark_many(list(item_ids), mark)

    def _gallery_changed(self, gallery) -> None:
        self.case_view.gallery_changed(gallery)
        self.step_display.show_step(self.state.selected_step_id)
        self.panes.query_panel.set_token_counter(_token_counter(self.state.encoder))

    def _busy_changed(self, busy: bool) -> None:
        self.panes.timeline.set_busy(busy)
        self.panes.query_panel.set_busy(busy, self.state.job_name)
        self.job_status.show_job(busy, self.state.job_name)
        self.menus.set_busy(busy)

    # ------------------------------------------------------------------------------------------ layout and help

    def fit_to_screen(self) -> None:
        """Open filling the screen's free area (``app.window.layout.fit_to_screen``), panes at their shares."""
        fit_to_screen(self)
        self.reset_layout()

    def reset_layout(self) -> None:
        """Column and pane sizes as shares of the window; the sightings timeline open in a tall one."""
        share_out(self, self.panes.columns, self.panes.left, self.panes.right)
        self.panes.open_sightings(self.height() >= SIGHTINGS_OPEN_FROM, self.height())

    def shortcut_rows(self) -> list[tuple[str, str]]:
        """Every shortcut of the menus, then the keys focused widgets answer to (the shortcuts sheet)."""
        return shortcut_rows(self.menuBar())

    def show_shortcuts(self) -> ShortcutsSheet:
        sheet = ShortcutsSheet(self.shortcut_rows(), self)
        sheet.setModal(False)
        sheet.show()
        return sheet

    # ------------------------------------------------------------------------------------------ labels and messages

    def step_label(self, step_id: int | None) -> str:
        """The step's label as the timeline, the status bar and the plot show it ("3", "3a"; "0" for the start;
        ``app.state.timeline_rows.step_label``)."""
        return step_label(self.state.case, step_id)

    def item_label(self, item_id: str) -> str:
        """A gallery item named for the analyst: camera and time (``app.state.item_label``), not its id."""
        return item_label(self.state.gallery, item_id)

    def show_error(self, text: str) -> None:
        self.messages.error(text)

    def show_message(self, text: str) -> None:
        self.messages.message(text)

    def show_notice(self, text: str) -> None:
        """A notice that stays until dismissed (e.g. how to give a checkpoint)."""
        self.messages.notice(text)

    # ------------------------------------------------------------------------------------------ jobs

    @property
    def busy(self) -> bool:
        """A background job runs (the state's one busy state)."""
        return self.state.busy

    def cancel_job(self) -> None:
        self.state.cancel()

    # ------------------------------------------------------------------------------------------ actions (the parts')

    def new_case(self, title: str | None = None) -> int | None:
        return self.cases.new_case(title)

    def open_case(self, case_id: int | None = None) -> bool:
        return self.cases.open_case(case_id)

    def restore_if_needed(self) -> None:
        self.cases.restore_if_needed()

    def rename_case(self, title: str | None = None) -> bool:
        return self.cases.rename_case(title)

    def add_note(self, text: str | None = None) -> int | None:
        return self.cases.add_note(text)

    def edit_note(self, note_id: int | None = None, text: str | None = None) -> bool:
        return self.cases.edit_note(note_id, text)

    def export_report(self, path: str | Path | None = None, blur_faces: bool | None = None) -> WorkerHandle | None:
        return self.export.export_report(path, blur_faces)

    def open_gallery(self, path: str | Path | None = None) -> WorkerHandle | None:
        return self.galleries.open_gallery(path)

    def new_gallery(self):
        return self.galleries.new_gallery()

    def open_case_gallery(self, skip: Callable[[Path], bool] | None = None) -> WorkerHandle | bool | None:
        return self.galleries.open_case_gallery(skip)

    def ingest_footage(self, source: str | Path | None = None, crops: bool = False) -> WorkerHandle | None:
        return self.galleries.ingest_footage(source, crops)

    def ingest_crops(self, source: str | Path | None = None) -> WorkerHandle | None:
        return self.galleries.ingest_crops(source)

    def show_gallery_info(self) -> list[str]:
        return self.galleries.show_gallery_info()

    def apply_cut(self, threshold: float) -> WorkerHandle | None:
        return self.steps.apply_cut(threshold)

    @property
    def ask_confirmed_cut(self) -> Callable[[list[tuple[str, float]], KeepRule], str]:
        """Asked when a cut would fall above confirmed items (``StepActions.ask_confirmed_cut``); settable."""
        return self.steps.ask_confirmed_cut

    @ask_confirmed_cut.setter
    def ask_confirmed_cut(self, ask: Callable[[list[tuple[str, float]], KeepRule], str]) -> None:
        self.steps.ask_confirmed_cut = ask

    def confirmed_cut_box(self, below: list[tuple[str, float]], rule: KeepRule) -> QMessageBox:
        return self.steps.confirmed_cut_box(below, rule)

    def choose_target_identity(self, identity: str | None = None) -> bool:
        return self.steps.choose_target_identity(identity)

    def find_similar_selected(self, outfit_changed: bool = False) -> None:
        self.steps.find_similar_selected(outfit_changed)

    def find_similar_across_outfits_selected(self) -> None:
        self.steps.find_similar_across_outfits_selected()

    def undo_step(self) -> bool:
        return self.steps.undo_step()

    def branch_from(self, step_id: int | None) -> bool:
        return self.steps.branch_from(step_id)

    # ------------------------------------------------------------------------------------------ closing

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt API
        save_layout(self, self.panes.splitters(), self.settings, self.state.case_id)
        self.state.close()
        cancel_all(timeout_ms=3000)
        self.panes.detail.wait(2000)
        super().closeEvent(event)


def _token_counter(encoder) -> Callable[[str], tuple[int, int]] | None:
    """(tokens, context length) of a text with the encoder's model tokenizer, or None without one."""
    tokenizer = getattr(getattr(encoder, "model", None), "tokenizer", None)
    if tokenizer is None:
        return None
    return lambda text: (tokenizer.lengths([text])[0], tokenizer.context_length)
