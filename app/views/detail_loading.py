"""The detail pane's pictures, read off the UI thread: the item's crop with its SHA-256, and its source (a video
sought to the item's frame, or the image itself) with the box drawn and the rest dimmed; when the source
cannot be read, the reason instead of a frame. ``render_frame`` draws the source player's frames (the
sighting's boxes, the selected item's in the same amber)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from PySide6.QtCore import QObject, QRunnable, Signal
from PySide6.QtGui import QImage

from app.state.image_files import sha256_of
from app.views.thumbnails import read_image, to_qimage

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp", ".ppm", ".pgm"})
BOX_COLOR = (255, 193, 7)  # RGB, amber: visible on day, night and IR frames
OUTSIDE_DIM = 0.55  # brightness kept outside the box, so the person stands out
ITEM_COLOR = (56, 189, 248)  # RGB, sky blue: the boxes of the other items of a sighting (the player)


@dataclass(frozen=True)
class SourceFrame:
    """The outcome of reading an item's source: the frame with its box drawn, or None and the reason."""

    image: np.ndarray | None
    status: str


def read_source_frame(source: str, frame: int | None) -> tuple[np.ndarray | None, str]:
    """RGB frame ``frame`` of a video, or the image itself; (None, reason) when it cannot be read."""
    path = Path(source)
    if not path.is_file():
        return None, f"Source not available: {path} does not exist on this computer."
    if path.suffix.lower() in IMAGE_SUFFIXES:
        image = read_image(path)
        return (image, "Source image") if image is not None else (None, f"Source {path.name} is not a readable image.")
    capture = cv2.VideoCapture(str(path))
    try:
        if not capture.isOpened():
            return None, f"Source {path.name} cannot be opened as a video."
        index = frame or 0
        if index > 0 and not capture.set(cv2.CAP_PROP_POS_FRAMES, index):
            for _ in range(index):  # the container does not seek: decode forward
                if not capture.grab():
                    return None, f"Source {path.name} ends before frame {index}."
        ok, bgr = capture.read()
        if not ok or bgr is None:
            return None, f"Frame {index} of {path.name} could not be decoded."
        return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), f"Frame {index} of {path.name}"
    finally:
        capture.release()


def draw_box(image: np.ndarray, box: tuple[float, float, float, float] | None) -> np.ndarray:
    """A copy of ``image`` with the (x, y, w, h) box outlined and the rest dimmed."""
    out = image.copy()
    if box is None:
        return out
    height, width = out.shape[:2]
    x0, y0 = max(0, int(round(box[0]))), max(0, int(round(box[1])))
    x1, y1 = min(width - 1, int(round(box[0] + box[2])) - 1), min(height - 1, int(round(box[1] + box[3])) - 1)
    if x1 < x0 or y1 < y0:
        return out
    inside = out[y0 : y1 + 1, x0 : x1 + 1].copy()
    out = (out.astype(np.float32) * OUTSIDE_DIM).astype(np.uint8)
    out[y0 : y1 + 1, x0 : x1 + 1] = inside
    thickness = max(2, round(min(height, width) / 180))
    cv2.rectangle(out, (x0, y0), (x1, y1), BOX_COLOR, thickness, lineType=cv2.LINE_8)
    return out


def draw_boxes(image: np.ndarray, boxes, scale: float = 1.0) -> np.ndarray:
    """``image`` (RGB, shrunk from its source by ``scale``) with each ``ShownBox`` outlined in place: the
    selected item's in ``BOX_COLOR``, the sighting's others in ``ITEM_COLOR``, thin where interpolated."""
    out = np.ascontiguousarray(image)
    height, width = out.shape[:2]
    thickness = max(2, round(min(height, width) / 180))
    for shown in boxes:
        x, y, w, h = (value * scale for value in shown.box)
        x0, y0 = max(0, int(round(x))), max(0, int(round(y)))
        x1, y1 = min(width - 1, int(round(x + w)) - 1), min(height - 1, int(round(y + h)) - 1)
        if x1 < x0 or y1 < y0:
            continue
        color = BOX_COLOR if shown.selected else ITEM_COLOR
        cv2.rectangle(out, (x0, y0), (x1, y1), color, 1 if shown.interpolated else thickness, lineType=cv2.LINE_8)
    return out


def render_frame(rgb: np.ndarray, boxes, scale: float) -> QImage:
    """The player's frame as painted: ``draw_boxes`` on ``rgb``, as a ``QImage`` (runs on the decoding thread)."""
    return to_qimage(draw_boxes(rgb, boxes, scale))


class LoadRelay(QObject):
    """Carries a finished load back to the pane's thread."""

    loaded = Signal(int, object, object, object, str)  # generation, crop QImage, frame QImage, crop sha, status


class LoadTask(QRunnable):
    """Reads an item's crop (and its SHA-256) and its source frame with the box drawn."""

    def __init__(self, relay: LoadRelay, generation: int, crop: Path | None, source: str, frame: int | None,
                 box, source_sha256: str | None = None) -> None:
        super().__init__()
        self._relay, self._generation = relay, generation
        self._crop, self._source, self._frame, self._box = crop, source, frame, box
        self._source_sha256 = source_sha256

    def run(self) -> None:
        crop_image = crop_sha = None
        if self._crop is not None:
            rgb = read_image(self._crop)
            crop_image = None if rgb is None else to_qimage(rgb)
            crop_sha = sha256_of(self._crop)
        try:
            rgb, status = read_source_frame(self._source, self._frame)
        except (cv2.error, OSError) as exc:
            rgb, status = None, f"Source could not be read: {exc}"
        if rgb is None and crop_sha is not None and crop_sha == self._source_sha256:
            # the item is its whole source image (a built world, a crop folder): the crop, whose SHA-256 is the
            # source's, shows it although the source file is not on this computer
            rgb = read_image(self._crop)
            status = (f"Source image (the crop is the source: same SHA-256; {Path(self._source).name} itself is "
                      "not on this computer)")
        frame_image = None if rgb is None else to_qimage(draw_box(rgb, self._box))
        with contextlib.suppress(RuntimeError):  # the pane was deleted meanwhile
            self._relay.loaded.emit(self._generation, crop_image, frame_image, crop_sha, status)
