"""Folders of ready person crops (``lineup ingest DIR --crops``): every image is one person, so there is no
detector and no tracker. The item's box is the whole image, its crop the image itself.

``discover_crops(path)`` walks the folder recursively (hidden folders and galleries left alone) and gives one
``CropFolder`` per folder and camera, images in time order, else natural name order; camera and time come from
the folder's sidecar or the file names (``engine.ingest.timing``), else camera = folder name. Files no image
reader recognises are listed as skipped; a folder without any image is an ``IngestError``. Images smaller than
``MIN_CROP_WIDTH`` × ``MIN_CROP_HEIGHT`` pixels are skipped with that reason when they are read.

A crop folder's ``key`` (done markers) differs from the key the same folder has as an image sequence, so
ingesting a folder once as footage and once as crops does not mark one as the other.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from engine.ingest.errors import IngestError
from engine.ingest.sources import (
    IMAGE_EXTENSIONS,
    NOT_REGULAR,
    Discovery,
    Frame,
    ImageSequence,
    _sequences,
    folders_under,
)
from engine.ingest.timing import SIDECAR_NAMES, Stamp
from engine.kernel.images import (
    MAX_CROP_PIXELS_VARIABLE,
    decode_image_sized,
    max_crop_pixels_limit,
    read_image_bytes,
)

MIN_CROP_HEIGHT = 16  # pixels: a smaller image is too small to show a person
MIN_CROP_WIDTH = 8
#: a person crop larger than this on its long side is shrunk as it is decoded (the model and the attribute readers
#: work at a few hundred pixels; a 100 Mpx crop would otherwise cost gigabytes downstream)
CROP_MAX_SIDE = 2048
RAW_CROP_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp"})  # stored as they are; other formats as PNG
UNREADABLE = "not a decodable image (OpenCV recognises no image format in it)"


@dataclass
class CropFolder(ImageSequence):
    """The images of one folder and camera, each a person crop; one larger than ``CROP_MAX_SIDE`` is shrunk while
    it decodes (``engine.kernel.images.decode_image_sized``), and its frame keeps the size the file declares."""

    kind: str = "crops"

    def _decode(self, index: int, stamp: Stamp, path: Path, sha256: str) -> Frame:
        image, size = decode_crop(path)
        return Frame(index, stamp.time, image, path, sha256, size)

    @property
    def key(self) -> str:
        return hashlib.sha256(b"person crops\n" + super().key.encode()).hexdigest()


def decode_crop(path: Path, data: bytes | None = None) -> tuple[np.ndarray, tuple[int, int]]:
    """A person crop's image shrunk to ``CROP_MAX_SIDE`` as it decodes, and the (width, height) the file stores;
    a file over the crop pixel limit (``LINEUP_MAX_CROP_PIXELS``) is an ``ImageInputError`` naming it."""
    limit = max_crop_pixels_limit()
    if data is None:
        data = read_image_bytes(path, max_pixels=limit, setting=MAX_CROP_PIXELS_VARIABLE)
    return decode_image_sized(data, str(path), max_pixels=limit, max_side=CROP_MAX_SIDE,
                              setting=MAX_CROP_PIXELS_VARIABLE)


def too_small(width: int, height: int) -> str | None:
    """Why a crop of ``width`` × ``height`` pixels is too small to be a person, or None."""
    if height < MIN_CROP_HEIGHT or width < MIN_CROP_WIDTH:
        return (f"crop of {width}×{height} px is below the minimum person crop of {MIN_CROP_WIDTH}×{MIN_CROP_HEIGHT} "
                "px (width×height)")
    return None


def discover_crops(path: str | Path, camera: str | None = None) -> Discovery:
    """Crop folders under ``path`` (a folder, or one image); see the module docstring."""
    root = Path(path)
    if not root.exists():
        if root.is_symlink():
            raise IngestError(f"crop folder {root} is a broken or looping link")
        raise IngestError(f"crop folder {root} does not exist")
    if not root.is_file() and not root.is_dir():
        raise IngestError(f"crop {root} is {NOT_REGULAR}")
    if root.is_file():
        if root.suffix.lower() not in IMAGE_EXTENSIONS or not cv2.haveImageReader(str(root)):
            raise IngestError(f"crop {root} is not a decodable image")
        return Discovery([CropFolder(s.folder, s.camera, s.files) for s in _sequences(root.parent, [root], camera)],
                         [])
    sources: list[CropFolder] = []
    skipped: list[tuple[str, str]] = []
    for here, names, _ in folders_under(root):
        images = []
        for name in names:
            file = here / name
            if name.startswith(".") or name in SIDECAR_NAMES:
                continue
            if file.suffix.lower() not in IMAGE_EXTENSIONS:
                skipped.append((str(file), f"not an image (extension {file.suffix.lower() or 'none'})"))
            elif not file.is_file():  # checked before OpenCV opens it: a named pipe would block the header read
                skipped.append((str(file), NOT_REGULAR))
            elif not cv2.haveImageReader(str(file)):
                skipped.append((str(file), UNREADABLE))
            else:
                images.append(file)
        sources.extend(CropFolder(s.folder, s.camera, s.files) for s in _sequences(here, images, camera))
    if not sources:
        detail = f" ({len(skipped)} files skipped: not images or not decodable)" if skipped else ""
        raise IngestError(f"crop folder {root} holds no decodable image{detail}")
    return Discovery(list(sources), skipped)

