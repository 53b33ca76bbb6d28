"""``IngestFootageJob``: ingest a video, a folder of footage or a folder of person crops into a gallery folder
(``engine.ingest``) with a checkpoint's encoder, off the UI thread; the result is the ingest's summary."""

from __future__ import annotations

from pathlib import Path

from app.jobs.job import BackgroundJob
from app.workers import Job


class IngestFootageJob(BackgroundJob):
    """Inputs: the source, the gallery folder it grows and ``models`` (an ``app.checkpoint_models
    .CheckpointModels``: the ingest encoder and the checkpoint's attribute weights); ``crops``: every image of
    the folder is one person (``engine.ingest.crops``)."""

    name = "Ingesting"
    cancelled_message = "Ingest cancelled"

    def __init__(self, source: str | Path, gallery_root: str | Path, models, *, crops: bool = False) -> None:
        self.source = source
        self.gallery_root = Path(gallery_root)
        self.models = models
        self.crops = crops

    def run(self, job: Job):
        from contextlib import ExitStack

        from engine.index import writing
        from engine.ingest import IngestOptions, ingest

        with ExitStack() as lock:
            if self.gallery_root.is_dir():  # a second writer is refused at once, before the model loads
                lock.enter_context(writing(self.gallery_root))
            job.progress(0, 0, "Loading the model")
            encoder = self.models.ingest_encoder()
            return ingest(self.source, self.gallery_root, encoder, options=IngestOptions(crops=self.crops),
                          progress=job.engine_progress(f"Ingesting {Path(self.source).name}"),
                          weights=self.models.domain_weights())
