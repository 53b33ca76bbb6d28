"""The gallery folder: items, crops, float16 vectors per view and a FAISS index per view."""

from engine.index.errors import (
    GalleryBusyError,
    GalleryCorruptError,
    GalleryError,
    GalleryIndexError,
    GalleryInputError,
    GalleryMismatchError,
    GalleryNotFoundError,
)
from engine.index.items import GalleryItem
from engine.index.store import AddReport, Gallery, Problem
from engine.index.writer_lock import writing

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
