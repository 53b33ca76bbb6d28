"""``PrepareDemoJob``: the built-in demo gallery, off the UI thread (``app.demo_gallery``): the cached one, the
shipped one unpacked and verified, or the demo world built and ingested once; the result is the gallery folder."""

from __future__ import annotations

from pathlib import Path

from app.demo_gallery import prepare_demo_gallery
from app.jobs.job import BackgroundJob
from app.workers import Job


class PrepareDemoJob(BackgroundJob):
    """Input: ``models`` (an ``app.checkpoint_models.CheckpointModels``). A cancel is resumed at the next
    launch (the ingest skips the sources it finished)."""

    name = "Preparing the demo"
    cancelled_message = ("Preparing the demo gallery was cancelled; it resumes at the next launch (or open a "
                         "gallery from the Gallery menu).")

    def __init__(self, models) -> None:
        self.models = models

    def run(self, job: Job) -> Path:
        return prepare_demo_gallery(self.models, job)
