"""Errors a gallery raises: each names the folder or file and what is wrong with it."""

from __future__ import annotations

REBUILD_HINT = "run `lineup gallery rebuild`"


class GalleryError(ValueError):
    """Base class: a gallery folder, its files or the input given to it is unusable."""


class GalleryNotFoundError(GalleryError, FileNotFoundError):
    """The gallery folder or its ``gallery.json`` does not exist."""


class GalleryCorruptError(GalleryError):
    """A gallery file cannot be read or disagrees with ``gallery.json``."""


class GalleryIndexError(GalleryCorruptError):
    """A FAISS index file is unreadable or disagrees with the vectors; a rebuild fixes it."""

    def __init__(self, message: str) -> None:
        super().__init__(f"{message}; {REBUILD_HINT}")


class GalleryMismatchError(GalleryError):
    """A checkpoint or query does not match the gallery (fingerprint, view names, dimensions)."""


class GalleryInputError(GalleryError):
    """Items or vectors given to ``add``/``remove`` are invalid; nothing was written."""


class GalleryBusyError(GalleryError):
    """Another process (or thread) holds the gallery's write lock; nothing was written."""


class GalleryPendingChangeError(GalleryCorruptError):
    """A read-only command found an unfinished change (``journal.json``) that no writer is applying; readers
    never apply one. ``lineup gallery rebuild`` (a writer) checks it and finishes it."""
