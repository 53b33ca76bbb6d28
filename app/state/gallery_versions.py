"""Which version of the open gallery a case's steps searched (docs/architecture.md, "Gallery versions").

Adding footage to a gallery makes a new version (``engine.index.versions``): the old one is the gallery's first
n items. A case records the version each step searched (``GalleryUse``: path, fingerprint, item count, version
number), so when the gallery has grown since, the case's head path is found again as that version
(``searched_version``): its steps are restored, searching on that path continues within the version's items,
and the path can be re-run on the grown gallery as a new branch (``RerunOnVersionJob``). Plain values, no Qt.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.store import CaseState, GalleryUse
from engine.index import Gallery
from engine.index.versions import GalleryVersion


@dataclass(frozen=True)
class SearchedVersion:
    """The case's record of the version its head path searched (``use``), that version in the gallery
    (``version``: its first ``version.items`` items) and the gallery's current version (``current``)."""

    use: GalleryUse
    version: GalleryVersion
    current: GalleryVersion

    def offer(self) -> str:
        """What the analyst is told: where the steps are and what re-running on the grown gallery does."""
        return (f"This case's steps searched {self.version.label()}; the gallery has grown to "
                f"{self.current.label()}. Its steps are restored and searching on this path stays within "
                f"v{self.version.version or '?'}'s items. Search → Re-run the path on the grown gallery searches "
                f"all {self.current.items:,} items as a new branch.")


def same_folder(use: GalleryUse, gallery: Gallery) -> bool:
    """Whether the case's record names ``gallery``'s folder."""
    try:
        return Path(use.path).resolve() == Path(gallery.root).resolve()
    except OSError:
        return False


def version_of(use: GalleryUse, gallery: Gallery) -> GalleryVersion | None:
    """The version of ``gallery`` the case's record ``use`` names, or None (another folder, or a version the
    gallery no longer has)."""
    if not same_folder(use, gallery):
        return None
    return gallery.find_version(use.gallery_fingerprint, use.item_count, use.version)


def searched_version(case: CaseState | None, gallery: Gallery | None) -> SearchedVersion | None:
    """The version of ``gallery`` the case's head step searched, when that is an older version than the
    gallery's current one and the gallery still has it; None otherwise (no case or head step, the head searched
    the current version or another gallery)."""
    if case is None or gallery is None or case.case.head_step_id is None:
        return None
    head = case.step(case.case.head_step_id)
    use = next((g for g in case.galleries if g.id == head.gallery_id), None)
    if use is None:
        return None
    current = gallery.version
    if use.gallery_fingerprint == current.fingerprint:
        return None
    version = version_of(use, gallery)
    return None if version is None else SearchedVersion(use, version, current)


def use_label(use: GalleryUse) -> str:
    """ "gallery v2, 1,240 items" for a case's record of a gallery (no version number: recorded before
    versions were kept)."""
    if use.version:
        return f"gallery v{use.version}, {use.item_count:,} items"
    return f"gallery, {use.item_count:,} items"



def case_gallery_path(case: CaseState | None) -> Path | None:
    """The folder of the gallery the case goes on with: the one its head step searched, else (no step yet, or
    a branch from the start) the one it recorded last; None for a case without a gallery."""
    if case is None or not case.galleries:
        return None
    use = case.galleries[-1]
    if case.case.head_step_id is not None:
        head = case.step(case.case.head_step_id)
        use = next((g for g in case.galleries if g.id == head.gallery_id), use)
    return Path(use.path)
