"""``CaseView``: the open case and gallery as the window shows them: the case line above the columns (with the
gallery summed up in its tooltip), the window's title, the step timeline, the notes, the query controls (the
case's own inputs and filters, whether a search can run now), and a banner cleared when what it spoke of is
gone."""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QLabel

from app.provenance import gallery_summary
from app.state import AppState
from app.state.item_label import item_labeller
from app.state.timeline_rows import step_label
from app.views.case_list import steps_recorded
from app.views.notes_panel import NotesPanel
from app.views.query_panel import QueryPanel
from app.views.results import ResultsView
from app.views.timeline import StepTimeline
from app.window.banner import Banner


class CaseView:
    """Follows ``state``'s case, gallery, filters and working state into the views; remembers the case opened in
    ``settings``; ``set_title`` sets the window's title and ``set_case_open`` enables the actions that need a
    case."""

    def __init__(self, state: AppState, settings: QSettings | None, *, query_panel: QueryPanel,
                 timeline: StepTimeline, notes: NotesPanel, results: ResultsView, banner: Banner, case_label: QLabel,
                 set_title: Callable[[str], None], set_case_open: Callable[[bool], None]) -> None:
        self.state = state
        self.settings = settings
        self.query_panel = query_panel
        self.timeline = timeline
        self.notes = notes
        self.results = results
        self.banner = banner
        self.case_label = case_label
        self.set_title = set_title
        self.set_case_open = set_case_open
        self._shown_case_id: int | None = None
        self._restoring = False  # a case's working state is being put into the controls (no echo back)
        self._shown_gallery = state.gallery  # the gallery and whether any case was shown: a change clears the banner
        self._case_seen = state.case is not None
        #: The open gallery summed up (``app.provenance``): the case line's tooltip and Gallery → Gallery information.
        self.gallery_lines: list[str] = [] if state.gallery is None else gallery_summary(state.gallery)
        if state.gallery is not None:
            results.set_camera_names(state.gallery.columns.cameras.names)

    def step_label(self, step_id: int | None) -> str:
        return step_label(self.state.case, step_id)

    def case_changed(self, case) -> None:
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
        self.refresh_title()
        self.refresh_search_available()

    def gallery_changed(self, gallery) -> None:
        if gallery is not self._shown_gallery:  # a message about the gallery before is stale now
            if self._shown_gallery is not None:
                self.banner.clear()
            self._shown_gallery = gallery
        self.gallery_lines = [] if gallery is None else gallery_summary(gallery)
        self.results.set_camera_names([] if gallery is None else gallery.columns.cameras.names)
        self.case_changed(self.state.case)

    def filters_changed(self, filters) -> None:
        """The controls always show the filters the next step will use (the open case's)."""
        self.results.set_filters(filters.cameras, filters.time_range)

    def working_state_changed(self, working) -> None:
        """A case was opened, created or closed: its own query inputs and filters go back into the controls."""
        self._restoring = True
        try:
            self.query_panel.set_query_inputs(working.inputs)
            self.results.set_filters(working.filters.cameras, working.filters.time_range)
        finally:
            self._restoring = False

    def inputs_edited(self) -> None:
        if not self._restoring:
            self.state.set_query_inputs(self.query_panel.query_inputs())

    def refresh_title(self) -> None:
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
        self.case_label.setToolTip("\n".join(self.gallery_lines))
        parts = ["Lineup"]
        case = self.state.case
        parts.append("no case open" if case is None else f"Case: {case.case.title}"
                     + ("" if case.case.status == "open" else f" ({case.case.status})"))
        gallery = self.state.gallery
        parts.append("no gallery" if gallery is None else f"Gallery: {Path(gallery.root).name} "
                     f"({len(gallery):,} items)")
        self.set_title(" — ".join(parts))

    def refresh_search_available(self) -> None:
        state = self.state
        reason = ""
        if state.case is None:
            reason = "Open or create a case first (Case menu)"
        elif state.gallery is None:
            reason = "Open a gallery first (Gallery menu)"
        elif state.case.case.status != "open":
            reason = f"Case {state.case.case.title!r} is {state.case.case.status}"
        self.query_panel.set_search_available(not reason, reason)
        self.set_case_open(state.case is not None)
