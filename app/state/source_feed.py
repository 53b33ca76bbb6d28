"""The source player's decoder, off the UI thread: one thread opens an item's clip
(``engine.ingest.source_clip``), finds its sighting's boxes (``engine.index.sighting_boxes``) and decodes the
frame last asked for, has the view's ``render`` draw the boxes and hands the frame over as a ``QImage`` the UI
only paints.

Requests replace each other: ``open`` starts a new generation (the clip of the previous one is dropped, and a
long decode of it stops at its next frame); ``show`` asks for one frame, the newest wins. Everything arrives
on the UI thread through ``opened``, ``failed``, ``frame_ready`` and ``frame_failed``, tagged with the
generation it belongs to."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QImage

from engine.index import GalleryItem
from engine.index.sighting_boxes import ShownBox, SightingBoxes, sighting_items
from engine.ingest.source_clip import DEFAULT_SECONDS, Clip, ClipError, ImageClip, open_clip
from engine.kernel.video_frames import VideoStopped

__all__ = ["DEFAULT_SECONDS", "ClipInfo", "FrameFacts", "FrameFeed", "Render", "ShownBox"]

#: Frames are shrunk to this many pixels on their longer side before they are drawn on and handed over.
DISPLAY_SIDE = 960

#: How a frame is drawn (on the decoding thread): ``render(rgb, boxes, scale)`` gives the image to paint, the
#: boxes (source pixels) drawn on ``rgb`` (shrunk from the source by ``scale``).
Render = Callable[[np.ndarray, tuple[ShownBox, ...], float], QImage]


@dataclass(frozen=True)
class ClipInfo:
    """What an opened clip spans: its kind ("video" or "images"), the file, positions ``first`` … ``last``
    around ``start``, the frame rate (None for images or when the video states none) and how many items of
    the sighting stand in it."""

    kind: str
    file: Path
    first: int
    start: int
    last: int
    fps: float | None
    items: int


@dataclass(frozen=True)
class FrameFacts:
    """A delivered frame: its position, file, times, the boxes drawn (source pixels) and the factor from
    source pixels to the image's."""

    position: int
    file: Path
    video_time: float | None
    wall_time: float | None
    boxes: tuple[ShownBox, ...]
    scale: float


def _sighting(item: GalleryItem, gallery) -> list[GalleryItem]:
    if gallery is None or item.id not in gallery:
        return [item]
    return sighting_items(gallery, item.id)


def _boxes(clip: Clip, item: GalleryItem, members: list[GalleryItem]) -> SightingBoxes:
    if isinstance(clip, ImageClip):
        return SightingBoxes(members, item.id, lambda other: clip.position_of(other.source))
    same = str(clip.path)
    return SightingBoxes(members, item.id, lambda other: other.frame if other.source == same else None)


class _Requests:
    """What the UI asks of the decoding thread, under one lock (a plain object: it outlives the Qt side)."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.generation = 0
        self.open: tuple | None = None  # (generation, item or None to drop the clip, gallery, seconds)
        self.want: tuple[int, int] | None = None  # (generation, position)
        self.quit = False

    def end(self, *_args) -> None:
        with self.cond:
            self.quit = True
            self.generation += 1
            self.cond.notify()


class FrameFeed(QObject):
    """The decoding thread of one player (a daemon thread; ``stop`` ends it, and so does deleting the feed);
    ``render`` draws each frame there. Its signals are received on the UI thread."""

    opened = Signal(int, object)  # generation, ClipInfo
    failed = Signal(int, str)  # generation, why the clip cannot be played
    frame_ready = Signal(int, object, object)  # generation, QImage, FrameFacts
    frame_failed = Signal(int, int, str)  # generation, position, why

    def __init__(self, render: Render, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._render = render
        self._requests = _Requests()
        self.destroyed.connect(self._requests.end)
        self.decoded = 0  # frames decoded (tests and benches)
        self._thread = threading.Thread(target=self._run, name="lineup-player", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------------------------ UI thread side

    def open(self, item: GalleryItem, gallery, seconds: float) -> int:
        """Drop the current clip and open ``item``'s; returns the new generation."""
        requests = self._requests
        with requests.cond:
            requests.generation += 1
            requests.open = (requests.generation, item, gallery, seconds)
            requests.want = None
            requests.cond.notify()
            return requests.generation

    def cancel(self) -> int:
        """Drop the current clip and anything asked of it (a decode under way stops at its next frame);
        returns the new generation."""
        return self.open(None, None, 0.0)

    def show(self, generation: int, position: int) -> None:
        """Decode frame ``position`` of generation ``generation`` (replaces an earlier wish not yet begun)."""
        requests = self._requests
        with requests.cond:
            if generation == requests.generation:
                requests.want = (generation, position)
                requests.cond.notify()

    def stop(self, seconds: float = 5.0) -> None:
        """End the thread (the current decode stops at its next frame) and wait for it."""
        self._requests.end()
        self._thread.join(seconds)

    def idle(self) -> bool:
        """Whether nothing is asked of the thread that it has not taken up (tests)."""
        with self._requests.cond:
            return self._requests.open is None and self._requests.want is None

    # ------------------------------------------------------------------------------------ the thread

    def _stale(self, generation: int) -> bool:
        return generation != self._requests.generation or self._requests.quit

    def _run(self) -> None:
        requests = self._requests
        clip: Clip | None = None
        boxes: SightingBoxes | None = None
        current = 0
        try:
            while True:
                with requests.cond:
                    while not requests.quit and requests.open is None and requests.want is None:
                        requests.cond.wait()
                    if requests.quit:
                        return
                    request, requests.open = requests.open, None
                    want = requests.want
                if request is not None:
                    if clip is not None:
                        clip.close()
                    clip = boxes = None
                    current = request[0]
                    if request[1] is not None:
                        clip, boxes = self._open_clip(*request)
                if want is not None:
                    with requests.cond:
                        if requests.want == want:
                            requests.want = None
                    if clip is not None and want[0] == current and not self._stale(current):
                        self._decode(clip, boxes, current, want[1])
        finally:
            if clip is not None:
                clip.close()

    def _open_clip(self, generation: int, item: GalleryItem, gallery, seconds: float):
        try:
            clip = open_clip(item.source, item.frame, seconds=seconds, time=item.time)
        except ClipError as exc:
            self._emit(self.failed, generation, str(exc))
            return None, None
        try:
            members = _sighting(item, gallery)
        except (ValueError, OSError):  # the gallery changed under us: the item's own box still shows
            members = [item]
        boxes = _boxes(clip, item, members)
        inside = sum(1 for p in boxes.positions() if clip.first <= p <= clip.last)
        self._emit(self.opened, generation, ClipInfo(clip.kind, clip.path, clip.first, clip.start, clip.last,
                                                     clip.fps, inside))
        return clip, boxes

    def _decode(self, clip: Clip, boxes: SightingBoxes, generation: int, position: int) -> None:
        try:
            frame = clip.read(position, stop=lambda: self._stale(generation))
        except VideoStopped:
            return
        except ClipError as exc:
            self._emit(self.frame_failed, generation, position, str(exc))
            return
        self.decoded += 1
        rgb = cv2.cvtColor(frame.image, cv2.COLOR_BGR2RGB) if frame.image.ndim == 3 else \
            cv2.cvtColor(frame.image, cv2.COLOR_GRAY2RGB)
        height, width = rgb.shape[:2]
        scale = min(1.0, DISPLAY_SIDE / max(height, width))
        if scale < 1.0:
            rgb = cv2.resize(rgb, (max(1, round(width * scale)), max(1, round(height * scale))),
                             interpolation=cv2.INTER_AREA)
        shown = tuple(boxes.at(position))
        image = self._render(rgb, shown, scale)
        facts = FrameFacts(position, frame.file, frame.video_time, frame.wall_time, shown, scale)
        if not self._stale(generation):
            self._emit(self.frame_ready, generation, image, facts)

    @staticmethod
    def _emit(signal, *args) -> None:
        with contextlib.suppress(RuntimeError):  # the player was deleted meanwhile
            signal.emit(*args)
