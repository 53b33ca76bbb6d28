"""Image files as the views read them, through the engine's guarded readers (docs/hardening.md): a query image
(sketch or IR) exactly as a search step will read it, a crop or source image decoded for the screen, and a
file's SHA-256."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from engine.kernel.hashing import sha256_file
from engine.kernel.images import ImageInputError
from engine.kernel.images import read_image as read_checked
from engine.retrieval.search import QueryInputError
from engine.retrieval.search.query import load_image

__all__ = ["QueryInputError", "load_query_image", "read_rgb", "sha256_of"]


def load_query_image(path: str | Path, what: str) -> np.ndarray:
    """A query image as RGB uint8 [H, W, 3], as the engine will read it (``what`` names it in the message of
    the ``QueryInputError`` raised when it cannot be read)."""
    return load_image(path, what)


def read_rgb(path: Path, max_side: int | None = None) -> np.ndarray | None:
    """RGB uint8 image of a file (any path, unicode included), or None when it cannot be decoded or is refused.

    Read through ``engine.kernel.images.read_image``: the header is checked before the file is read whole or
    decoded, so a file declaring more pixels than the limit, or larger than the file-size limit, is refused
    unread (docs/hardening.md); ``max_side`` shrinks the image right after decoding (JPEGs decode reduced)."""
    try:
        image = read_checked(path, max_side=max_side)
    except ImageInputError:
        return None
    return cv2.cvtColor(image, cv2.COLOR_BGR2RGB)


def sha256_of(path: Path) -> str | None:
    """The file's SHA-256, or None when it cannot be read."""
    try:
        return sha256_file(path)
    except OSError:
        return None
