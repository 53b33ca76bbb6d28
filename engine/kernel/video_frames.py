"""Frames of a video file by index, exactly: ``VideoFrames(path).read(k)`` is the k-th frame (0-based) in the
order ``cv2.VideoCapture`` decodes them, whatever the codec.

A read at the next index decodes forward; a read far ahead or behind seeks. OpenCV's ``CAP_PROP_POS_FRAMES``
can land on the wrong frame for streams whose timestamps are missing or odd, so a seek goes to ``PREROLL``
frames before the one wanted, checks that the capture reports standing there, and decodes forward counting
frames; when the capture cannot seek or reports another position, the file is read forward from its first
frame (and every later seek does the same). Frames declaring more pixels than ``max_pixels_limit()``
(``LINEUP_MAX_IMAGE_PIXELS``) are refused before any is decoded (docs/hardening.md). Every problem is a
``VideoInputError`` naming the file and what is wrong.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

from engine.kernel.images import MAX_PIXELS_VARIABLE, max_pixels_limit

#: Frames decoded before the one wanted after a seek (a seek lands on the frame asked for, or earlier).
PREROLL = 8
#: Reads this many frames ahead decode forward instead of seeking.
FORWARD_LIMIT = 48
#: Frames decoded between two looks at ``stop`` while decoding forward.
STOP_EVERY = 8


class VideoInputError(ValueError):
    """A video cannot give what was asked; ``path`` is the file and ``reason`` what is wrong."""

    def __init__(self, path: str | Path, reason: str) -> None:
        super().__init__(f"video {path}: {reason}")
        self.path = str(path)
        self.reason = reason


class VideoStopped(Exception):  # noqa: N818 - reads as "the read was stopped"
    """A read was given up because its ``stop`` callback said so."""


class VideoFrames:
    """An open video read by frame index. ``fps`` (None when the file states none), ``count`` (frames the file
    announces; 0 when unknown) and ``size`` (width, height) are known once open. Close it (or use ``with``)."""

    def __init__(self, path: str | Path, *, max_pixels: int | None = None) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise VideoInputError(self.path, "does not exist on this computer" if not self.path.exists()
                                  else "is not a regular file")
        self._capture = self._open()
        width = int(self._capture.get(cv2.CAP_PROP_FRAME_WIDTH))
        height = int(self._capture.get(cv2.CAP_PROP_FRAME_HEIGHT))
        limit = max_pixels if max_pixels is not None else max_pixels_limit()
        if width * height > limit:
            self.close()
            raise VideoInputError(self.path, f"its frames declare {width * height:,} pixels, over the limit of "
                                             f"{limit:,} ({MAX_PIXELS_VARIABLE})")
        self.size = (width, height)
        fps = self._capture.get(cv2.CAP_PROP_FPS)
        self.fps: float | None = fps if math.isfinite(fps) and 0 < fps < 1000 else None
        self.count = max(0, int(self._capture.get(cv2.CAP_PROP_FRAME_COUNT)))
        self._next = 0  # the index of the frame the next read decodes
        self._seeks = True  # cleared when a seek lands elsewhere than asked: from then on, read from the start

    def _open(self) -> cv2.VideoCapture:
        capture = cv2.VideoCapture(str(self.path))
        if not capture.isOpened():
            capture.release()
            raise VideoInputError(self.path, "cannot be opened as a video (corrupt or unsupported format)")
        return capture

    def __enter__(self) -> VideoFrames:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def close(self) -> None:
        if self._capture is not None:
            self._capture.release()
            self._capture = None

    @property
    def seeks(self) -> bool:
        """Whether seeking is trusted for this file (False once a seek landed elsewhere than asked)."""
        return self._seeks

    def read(self, index: int, stop: Callable[[], bool] | None = None) -> np.ndarray:
        """The BGR frame ``index``; ``stop`` (looked at while decoding forward) gives the read up with
        ``VideoStopped``."""
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise VideoInputError(self.path, f"frame index must be a whole number ≥ 0, got {index!r}")
        if self._capture is None:
            raise VideoInputError(self.path, "is closed")
        sought = index < self._next or index - self._next > FORWARD_LIMIT
        if sought:
            sought = self._seek(index)
        image = self._decode_to(index, stop)
        if sought and int(round(self._capture.get(cv2.CAP_PROP_POS_FRAMES))) != index + 1:
            self._seeks = False  # the capture lost count after the seek: read from the first frame instead
            self._restart()
            image = self._decode_to(index, stop)
        return image

    def _decode_to(self, index: int, stop: Callable[[], bool] | None) -> np.ndarray:
        skipped = 0
        while self._next < index:
            if stop is not None and skipped % STOP_EVERY == 0 and stop():
                raise VideoStopped(f"reading frame {index} of {self.path.name} was stopped")
            if not self._capture.grab():
                raise VideoInputError(self.path, f"ends before frame {index} (it has {self._next} frames)")
            self._next += 1
            skipped += 1
        ok, image = self._capture.read()
        if not ok or image is None:
            if self.count and index < self.count:
                raise VideoInputError(self.path, f"frame {index} cannot be decoded")
            raise VideoInputError(self.path, f"ends before frame {index} (it has {self._next} frames)")
        self._next += 1
        return image

    def _seek(self, index: int) -> bool:
        """Stand before ``index``: True when the capture sought there, False when it decodes forward."""
        target = max(0, index - PREROLL)
        if target > 0 and self._seeks:
            try:
                landed = self._capture.set(cv2.CAP_PROP_POS_FRAMES, float(target)) and \
                    int(round(self._capture.get(cv2.CAP_PROP_POS_FRAMES))) == target
            except cv2.error:
                landed = False
            if landed:
                self._next = target
                return True
            self._seeks = False
            self._restart()  # where a failed seek left the capture is unknown
        elif index < self._next:
            self._restart()
        return False

    def _restart(self) -> None:
        self._capture.release()
        self._capture = self._open()
        self._next = 0
