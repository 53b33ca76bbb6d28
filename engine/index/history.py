"""A gallery's versions and fingerprints (``engine.index.versions``) and the content digests they bind
(``engine.index.content``), read from its folder (``engine.index.folder``)."""

from __future__ import annotations

from engine.index import content
from engine.index import versions as gallery_versions
from engine.index.folder import GalleryFolder
from engine.index.items import ITEMS_FILE
from engine.index.versions import GalleryVersion


class GalleryHistory:
    """The versions recorded in one gallery folder, their fingerprints and the content digests behind them."""

    def __init__(self, folder: GalleryFolder) -> None:
        self._folder = folder
        self._versions_of: tuple | None = None  # (the metadata object they were listed from, the versions)

    def versions(self) -> tuple[GalleryVersion, ...]:
        """Every version, oldest first; the last is the current one (``engine.index.versions``). Kept until
        the next commit (every write replaces the metadata object)."""
        meta = self._folder.meta
        cached = self._versions_of
        if cached is None or cached[0] is not meta:
            cached = (meta, gallery_versions.listed(meta, self._folder.ids))  # current: content_head recorded
            self._versions_of = cached
        return cached[1]

    @property
    def version(self) -> GalleryVersion:
        """The current version (every committed item)."""
        return self.versions()[-1]

    def fingerprint(self, items: int | None = None, *, from_files: bool = False) -> str:
        """The fingerprint of the first ``items`` items (all when None): model, views, item ids and the content
        chain head of those items (``engine.index.versions``). The head is the one recorded when the items
        were added; ``from_files`` computes it now from ``items.jsonl`` and the stored vectors instead, so the
        fingerprint changes when an item's record or vectors changed behind the gallery's back (what a report's
        check compares). A gallery without content digests has the ids-only fingerprint either way."""
        folder = self._folder
        if from_files and self.content_covered:
            count = len(folder) if items is None else items
            head = content.chain(self.computed_parts(count), content.row_width(folder.views))
            return gallery_versions.fingerprint(folder.model_fingerprint, folder.views, folder.ids[:count], head)
        if items is None or items == len(folder):
            return self.version.fingerprint
        return gallery_versions.meta_fingerprint(folder.meta, folder.ids, items, self.content_head)

    def find_version(self, fingerprint: str, items: int | None = None,
                     version: int | None = None) -> GalleryVersion | None:
        """The version with ``fingerprint`` (a case's record: its item count and number help), or None when the
        gallery no longer has it (see ``engine.index.versions.find``)."""
        folder = self._folder
        return gallery_versions.find(folder.meta, folder.ids, fingerprint, items, version, self.content_head)

    @property
    def content_covered(self) -> bool:
        """Whether the gallery records content digests (galleries made before they were kept do not, until a
        write or ``lineup gallery rebuild`` records them)."""
        return self._folder.meta.get(content.HEAD_KEY) is not None

    def content_head(self, items: int) -> str | None:
        """The recorded content chain head of the first ``items`` items (None without content digests)."""
        folder = self._folder
        head = folder.meta.get(content.HEAD_KEY)
        if head is None or items == len(folder):
            return head
        width = content.row_width(folder.views)
        return content.chain(content.read_parts(folder.root, items, width), width)

    def computed_parts(self, items: int | None = None) -> bytes:
        """Digest rows of the first ``items`` items (all when None) computed now from the stored files."""
        folder = self._folder
        count = len(folder) if items is None else items
        return content.compute(folder.root / ITEMS_FILE, folder.meta["items_bytes"],
                               {view: folder.stored_vectors(view) for view in folder.views}, count)
