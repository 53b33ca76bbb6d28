"""``GallerySession``: the gallery being searched, its query encoder, its identity in the case store's terms,
the older version of it the open case's path searched (``scope``: searches stay within that version's items,
``app.state.gallery_versions``) and the ground-truth identity trainers score steps against, for ``AppState``
(docs/architecture.md).

A plain object (no signals). ``use`` refuses an encoder whose checkpoint did not build the gallery
(``GalleryMismatchError``); ``check_target`` refuses an identity the gallery does not have (``ActionRefused``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.jobs import check_pair
from app.state.case_session import ActionRefused
from app.state.gallery_versions import SearchedVersion
from app.store.from_engine import gallery_identity
from engine.index import Gallery
from engine.retrieval.search import QueryEncoder, SearchSession
from engine.retrieval.search.opening import open_search


class GallerySession:
    """See the module docstring."""

    def __init__(self) -> None:
        self.gallery: Gallery | None = None
        self.encoder: QueryEncoder | None = None
        self.identity: dict[str, Any] | None = None
        self.target: str | None = None
        self.scope: SearchedVersion | None = None

    @staticmethod
    def identify(gallery: Gallery | None) -> dict[str, Any] | None:
        """The gallery's path and fingerprints as the case store records them (reads the gallery's files)."""
        return None if gallery is None else gallery_identity(gallery)

    def use(self, gallery: Gallery | None, encoder: QueryEncoder | None, identity: dict[str, Any] | None) -> None:
        """Search ``gallery`` with ``encoder`` (None: find-similar only); the ground truth is cleared (identities
        belong to one gallery)."""
        check_pair(gallery, encoder)
        self.gallery, self.encoder, self.identity = gallery, encoder, identity
        self.target = None
        self.scope = None

    @property
    def item_limit(self) -> int | None:
        """How many of the gallery's first items searches see (None: all of them)."""
        return None if self.scope is None else self.scope.version.items

    def check_target(self, identity: str | None) -> str | None:
        """``identity`` stripped, when the gallery has it (None clears the ground truth)."""
        if identity is None:
            return None
        identity = str(identity).strip()
        if self.gallery is None:
            raise ActionRefused("Open a gallery before choosing a ground-truth identity")
        if not identity or self.gallery.columns.identities.lookup(identity) is None:
            raise ActionRefused(f"The gallery has no identity {identity!r}: ground truth exists only in built "
                                "worlds (identities are the world's numbers)")
        return identity

    def session_factory(self, rho: float, *, whole: bool = False) -> Callable[[], SearchSession]:
        """Makes step-less sessions on the current gallery (within the case's version of it, ``scope``) and
        encoder (safe to call from a worker); ``whole``: on every item of the gallery."""
        gallery, encoder, target = self.gallery, self.encoder, self.target
        limit = None if whole else self.item_limit
        return lambda: open_search(gallery, encoder, rho=rho, target_identity=target, item_limit=limit)
