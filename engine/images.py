"""Reading image files that may be hostile: every image that enters Lineup from outside goes through here.

``read_image(path)`` (or ``decode_image(data, name)`` for bytes already read) checks the file before OpenCV
decodes it:

- the header is parsed first (Pillow's lazy ``open``: no pixels are decoded) and an image declaring more than
  ``max_pixels`` pixels is refused (a decompression bomb; default ``DEFAULT_MAX_PIXELS``, settable per call or
  with the ``LINEUP_MAX_IMAGE_PIXELS`` environment variable; Pillow refuses to open headers over twice its own
  ``Image.MAX_IMAGE_PIXELS``, about 179 Mpx, whatever the limit here);
- a JPEG without its end-of-image marker or a PNG without its end chunk is refused as truncated (the decoder
  would otherwise fill the missing rows with grey and only warn on stderr);
- images smaller than ``min_side`` pixels on a side are refused (a 1 × 1 "sketch" carries nothing);
- ``max_side`` shrinks a large image right after decoding (JPEGs are decoded at a reduced scale directly), so
  query images never become large float tensors;
- ``cv2.error`` and decoder failures become ``ImageInputError``, which names the file and the problem.
"""

from __future__ import annotations

import io
import os
import re
import stat
import warnings
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, UnidentifiedImageError

#: File extensions read as still images (ingest's image folders and crop folders, the folder-listing dataset
#: readers).
IMAGE_EXTENSIONS = frozenset({".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp", ".jp2", ".pgm", ".ppm"})
DEFAULT_MAX_PIXELS = 100_000_000
MAX_PIXELS_VARIABLE = "LINEUP_MAX_IMAGE_PIXELS"
JPEG_END = b"\xff\xd9"
PNG_END = b"IEND\xaeB`\x82"
MODES = {"color": cv2.IMREAD_COLOR, "grey": cv2.IMREAD_GRAYSCALE, "unchanged": cv2.IMREAD_UNCHANGED}
_REDUCED = ((8, cv2.IMREAD_REDUCED_COLOR_8), (4, cv2.IMREAD_REDUCED_COLOR_4), (2, cv2.IMREAD_REDUCED_COLOR_2))


class ImageInputError(ValueError):
    """An image file cannot be used; ``path`` is the file and ``reason`` what is wrong with it."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"image {path}: {reason}")
        self.path = path
        self.reason = reason


def max_pixels_limit() -> int:
    """The pixel limit in force: ``LINEUP_MAX_IMAGE_PIXELS`` when set to a positive integer, else the default."""
    value = os.environ.get(MAX_PIXELS_VARIABLE, "").strip()
    if not value:
        return DEFAULT_MAX_PIXELS
    try:
        limit = int(value)
    except ValueError:
        raise ImageInputError("(any)", f"{MAX_PIXELS_VARIABLE}={value!r} is not a whole number of pixels") from None
    if limit < 1:
        raise ImageInputError("(any)", f"{MAX_PIXELS_VARIABLE}={value!r} must be positive")
    return limit


def _over_limit(name: str, declared: str, limit: int) -> ImageInputError:
    return ImageInputError(name, f"declares {declared}, over the limit of {limit:,} (a possible decompression "
                                 f"bomb; raise {MAX_PIXELS_VARIABLE} to accept it)")


def header_size(data: bytes, name: str, limit: int) -> tuple[int, int, str]:
    """(width, height, format) read from the file's header alone; ``ImageInputError`` when there is none."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                width, height = image.size
                kind = image.format or "unknown"
    except Image.DecompressionBombError as exc:  # over Pillow's own ceiling, far above ours by default
        found = re.search(r"\((\d+) pixels\)", str(exc))
        raise _over_limit(name, f"{int(found.group(1)):,} pixels" if found else "more pixels than Pillow opens",
                          limit) from None
    except UnidentifiedImageError:
        raise ImageInputError(name, "not a decodable image (the header is no image format Lineup reads)") from None
    except (OSError, ValueError, SyntaxError, EOFError) as exc:
        raise ImageInputError(name, f"its header is damaged ({exc})") from None
    return int(width), int(height), kind


def _truncation(data: bytes, kind: str) -> str | None:
    tail = data[-4096:].rstrip(b"\x00\r\n\t ")
    if kind == "JPEG" and not tail.endswith(JPEG_END):
        return "truncated JPEG: the end-of-image marker is missing"
    if kind == "PNG" and PNG_END not in tail:
        return "truncated PNG: the end chunk is missing"
    return None


def decode_image(data: bytes, name: str, *, mode: str = "color", max_pixels: int | None = None,
                 min_side: int = 1, max_side: int | None = None) -> np.ndarray:
    """Decode image bytes after the checks of the module docstring; ``name`` is the file named in errors.
    ``mode``: ``"color"`` (BGR uint8), ``"grey"`` or ``"unchanged"`` (alpha and bit depth kept)."""
    if mode not in MODES:
        raise ValueError(f"image mode must be one of {list(MODES)}, got {mode!r}")
    if not data:
        raise ImageInputError(name, "the file is empty")
    limit = max_pixels_limit() if max_pixels is None else max_pixels
    width, height, kind = header_size(data, name, limit)
    if width < 1 or height < 1:
        raise ImageInputError(name, f"declares a degenerate size {width} × {height}")
    if width * height > limit:
        raise _over_limit(name, f"{width} × {height} = {width * height:,} pixels", limit)
    if min(width, height) < min_side:
        raise ImageInputError(name, f"is {width} × {height} pixels, smaller than the {min_side}-pixel minimum side")
    problem = _truncation(data, kind)
    if problem:
        raise ImageInputError(name, problem)
    flag = MODES[mode]
    if max_side is not None and kind == "JPEG" and mode == "color":
        for factor, reduced in _REDUCED:
            if max(width, height) // factor >= max_side:
                flag = reduced
                break
    try:
        image = cv2.imdecode(np.frombuffer(data, np.uint8), flag)
    except cv2.error as exc:
        raise ImageInputError(name, f"the decoder failed ({str(exc).strip().splitlines()[-1]})") from None
    if image is None or image.size == 0:
        raise ImageInputError(name, f"the {kind} data cannot be decoded (corrupt or unsupported variant)")
    if max_side is not None and max(image.shape[:2]) > max_side:
        factor = max_side / max(image.shape[:2])
        size = (max(1, round(image.shape[1] * factor)), max(1, round(image.shape[0] * factor)))
        image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    return image


def read_image(path: str | Path, *, mode: str = "color", max_pixels: int | None = None, min_side: int = 1,
               max_side: int | None = None) -> np.ndarray:
    """Read and decode an image file (see ``decode_image``); a missing or unreadable file is an
    ``ImageInputError`` too."""
    path = Path(path)
    return decode_image(read_image_bytes(path), str(path), mode=mode, max_pixels=max_pixels, min_side=min_side,
                        max_side=max_side)


def read_image_bytes(path: str | Path) -> bytes:
    """The bytes of an image file; ``ImageInputError`` when it cannot be read or is no regular file (reading a
    named pipe would block, a device would never end)."""
    path = Path(path)
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise ImageInputError(str(path), "is not a regular file (a folder, a named pipe or a device)")
        return path.read_bytes()
    except OSError as exc:
        raise ImageInputError(str(path), f"cannot be read ({exc.strerror or exc})") from None
