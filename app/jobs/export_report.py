"""``ExportReportJob``: write a case's report and its manifest (``app.report.export_report``) off the UI thread.

Face redaction runs a face-detection network on every thumbnail, and a long case lays out into dozens of pages,
so an export takes seconds; the job reports each stage (the case read, its steps laid out, each thumbnail, each
step's plot, each PDF page) and stops at a cancel. A PDF is drawn in a child process (``apart``), as Qt's text
layout would otherwise hold the interpreter lock, and with it the window, for up to a second at a time. The
exporter writes both files atomically and stops only before the report is moved into place, so a cancelled
export leaves the target as it was and no temporary file. The result is the ``ReportResult``; a failure is one
sentence saying the report could not be written and why.
"""

from __future__ import annotations

from pathlib import Path

from app.jobs.job import BackgroundJob
from app.workers import Job, describe_error


class ReportExportError(ValueError):
    """The report could not be written (the sentence names the file and the problem)."""


class ExportReportJob(BackgroundJob):
    """Inputs: the case database's path, the case, the report's path (.pdf or .html) and whether to blur faces
    in the thumbnails. The exporter opens its own read-only connection to the case database."""

    name = "Exporting the report"
    cancelled_message = "Report export cancelled: nothing was written"

    def __init__(self, db_path: str | Path, case_id: int, out_path: str | Path, *, blur_faces: bool = False) -> None:
        self.db_path = Path(db_path)
        self.case_id = int(case_id)
        self.out_path = Path(out_path)
        self.blur_faces = bool(blur_faces)

    def run(self, job: Job):
        from app.report import export_report

        try:
            return export_report(self.db_path, self.case_id, self.out_path, blur_faces=self.blur_faces,
                                 progress=job.progress, apart=True)
        except (ValueError, OSError) as exc:
            raise ReportExportError(f"The report could not be written: {describe_error(exc)}") from exc
