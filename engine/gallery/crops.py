"""Crop files inside the gallery folder, content-addressed: ``crops/<ab>/<sha256>.<ext>``."""

from __future__ import annotations

import re
from pathlib import Path

from engine.atomic import atomic_write_bytes
from engine.gallery.errors import GalleryInputError
from engine.hashing import sha256_bytes

CROPS_DIR = "crops"
_SUFFIX = re.compile(r"^\.[A-Za-z0-9]{1,8}$")


def put_crop(root: Path, data: bytes, suffix: str = ".png") -> tuple[str, str]:
    """Store encoded image bytes; returns (path relative to ``root``, SHA-256). Idempotent."""
    if not _SUFFIX.match(suffix):
        raise GalleryInputError(f"crop suffix must look like '.png', got {suffix!r}")
    if not data:
        raise GalleryInputError("crop data is empty")
    digest = sha256_bytes(data)
    relative = f"{CROPS_DIR}/{digest[:2]}/{digest}{suffix.lower()}"
    target = root / relative
    if not target.exists():
        atomic_write_bytes(target, data)
    return relative, digest
