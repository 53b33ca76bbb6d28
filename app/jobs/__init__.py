"""The app's background jobs (docs/architecture.md, "The app's jobs"): one module per job, each a
``BackgroundJob`` with its inputs, progress, cancel and result, and the one ``JobRunner`` that runs them and
holds the app's busy state."""

from app.jobs.export_report import ExportReportJob, ReportExportError
from app.jobs.ingest_footage import IngestFootageJob
from app.jobs.job import BackgroundJob
from app.jobs.open_gallery import GalleryRecord, OpenedGallery, OpenGalleryJob, check_pair
from app.jobs.prepare_demo import PrepareDemoJob
from app.jobs.rerun_steps import (
    ReplayOutcome,
    RerunOnVersionJob,
    RerunStepsJob,
    VersionRerun,
    apply_marks,
    replay,
    split_marks,
)
from app.jobs.runner import JobRunner
from app.jobs.search_step import SearchStepJob, StepOutcome

__all__ = [
    "BackgroundJob",
    "ExportReportJob",
    "GalleryRecord",
    "IngestFootageJob",
    "JobRunner",
    "OpenGalleryJob",
    "OpenedGallery",
    "PrepareDemoJob",
    "ReplayOutcome",
    "ReportExportError",
    "RerunOnVersionJob",
    "RerunStepsJob",
    "SearchStepJob",
    "StepOutcome",
    "VersionRerun",
    "apply_marks",
    "check_pair",
    "replay",
    "split_marks",
]
