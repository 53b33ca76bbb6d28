"""``OpenGalleryJob``: open a gallery folder, make its query encoder (e.g. a checkpoint load) and record the
gallery in the open case, off the UI thread; the result is an ``OpenedGallery`` the app's state installs.

When the open case's path searched an older version of the gallery (it has grown since; docs/architecture.md,
"Gallery versions"), the job finds that version (``find_version``, given by the state) instead of recording
the current one: the case goes on within the version its steps searched."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.jobs.job import BackgroundJob
from app.store import CaseState, CaseStore
from app.store.from_engine import gallery_identity
from app.workers import Job
from engine.index import Gallery
from engine.retrieval.search import QueryEncoder

EncoderFactory = Callable[[Gallery], QueryEncoder | None]
#: (open case, gallery) → the older version of the gallery the case's path searched, or None
VersionFinder = Callable[[CaseState | None, Gallery], Any]


@dataclass(frozen=True)
class GalleryRecord:
    """A gallery newly recorded in the open case by the job, with the case as stored afterwards."""

    gallery_id: int
    case: CaseState


@dataclass(frozen=True)
class OpenedGallery:
    """What the job hands back: the gallery, its encoder (None: find-similar only), its identity in the case
    store's terms, when the job recorded it in the open case that record, and ``searched``: the older version
    the open case's path searched (what ``find_version`` gave; None: the case goes on with the current one)."""

    gallery: Gallery
    encoder: QueryEncoder | None
    identity: dict[str, Any]
    recorded: GalleryRecord | None
    searched: Any = None


def check_pair(gallery: Gallery | None, encoder: QueryEncoder | None) -> None:
    """Raise ``GalleryMismatchError`` when ``encoder``'s checkpoint did not build ``gallery``."""
    if gallery is None or encoder is None:
        return
    encoder.check_gallery(gallery)


class OpenGalleryJob(BackgroundJob):
    """Inputs: the folder, an optional ``encoder_factory(gallery)``, the store and open case (either may be
    None) the gallery is recorded in when the case does not know it yet, and ``find_version`` (see the module
    docstring)."""

    name = "Loading gallery"

    def __init__(self, path: str | Path, encoder_factory: EncoderFactory | None = None, *,
                 store: CaseStore | None = None, case: CaseState | None = None,
                 find_version: VersionFinder | None = None) -> None:
        self.path = path
        self.encoder_factory = encoder_factory
        self.store = store
        self.case = case
        self.find_version = find_version

    def run(self, job: Job) -> OpenedGallery:
        job.progress(0, 0, f"Opening gallery {self.path}")
        gallery = Gallery.open(self.path)
        job.check()
        job.progress(0, 0, "Reading the gallery's camera and identity names")
        gallery.columns.names()  # read here, not when the window first shows the cameras
        encoder = None
        if self.encoder_factory is not None:
            job.progress(0, 0, "Loading the model")
            encoder = self.encoder_factory(gallery)
            check_pair(gallery, encoder)  # the model's fingerprint is computed (and cached) here
        job.progress(0, 0, "Fingerprinting the gallery")
        identity = gallery_identity(gallery)
        searched = None if self.find_version is None else self.find_version(self.case, gallery)
        job.check()  # the last point where cancelling leaves no trace
        if searched is not None:
            return OpenedGallery(gallery, encoder, identity, None, searched)
        return OpenedGallery(gallery, encoder, identity, self._record(identity))

    def _record(self, identity: dict[str, Any]) -> GalleryRecord | None:
        """Record a gallery the open case does not know yet and read the case back; None when it is known,
        there is no case, or the store refuses (the state then says why when it registers the gallery)."""
        store, case = self.store, self.case
        if store is None or case is None:
            return None
        known = {(use.path, use.gallery_fingerprint) for use in case.galleries}
        if (identity["path"], identity["gallery_fingerprint"]) in known:
            return None
        try:
            gallery_id = store.add_gallery(case.case.id, **identity)
            return GalleryRecord(gallery_id, store.load_case(case.case.id))
        except ValueError:
            return None
