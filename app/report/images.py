"""The report's copies of images (crops, sketches, IR stills): read, optionally face-blurred, shrunk to at most
``MAX_SIDE`` pixels, PNG-encoded. The files themselves are only read, never written."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from app.report.blur import blur_faces
from app.report.errors import ReportError
from engine.kernel.images import ImageInputError
from engine.kernel.images import read_image as load

MAX_SIDE = 320


@dataclass(frozen=True)
class ReportImage:
    """PNG bytes of the copy and its size in pixels; ``blurred`` is None (not blurred) or how it was blurred:
    "face", "face+head" or "head" (``app.report.blur.METHODS``); ``scale`` pixels per display point (2 for plots
    drawn at double resolution)."""

    png: bytes
    width: int
    height: int
    blurred: str | None = None
    scale: int = 1

    def fit(self, max_width: float, max_height: float) -> tuple[int, int]:
        """Display size within the box, keeping the aspect ratio (small images are enlarged to fill it)."""
        factor = min(max_width / self.width, max_height / self.height)
        return max(1, round(self.width * factor)), max(1, round(self.height * factor))


def read_image(path: str | Path) -> np.ndarray:
    """An 8-bit BGR or grey image from a file (alpha composited onto white, 16-bit scaled to 8-bit)."""
    path = Path(path)
    try:
        image = load(path, mode="unchanged")
    except ImageInputError as exc:
        raise ReportError(str(exc)) from None
    if image.dtype == np.uint16:
        image = (image >> 8).astype(np.uint8)
    elif image.dtype != np.uint8:
        scaled = cv2.normalize(image.astype(np.float64), None, 0, 255, cv2.NORM_MINMAX)
        image = scaled.astype(np.uint8)
    if image.ndim == 3 and image.shape[2] == 4:
        alpha = image[:, :, 3:4].astype(np.float32) / 255.0
        image = (image[:, :, :3].astype(np.float32) * alpha + 255.0 * (1.0 - alpha)).round().astype(np.uint8)
    return image


def encode(image: np.ndarray, *, max_side: int = MAX_SIDE, blurred: str | None = None) -> ReportImage:
    height, width = image.shape[:2]
    factor = min(1.0, max_side / max(height, width))
    if factor < 1.0:
        size = (max(1, round(width * factor)), max(1, round(height * factor)))
        image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    ok, data = cv2.imencode(".png", image)
    if not ok:
        raise ReportError(f"an image of shape {image.shape} could not be encoded as PNG")
    return ReportImage(data.tobytes(), int(image.shape[1]), int(image.shape[0]), blurred)


def report_image(path: str | Path, *, blur: bool = False, max_side: int = MAX_SIDE) -> ReportImage:
    """The report's copy of the image at ``path``; with ``blur`` the faces a face detector finds in it (else its
    head region) blurred first, at full resolution (``app.report.blur``)."""
    image = read_image(path)
    if not blur:
        return encode(image, max_side=max_side)
    result = blur_faces(image)
    return encode(result.image, max_side=max_side, blurred=result.method)
