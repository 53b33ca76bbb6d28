"""``ReportExport``: Case → Export report…: the open case's report written by a background job
(``ExportReportJob`` on the state's ``JobRunner``: progress and cancel in the status bar)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QWidget

from app.jobs import ExportReportJob
from app.state import AppState
from app.views.export_dialog import ask_export
from app.window.messages import Messages
from app.workers import WorkerHandle


class ReportExport:
    """Exports the case open in ``state``; its dialog opens over ``parent``."""

    def __init__(self, parent: QWidget, state: AppState, messages: Messages) -> None:
        self.parent = parent
        self.state = state
        self.messages = messages

    def export_report(self, path: str | Path | None = None, blur_faces: bool | None = None) -> WorkerHandle | None:
        """Write the open case's report (PDF or HTML by the file's ending) and its manifest as a background job
        (``ExportReportJob``: progress and cancel in the status bar); asks where (and whether to blur faces) when
        not told. Returns the job's handle (its ``result`` is the ``ReportResult``), or None when nothing
        started."""
        state = self.state
        if state.case is None or state.store is None:
            self.messages.error("Open or create a case first")
            return None
        if state.busy:
            self.messages.error(state.jobs.refusal())
            return None
        if path is None:
            safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in state.case.case.title).strip("-")
            answer = ask_export(Path.home() / f"{safe or 'case'}-report.pdf", self.parent)
            if answer is None:
                return None
            path, chosen_blur = answer
            blur_faces = chosen_blur if blur_faces is None else blur_faces

        def written(result) -> None:
            pages = "" if result.pages is None else f", {result.pages} pages"
            self.messages.notice(f"Report written: {result.report_path}{pages} (manifest "
                                 f"{result.manifest_path.name}; check it with `lineup report verify`)")

        job = ExportReportJob(state.store.path, state.case_id, path, blur_faces=bool(blur_faces))
        return state.jobs.start(job, written)
