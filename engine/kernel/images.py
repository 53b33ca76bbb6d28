"""Reading image files that may be hostile: every image that enters Lineup from outside goes through here.

``read_image(path)`` (or ``decode_image(data, name)`` for bytes already read) checks the file before OpenCV
decodes it:

- the header is parsed first (Pillow's lazy ``open``: no pixels are decoded) and an image declaring more than
  ``max_pixels`` pixels is refused (a decompression bomb; default ``DEFAULT_MAX_PIXELS``, settable per call or
  with the ``LINEUP_MAX_IMAGE_PIXELS`` environment variable; Pillow refuses to open headers over twice its own
  ``Image.MAX_IMAGE_PIXELS``, about 179 Mpx, whatever the limit here);
- a JPEG without its end-of-image marker or a PNG without its end chunk is refused as truncated (the decoder
  would otherwise fill the missing rows with grey and only warn on stderr), and so is a JPEG or PNG too short
  to hold the pixels it declares (a few kilobytes declaring 100 Mpx);
- images smaller than ``min_side`` pixels on a side are refused (a 1 × 1 "sketch" carries nothing);
- ``max_side`` shrinks a large image right after decoding (JPEGs are decoded at a reduced scale directly, grey
  PNGs as one channel), so query images never become large float tensors and a crop folder of near-limit images
  holds one full-size image at a time at most (``decode_image_sized`` also gives the size as stored);
- ``cv2.error`` and decoder failures become ``ImageInputError``, which names the file and the problem;
- a file is never read whole before its header: ``read_image_bytes`` reads the first ``HEADER_BYTES``, refuses a
  file whose header declares too many pixels, and refuses a file over ``max_file_bytes`` (default
  ``DEFAULT_MAX_FILE_BYTES``, or ``LINEUP_MAX_IMAGE_BYTES``) before reading the rest;
- ``PixelBudget`` bounds the decoded pixels of one batch (default ``DEFAULT_BATCH_PIXELS``, or
  ``LINEUP_BATCH_PIXELS``): readers that gather images into batches close a batch early rather than exceed it,
  so the per-image limit is not multiplied by the batch size.

See docs/hardening.md.
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
#: the largest image file read whole (a 100 Mpx photograph is well under it)
DEFAULT_MAX_FILE_BYTES = 256 * 1024 * 1024
MAX_FILE_BYTES_VARIABLE = "LINEUP_MAX_IMAGE_BYTES"
#: the largest person crop (a crop folder's or a world's image): a whole 8K UHD frame is 33 Mpx; a near-limit
#: 100 Mpx image costs about 600 MB while it decodes, which is no person crop's business
DEFAULT_MAX_CROP_PIXELS = 36_000_000
MAX_CROP_PIXELS_VARIABLE = "LINEUP_MAX_CROP_PIXELS"
#: decoded pixels one batch of images may hold together (about 400 MB as 8-bit colour)
DEFAULT_BATCH_PIXELS = 128_000_000
BATCH_PIXELS_VARIABLE = "LINEUP_BATCH_PIXELS"
#: bytes read first, for the header check (a JPEG's frame header may follow a large EXIF block)
HEADER_BYTES = 1 << 20
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


def _positive_setting(variable: str, default: int, unit: str) -> int:
    value = os.environ.get(variable, "").strip()
    if not value:
        return default
    try:
        limit = int(value)
    except ValueError:
        raise ImageInputError("(any)", f"{variable}={value!r} is not a whole number of {unit}") from None
    if limit < 1:
        raise ImageInputError("(any)", f"{variable}={value!r} must be positive")
    return limit


def max_pixels_limit() -> int:
    """The pixel limit in force: ``LINEUP_MAX_IMAGE_PIXELS`` when set to a positive integer, else the default."""
    return _positive_setting(MAX_PIXELS_VARIABLE, DEFAULT_MAX_PIXELS, "pixels")


def max_crop_pixels_limit() -> int:
    """The pixel limit of a person crop: ``LINEUP_MAX_CROP_PIXELS``, else the default; never above
    ``max_pixels_limit()``."""
    return min(_positive_setting(MAX_CROP_PIXELS_VARIABLE, DEFAULT_MAX_CROP_PIXELS, "pixels"), max_pixels_limit())


def max_file_bytes_limit() -> int:
    """The size limit of an image file read whole: ``LINEUP_MAX_IMAGE_BYTES``, else the default."""
    return _positive_setting(MAX_FILE_BYTES_VARIABLE, DEFAULT_MAX_FILE_BYTES, "bytes")


def batch_pixels_limit() -> int:
    """The decoded pixels one batch may hold: ``LINEUP_BATCH_PIXELS``, else the default."""
    return _positive_setting(BATCH_PIXELS_VARIABLE, DEFAULT_BATCH_PIXELS, "pixels")


class PixelBudget:
    """The decoded pixels of the batch being gathered, against ``limit`` (``batch_pixels_limit()`` by default).

    ``fits(pixels)``: whether an image of that many pixels may join the batch (always true for an empty batch,
    whose one image is bounded by the per-image limit); ``add`` counts an image in; ``reset`` starts the next
    batch. A reader closes its batch when the next image does not fit."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = batch_pixels_limit() if limit is None else int(limit)
        self.used = 0

    def fits(self, pixels: int) -> bool:
        return self.used == 0 or self.used + int(pixels) <= self.limit

    def add(self, pixels: int) -> None:
        self.used += int(pixels)

    def reset(self) -> None:
        self.used = 0


def _over_limit(name: str, declared: str, limit: int, setting: str = MAX_PIXELS_VARIABLE) -> ImageInputError:
    return ImageInputError(name, f"declares {declared}, over the limit of {limit:,} (a possible decompression "
                                 f"bomb; raise {setting} to accept it)")


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


#: deflate compresses at most about 1032:1, so a PNG holds at least its raw rows / 1100 bytes; a JPEG spends at
#: least two bits on every 8 × 8 block's DC coefficient, so it holds at least one byte per 1024 pixels
_DEFLATE_RATIO = 1100
_JPEG_PIXELS_PER_BYTE = 1024
_PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def _too_short(data: bytes, kind: str, width: int, height: int) -> str | None:
    """Why a file cannot hold the pixels its header declares (a few kilobytes declaring a 100 Mpx image is a
    truncated or crafted file, which the decoder would fill with grey at full size), or None."""
    if kind == "PNG" and len(data) >= 26:
        bits = data[24] * _PNG_CHANNELS.get(data[25], 1)
        least = height * (1 + (width * bits + 7) // 8) // _DEFLATE_RATIO
    elif kind == "JPEG":
        least = width * height // _JPEG_PIXELS_PER_BYTE
    else:
        return None
    if len(data) >= least:
        return None
    return (f"declares {width} × {height} pixels but holds only {len(data):,} bytes, too few for that size "
            f"(truncated or crafted)")


def decode_image(data: bytes, name: str, *, mode: str = "color", max_pixels: int | None = None,
                 min_side: int = 1, max_side: int | None = None) -> np.ndarray:
    """Decode image bytes after the checks of the module docstring; ``name`` is the file named in errors.
    ``mode``: ``"color"`` (BGR uint8), ``"grey"`` or ``"unchanged"`` (alpha and bit depth kept)."""
    return decode_image_sized(data, name, mode=mode, max_pixels=max_pixels, min_side=min_side,
                              max_side=max_side)[0]


def decode_image_sized(data: bytes, name: str, *, mode: str = "color", max_pixels: int | None = None,
                       min_side: int = 1, max_side: int | None = None,
                       setting: str = MAX_PIXELS_VARIABLE) -> tuple[np.ndarray, tuple[int, int]]:
    """``decode_image`` and the image's own (width, height) as stored, before ``max_side`` shrank it (and after
    the decoder turned it upright by its EXIF orientation).

    With ``max_side``, a large image never exists in memory at full size more than once: JPEGs decode at a
    reduced scale, and a grey PNG (colour type 0 or 4) read in colour decodes as one channel and gains its three
    channels only once shrunk (a third of the memory of decoding it in colour)."""
    if mode not in MODES:
        raise ValueError(f"image mode must be one of {list(MODES)}, got {mode!r}")
    if not data:
        raise ImageInputError(name, "the file is empty")
    limit = max_pixels_limit() if max_pixels is None else max_pixels
    width, height, kind = header_size(data, name, limit)
    if width < 1 or height < 1:
        raise ImageInputError(name, f"declares a degenerate size {width} × {height}")
    if width * height > limit:
        raise _over_limit(name, f"{width} × {height} = {width * height:,} pixels", limit, setting)
    if min(width, height) < min_side:
        raise ImageInputError(name, f"is {width} × {height} pixels, smaller than the {min_side}-pixel minimum side")
    problem = _truncation(data, kind) or _too_short(data, kind, width, height)
    if problem:
        raise ImageInputError(name, problem)
    flag = MODES[mode]
    shrinking = max_side is not None and max(width, height) > max_side
    grey_first = shrinking and mode == "color" and kind == "PNG" and len(data) > 25 and data[25] in (0, 4)
    if grey_first:
        flag = cv2.IMREAD_GRAYSCALE
    elif shrinking and kind == "JPEG" and mode == "color":
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
    aspect = image.shape[1] / image.shape[0]  # a reduced decode rounds its sides: compare shapes, not orders
    if width != height and abs(aspect - height / width) < abs(aspect - width / height):
        width, height = height, width  # turned upright by its EXIF orientation
    if max_side is not None and max(image.shape[:2]) > max_side:
        factor = max_side / max(image.shape[:2])
        size = (max(1, round(image.shape[1] * factor)), max(1, round(image.shape[0] * factor)))
        image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    if grey_first:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    return image, (width, height)


def read_image(path: str | Path, *, mode: str = "color", max_pixels: int | None = None, min_side: int = 1,
               max_side: int | None = None) -> np.ndarray:
    """Read and decode an image file (see ``decode_image``); a missing or unreadable file is an
    ``ImageInputError`` too."""
    path = Path(path)
    return decode_image(read_image_bytes(path, max_pixels=max_pixels), str(path), mode=mode, max_pixels=max_pixels,
                        min_side=min_side, max_side=max_side)


def read_image_bytes(path: str | Path, *, max_pixels: int | None = None, max_bytes: int | None = None,
                     setting: str = MAX_PIXELS_VARIABLE) -> bytes:
    """The bytes of an image file; ``ImageInputError`` when it cannot be read or is no regular file (reading a
    named pipe would block, a device would never end), when it is larger than ``max_bytes``
    (``max_file_bytes_limit()``), or when the header in its first ``HEADER_BYTES`` declares more than
    ``max_pixels`` pixels: both are refused before the rest of the file is read."""
    path = Path(path)
    name = str(path)
    limit = max_file_bytes_limit() if max_bytes is None else max_bytes
    pixels = max_pixels_limit() if max_pixels is None else max_pixels
    try:
        _check_regular(path)  # before opening: opening a named pipe blocks
        with open(path, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ImageInputError(name, "is not a regular file (a folder, a named pipe or a device)")
            head = fh.read(HEADER_BYTES)
            if head and len(head) < info.st_size:  # the header alone first: a bomb is refused unread
                _check_header(head, name, pixels, setting)
            if info.st_size > limit:
                raise ImageInputError(name, f"is {info.st_size:,} bytes, over the limit of {limit:,} bytes for an "
                                            f"image file (raise {MAX_FILE_BYTES_VARIABLE} to accept it)")
            rest = fh.read(limit + 1 - len(head)) if len(head) < info.st_size else b""
    except OSError as exc:
        raise ImageInputError(name, f"cannot be read ({exc.strerror or exc})") from None
    data = head + rest
    if len(data) > limit:  # grew while being read
        raise ImageInputError(name, f"is over the limit of {limit:,} bytes for an image file")
    return data


def _check_regular(path: Path) -> None:
    mode = path.stat().st_mode
    if stat.S_ISDIR(mode):
        raise ImageInputError(str(path), "is a folder, not an image")
    if not stat.S_ISREG(mode):
        raise ImageInputError(str(path), "is not a regular file (a folder, a named pipe or a device)")


def _check_header(head: bytes, name: str, limit: int, setting: str = MAX_PIXELS_VARIABLE) -> None:
    """Refuse ``head`` (a file's first bytes) when its header declares more than ``limit`` pixels; a header that
    does not parse from the first bytes alone is left for the full read to judge."""
    try:
        width, height, _ = header_size(head, name, limit)
    except ImageInputError as exc:
        if "over the limit" in exc.reason:
            raise
        return
    if width * height > limit:
        raise _over_limit(name, f"{width} × {height} = {width * height:,} pixels", limit, setting)


def image_size(path: str | Path, *, max_pixels: int | None = None) -> tuple[int, int]:
    """(width, height) declared by an image file's header, read from its first bytes only; ``ImageInputError``
    when the file is no readable image or declares more than ``max_pixels`` pixels."""
    path = Path(path)
    limit = max_pixels_limit() if max_pixels is None else max_pixels
    try:
        _check_regular(path)
        with open(path, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise ImageInputError(str(path), "is not a regular file (a folder, a named pipe or a device)")
            head = fh.read(HEADER_BYTES)
    except OSError as exc:
        raise ImageInputError(str(path), f"cannot be read ({exc.strerror or exc})") from None
    if not head:
        raise ImageInputError(str(path), "the file is empty")
    width, height, _ = header_size(head, str(path), limit)
    if width * height > limit:
        raise _over_limit(str(path), f"{width} × {height} = {width * height:,} pixels", limit)
    return width, height
