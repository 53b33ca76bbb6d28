"""``GalleryActions``: what the Gallery menu does: open a gallery (or the one the open case searched), make a new
one from queued sources, ingest footage or person crops into the open one, and say what the open one holds.
Each asks what it needs in a dialog when not told (tests and demo scripts pass it), then starts a background job
on the state's ``JobRunner`` (``state.jobs``); the window never runs work itself."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QWidget

from app.checkpoint_models import CheckpointModels
from app.jobs import IngestFootageJob
from app.state import AppState
from app.state.gallery_versions import case_gallery_path
from app.state.ingest_queue import IngestQueue
from app.views.file_filters import footage_filter
from app.views.new_gallery_dialog import NewGalleryDialog
from app.window.messages import Messages
from app.workers import WorkerHandle


class GalleryActions:
    """Gallery actions on ``state`` with ``models`` (None: no checkpoint, so no text queries and no ingest);
    dialogs open over ``parent``. ``restore_if_needed`` re-runs a reopened case's path once its gallery is open;
    ``summary`` gives the open gallery summed up (``app.provenance.gallery_summary``)."""

    def __init__(self, parent: QWidget, state: AppState, models: CheckpointModels | None, messages: Messages, *,
                 restore_if_needed: Callable[[], None], summary: Callable[[], list[str]]) -> None:
        self.parent = parent
        self.state = state
        self.models = models
        self.messages = messages
        self.restore_if_needed = restore_if_needed
        self.summary = summary
        self._new_gallery_dialog: NewGalleryDialog | None = None

    def open_gallery(self, path: str | Path | None = None) -> WorkerHandle | None:
        if path is None:
            path = QFileDialog.getExistingDirectory(self.parent, "Open gallery folder")
            if not path:
                return None
        factory = None if self.models is None else self.models.query_encoder
        handle = self.state.load_gallery(path, factory)
        if handle is not None:
            handle.result.connect(lambda _value: self._gallery_opened())
        return handle

    def _gallery_opened(self) -> None:
        """After the state took the new gallery (and cleared the last gallery's banner): say what it lacks."""
        if self.models is None:
            self.messages.notice("No checkpoint was given: only find-similar searches work on this gallery. "
                                 "Start with `lineup app --checkpoint PATH` for text, sketch and IR queries.")
        self.restore_if_needed()

    def new_gallery(self) -> NewGalleryDialog:
        """Gallery → New gallery…: the dialog that queues footage, crop folders or built worlds for a new gallery
        (``IngestQueue`` on the state's job runner); the gallery opens when its queue is done. One dialog and
        one queue per window, shown again when asked again."""
        dialog = self._new_gallery_dialog
        if dialog is None:
            queue = IngestQueue(self.state.jobs, self.models, parent=self.parent)
            dialog = NewGalleryDialog(queue, self.parent)
            dialog.gallery_ready.connect(self.open_gallery)
            self._new_gallery_dialog = dialog
        if self.models is None:
            dialog.status_label.setText("Ingest needs a model: start with `lineup app --checkpoint PATH`")
        dialog.show()
        dialog.raise_()
        return dialog

    def open_case_gallery(self, skip: Callable[[Path], bool] | None = None) -> WorkerHandle | bool | None:
        """Open the gallery the open case goes on with (its head step's; relaunch reopens the last case with its
        own gallery, and the state then finds the version its steps searched). None: the case has no gallery,
        or ``skip(folder)`` says the caller opens it (the demo gallery); False: the gallery is missing (the
        banner says so)."""
        case = self.state.case
        folder = case_gallery_path(case)
        if folder is None or (skip is not None and skip(folder)):
            return None
        if not (folder / "gallery.json").is_file():
            self.messages.error(f"Case {case.case.title!r} searched the gallery {folder}, which is missing (moved "
                                f"or deleted): open it from where it is now with Gallery → Open gallery…")
            return False
        return self.open_gallery(folder)

    def ingest_crops(self, source: str | Path | None = None) -> WorkerHandle | None:
        """Ingest a folder of ready person crops (every image is one person; ``engine.ingest.crops``)."""
        if source is None and self.state.gallery is not None and self.models is not None and not self.state.busy:
            source = QFileDialog.getExistingDirectory(self.parent, "A folder of person crops")
            if not source:
                return None
        return self.ingest_footage(source, crops=True)

    def ingest_footage(self, source: str | Path | None = None, crops: bool = False) -> WorkerHandle | None:
        """Ingest a video or a folder of footage (``crops``: a folder of person crops) into the current gallery
        (``IngestFootageJob``), then reopen it."""
        gallery = self.state.gallery
        if gallery is None:
            self.messages.error("Open a gallery first: footage is ingested into the current gallery")
            return None
        if self.models is None:
            self.messages.error("Ingest needs the gallery's model: start with `lineup app --checkpoint PATH`")
            return None
        if self.state.busy:
            self.messages.error(self.state.jobs.refusal())
            return None
        if source is None:
            source, _ = QFileDialog.getOpenFileName(self.parent, "Ingest a video or an image", "", footage_filter())
            if not source:
                source = QFileDialog.getExistingDirectory(self.parent, "…or a folder of footage / images")
            if not source:
                return None
        root = Path(gallery.root)

        def done(summary) -> None:
            totals = summary.totals()
            self.messages.message(f"Ingest: {totals.get('items_added', 0):,} items added to {root.name}")

        job = IngestFootageJob(source, root, self.models, crops=crops)
        return self.state.jobs.start(job, done, then=lambda _summary: self.open_gallery(root))

    def show_gallery_info(self) -> list[str]:
        """Say what the open gallery holds (its items, the networks it ranks by, its attribute evidence) in the
        banner; returns the lines."""
        if self.state.gallery is None:
            self.messages.error("Open a gallery first (Gallery menu)")
            return []
        lines = self.summary()
        self.messages.notice("\n".join(lines))
        return list(lines)
