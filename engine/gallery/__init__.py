"""The gallery folder: items, crops, float16 vectors per view and a FAISS index per view."""

from engine.gallery.errors import (
    GalleryBusyError,
    GalleryCorruptError,
    GalleryError,
    GalleryIndexError,
    GalleryInputError,
    GalleryMismatchError,
    GalleryNotFoundError,
)
from engine.gallery.items import GalleryItem
from engine.gallery.store import AddReport, Gallery, Problem
from engine.gallery.writer_lock import writing

__all__ = [
    "AddReport",
    "Gallery",
    "GalleryBusyError",
    "GalleryCorruptError",
    "GalleryError",
    "GalleryIndexError",
    "GalleryInputError",
    "GalleryItem",
    "GalleryMismatchError",
    "GalleryNotFoundError",
    "Problem",
    "writing",
]
