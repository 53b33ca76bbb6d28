"""The galleries a case used, opened read-only for a report or its check (opened once per path).

A gallery that cannot be opened is not an error here: the report says so, and the check reports it."""

from __future__ import annotations

from pathlib import Path

from app.report.errors import ReportError
from app.store.from_engine import gallery_fingerprint
from engine.index import Gallery, GalleryItem
from engine.kernel.paths import PathEscapeError, contained


class GalleryLookup:
    """``gallery(path)`` → the open gallery or None; ``problem(path)`` says why it is None."""

    def __init__(self) -> None:
        self._open: dict[str, Gallery | None] = {}
        self._problems: dict[str, str] = {}
        self._fingerprints: dict[str, str] = {}

    def gallery(self, path: str) -> Gallery | None:
        if path not in self._open:
            try:
                self._open[path] = Gallery.open(Path(path), check_indexes=False)
            except (ValueError, OSError) as exc:
                self._open[path] = None
                self._problems[path] = str(exc)
        return self._open[path]

    def problem(self, path: str) -> str:
        return self._problems.get(path, "")

    def fingerprint(self, path: str) -> str | None:
        """The gallery's fingerprint now, bound to its items' content as stored now
        (``app.store.from_engine.gallery_fingerprint``), None if unopenable."""
        gallery = self.gallery(path)
        if gallery is None:
            return None
        if path not in self._fingerprints:
            try:
                self._fingerprints[path] = gallery_fingerprint(gallery)
            except (ValueError, OSError) as exc:  # its items or vectors cannot be read to digest them
                self._problems[path] = str(exc)
                return None
        return self._fingerprints[path]

    def item(self, path: str, item_id: str) -> tuple[GalleryItem | None, str]:
        """(the item's record, "") or (None, why it cannot be read)."""
        gallery = self.gallery(path)
        if gallery is None:
            return None, f"gallery {path} cannot be opened: {self.problem(path)}"
        if item_id not in gallery:
            return None, f"item {item_id!r} is not in gallery {path}"
        return gallery.item(item_id), ""

    def crop_file(self, path: str, item: GalleryItem) -> Path | None:
        """The absolute path of the item's crop file (None when the item has no crop)."""
        gallery = self.gallery(path)
        if gallery is None or item.crop is None:
            return None
        try:
            return contained(gallery.root, item.crop, f"item {item.id!r}: crop")
        except PathEscapeError as exc:
            raise ReportError(str(exc)) from None
