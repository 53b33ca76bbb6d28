"""Crop files inside the gallery folder, content-addressed: ``crops/<ab>/<sha256>.<ext>``; and the foreground
silhouettes of items cut from video (``silhouettes/<hash of the item id>.png``, bilevel PNG), which the
attribute evidence reads again when the gallery is rebuilt."""

from __future__ import annotations

import re
from pathlib import Path

import cv2
import numpy as np

from engine.index.errors import GalleryInputError
from engine.kernel.atomic import atomic_write_bytes
from engine.kernel.hashing import sha256_bytes
from engine.kernel.permissions import owner_only_umask

CROPS_DIR = "crops"
_SUFFIX = re.compile(r"^\.[A-Za-z0-9]{1,8}$")


def crop_name(data: bytes, suffix: str = ".png") -> tuple[str, str]:
    """Where encoded image bytes are stored in a gallery: (path relative to its folder, SHA-256)."""
    if not _SUFFIX.match(suffix):
        raise GalleryInputError(f"crop suffix must look like '.png', got {suffix!r}")
    if not data:
        raise GalleryInputError("crop data is empty")
    digest = sha256_bytes(data)
    return f"{CROPS_DIR}/{digest[:2]}/{digest}{suffix.lower()}", digest


@owner_only_umask()
def put_crop(root: Path, data: bytes, suffix: str = ".png") -> tuple[str, str]:
    """Store encoded image bytes; returns (path relative to ``root``, SHA-256). Idempotent."""
    relative, digest = crop_name(data, suffix)
    target = root / relative
    if not target.exists():
        atomic_write_bytes(target, data)
    return relative, digest


SILHOUETTES_DIR = "silhouettes"


def silhouette_path(root: Path, item_id: str) -> Path:
    """Where the foreground silhouette of item ``item_id`` (a mask the size of its crop) is kept."""
    return Path(root) / SILHOUETTES_DIR / f"{sha256_bytes(item_id.encode('utf-8'))[:32]}.png"


@owner_only_umask()
def put_silhouette(root: Path, item_id: str, mask: np.ndarray) -> None:
    """Store the item's silhouette (uint8, 255 = person) as a PNG, atomically; one per item, overwritten."""
    mask = np.asarray(mask)
    if mask.ndim != 2 or mask.dtype != np.uint8 or not mask.size:
        raise GalleryInputError(f"silhouette of item {item_id!r} must be a non-empty 2-D uint8 mask, got "
                                f"{mask.dtype} {mask.shape}")
    ok, encoded = cv2.imencode(".png", mask, [cv2.IMWRITE_PNG_BILEVEL, 1])
    if not ok:
        raise GalleryInputError(f"OpenCV could not encode the silhouette of item {item_id!r}")
    atomic_write_bytes(silhouette_path(root, item_id), encoded.tobytes())


def read_silhouette(root: Path, item_id: str) -> np.ndarray | None:
    """The item's stored silhouette (uint8, 0/255), or None when it has none or the file is unreadable."""
    path = silhouette_path(root, item_id)
    if not path.is_file():
        return None
    data = np.fromfile(path, dtype=np.uint8)
    mask = cv2.imdecode(data, cv2.IMREAD_GRAYSCALE) if data.size else None
    return None if mask is None else np.where(mask > 127, 255, 0).astype(np.uint8)
