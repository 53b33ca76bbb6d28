"""The frames of a source around one frame, for playing an item's source: ``open_clip(source, frame)``.

- a video: the frames within ``seconds`` either side of ``frame`` (``engine.kernel.video_frames``: frame k is
  exactly the k-th frame decoded), each with its video time (seconds since the first frame) and, when the
  item's wall-clock time is given, the wall-clock time of the camera (the item's time moved by the frames
  between at the video's frame rate);
- an image of a folder: the neighbouring images of its sequence, in the order ingest reads them
  (``engine.ingest.sources.image_sequence``: time, then name): those within ``seconds`` when the images have
  times, else ``NEIGHBOUR_IMAGES`` either side; a clip position is the image's index in the sequence (the
  ``frame`` ingest gives an image of a sequence).

A source that is missing, unreadable, too large or shorter than the frame asked for is a ``ClipError`` naming
the file and the problem. Frames are read one at a time (``read``), so a clip of a long video holds one
decoder, never its frames."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.ingest.errors import IngestError
from engine.ingest.sources import image_sequence
from engine.kernel.images import IMAGE_EXTENSIONS, ImageInputError, read_image
from engine.kernel.video_frames import VideoFrames, VideoInputError

DEFAULT_SECONDS = 3.0
#: Frames either side when a video states no frame rate.
FRAMES_WITHOUT_RATE = 75
#: Images either side when a folder's images have no times, and the most either side when they have.
NEIGHBOUR_IMAGES = 10
MAX_NEIGHBOUR_IMAGES = 250


class ClipError(ValueError):
    """A source cannot be played; the message names the file and the problem."""


@dataclass(frozen=True)
class ClipFrame:
    """One frame of a clip: its position (a video's frame number, an image's index in its sequence), the BGR
    pixels, the file, and its video and wall-clock times (None when unknown)."""

    position: int
    image: np.ndarray
    file: Path
    video_time: float | None
    wall_time: float | None


def _check_seconds(seconds: float) -> float:
    if not isinstance(seconds, int | float) or not math.isfinite(seconds) or seconds < 0:
        raise ClipError(f"the clip's half length must be a number of seconds ≥ 0, got {seconds!r}")
    return float(seconds)


class VideoClip:
    """Frames ``first`` … ``last`` of a video around ``start`` (the item's frame)."""

    kind = "video"

    def __init__(self, path: Path, frame: int, seconds: float, time: float | None) -> None:
        try:
            self._video = VideoFrames(path)
        except VideoInputError as exc:
            raise ClipError(str(exc)) from None
        self.path = path
        self.fps = self._video.fps
        count = self._video.count
        if count and frame >= count:
            self._video.close()
            raise ClipError(f"video {path}: it has {count} frames; the item's frame {frame} is past its end")
        span = round(seconds * self.fps) if self.fps else FRAMES_WITHOUT_RATE
        self.start = frame
        self.first = max(0, frame - span)
        self.last = frame + span if not count else min(count - 1, frame + span)
        self._time = time

    def times(self, position: int) -> tuple[float | None, float | None]:
        """(video time, wall-clock time) of frame ``position``."""
        if self.fps is None:
            return None, self._time if position == self.start else None
        video = position / self.fps
        wall = None if self._time is None else self._time + (position - self.start) / self.fps
        return video, wall

    def file_at(self, _position: int) -> Path:
        return self.path

    def read(self, position: int, stop: Callable[[], bool] | None = None) -> ClipFrame:
        """Frame ``position`` (``VideoStopped`` when ``stop`` says so while decoding forward)."""
        if not self.first <= position <= self.last:
            raise ClipError(f"video {self.path}: frame {position} is outside the clip ({self.first}–{self.last})")
        try:
            image = self._video.read(position, stop)
        except VideoInputError as exc:
            if position > self.start:  # the file ends sooner than it announced: the clip ends there
                self.last = max(self.start, position - 1)
            raise ClipError(str(exc)) from None
        video, wall = self.times(position)
        return ClipFrame(position, image, self.path, video, wall)

    def close(self) -> None:
        self._video.close()


class ImageClip:
    """The images ``first`` … ``last`` of a folder's sequence around ``start`` (the item's image)."""

    kind = "images"
    fps = None

    def __init__(self, path: Path, seconds: float, time: float | None) -> None:
        if not path.is_file():
            raise ClipError(f"image {path}: does not exist on this computer")
        try:
            sequence = image_sequence(path)
        except IngestError as exc:
            raise ClipError(str(exc)) from None
        self.path = path
        self._files = [file for file, _ in sequence.files]
        self._stamps = [stamp.time for _, stamp in sequence.files]
        self.start = self._files.index(path)
        own = self._stamps[self.start]
        if own is not None and all(stamp is not None for stamp in self._stamps):
            near = [i for i, stamp in enumerate(self._stamps) if abs(stamp - own) <= seconds]
            self.first = max(min(near), self.start - MAX_NEIGHBOUR_IMAGES)
            self.last = min(max(near), self.start + MAX_NEIGHBOUR_IMAGES)
        else:
            self.first = max(0, self.start - NEIGHBOUR_IMAGES)
            self.last = min(len(self._files) - 1, self.start + NEIGHBOUR_IMAGES)
        self._time = time

    def times(self, position: int) -> tuple[float | None, float | None]:
        stamp = self._stamps[position]
        return None, stamp if stamp is not None else (self._time if position == self.start else None)

    def file_at(self, position: int) -> Path:
        return self._files[position]

    def position_of(self, source: str | Path) -> int | None:
        """The position of an image of the clip, or None when it is not one."""
        try:
            index = self._files.index(Path(source))
        except ValueError:
            return None
        return index if self.first <= index <= self.last else None

    def read(self, position: int, stop: Callable[[], bool] | None = None) -> ClipFrame:
        if not self.first <= position <= self.last:
            raise ClipError(f"folder {self.path.parent}: image {position} is outside the clip "
                            f"({self.first}–{self.last})")
        file = self._files[position]
        try:
            image = read_image(file)
        except ImageInputError as exc:
            raise ClipError(str(exc)) from None
        _, wall = self.times(position)
        return ClipFrame(position, image, file, None, wall)

    def close(self) -> None:
        pass


Clip = VideoClip | ImageClip


def open_clip(source: str | Path, frame: int | None, *, seconds: float = DEFAULT_SECONDS,
              time: float | None = None) -> Clip:
    """The clip of ``source`` around ``frame`` (a video's frame; ignored for an image), ``seconds`` either side;
    ``time``: the wall-clock time of that frame (the item's time), if known."""
    seconds = _check_seconds(seconds)
    path = Path(source)
    if path.suffix.lower() in IMAGE_EXTENSIONS:
        return ImageClip(path, seconds, time)
    if frame is not None and (not isinstance(frame, int) or isinstance(frame, bool) or frame < 0):
        raise ClipError(f"video {path}: frame must be a whole number ≥ 0, got {frame!r}")
    return VideoClip(path, frame or 0, seconds, time)
