"""Crop files inside the gallery folder (content-addressed: ``crops/<ab>/<sha256>.<ext>``) and SHA-256."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

from engine.gallery.errors import GalleryInputError

CROPS_DIR = "crops"
_SUFFIX = re.compile(r"^\.[A-Za-z0-9]{1,8}$")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


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
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".crop.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    return relative, digest
