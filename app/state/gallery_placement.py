"""``GalleryPlacement``: which of the open case's records of the gallery the case goes on with, for ``AppState``
(docs/architecture.md, "Gallery versions"): the older version of the gallery the head's path searched
(``app.state.gallery_versions.searched_version``), else the current version, found in the case or recorded
in it now.

A plain object (no Qt) over a ``CaseSession`` and a ``GallerySession``. ``follow_head`` says what changed
through ``Events`` (``app.state.events``): ``case_changed``, ``marks_changed`` and
``gallery_version_changed``; a gallery the case cannot record is an ``error`` event.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.state.case_session import CaseSession
from app.state.events import Events
from app.state.gallery_versions import SearchedVersion, searched_version

if TYPE_CHECKING:
    from app.state.gallery_session import GallerySession


class GalleryPlacement:
    """See the module docstring."""

    def __init__(self, cases: CaseSession, galleries: GallerySession, events: Events) -> None:
        self.cases, self.galleries, self.events = cases, galleries, events

    def place(self, searched: SearchedVersion | None, recorded: Any) -> None:
        """Go on with the older version the case's path searched (``searched``), else the current version
        (``recorded``: a ``GalleryRecord`` made by the job that opened it, or found or recorded now). The
        caller fires ``case_changed``."""
        self.galleries.scope = searched
        cases = self.cases
        if searched is not None:
            cases.gallery_id = searched.use.id
        elif recorded is not None and cases.adopt(recorded.case):
            cases.gallery_id = recorded.gallery_id
        else:
            self.register()

    def register(self) -> None:
        """Find or record the current gallery in the open case; a closed case cannot record a new gallery, it
        can still view one it knows."""
        try:
            self.cases.register_gallery(self.galleries.identity)
        except ValueError as exc:
            self.events.emit("error", exc)

    def follow_head(self) -> None:
        """After the head moved (undo, branch): go on within the version the new head's path searched, or with
        the current version (a branch from the start searches every item)."""
        case, gallery = self.cases.case, self.galleries.gallery
        if case is None or gallery is None:
            return
        searched = searched_version(case, gallery)
        if searched == self.galleries.scope:
            return
        self.place(searched, None)
        self.events.emit("case_changed", self.cases.case)
        self.events.emit("marks_changed", self.cases.marks())
        self.events.emit("gallery_version_changed", searched)
