"""Thumbnails for the results grid: crops are read and scaled off the UI thread (newest requests first, so the
rows on screen win over rows scrolled past), and kept in a bounded least-recently-used cache.

Workers only decode and scale (``QImage`` is safe off the UI thread); pixmaps are made on the UI thread."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
from PySide6.QtCore import QObject, QRunnable, QSize, Qt, QThreadPool, QTimer, Signal
from PySide6.QtGui import QImage, QPixmap

from app.state.image_files import read_rgb as read_image

#: item id -> crop file (None when the item has no crop); called on a worker thread.
CropResolver = Callable[[str], Path | None]

DEFAULT_SIZE = QSize(80, 160)
DEFAULT_CAPACITY = 1500  # ≈ 1500 × 80×160×4 B ≈ 77 MB at most
BATCH = 16  # ids a worker takes at a time
THUMBNAIL_MAX_SIDE = 1024  # pixels: a crop is shrunk to this right after decoding, before it is scaled to fit
MAX_PENDING = 600  # older requests beyond this are dropped (they are asked again if painted again)


class GalleryCrops:
    """Crop paths of a gallery (``AppState.gallery``) (reads the item's line; safe on a worker thread). Two
    resolvers over the same gallery object compare equal, so the loader keeps its cache across steps."""

    def __init__(self, gallery) -> None:
        self.gallery = gallery

    def __call__(self, item_id: str) -> Path | None:
        crop = self.gallery.item(item_id).crop
        return None if crop is None else Path(self.gallery.root) / crop

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GalleryCrops) and other.gallery is self.gallery

    def __hash__(self) -> int:
        return id(self.gallery)


class MappedCrops:
    """Crop paths from a plain ``{item id: path}`` mapping (ids not in it have no crop)."""

    def __init__(self, crops: dict[str, str | Path | None]) -> None:
        self.crops = {key: None if value is None else Path(value) for key, value in crops.items()}

    def __call__(self, item_id: str) -> Path | None:
        return self.crops.get(item_id)


def to_qimage(rgb: np.ndarray) -> QImage:
    """A QImage owning a copy of an RGB uint8 [H, W, 3] array."""
    rgb = np.ascontiguousarray(rgb)
    height, width = rgb.shape[:2]
    return QImage(rgb.data, width, height, rgb.strides[0], QImage.Format.Format_RGB888).copy()


def scaled_to_fit(rgb: np.ndarray, size: QSize) -> np.ndarray:
    """``rgb`` scaled (area filter down, cubic up) to fit inside ``size`` with its aspect kept."""
    height, width = rgb.shape[:2]
    factor = min(size.width() / width, size.height() / height)
    target = (max(1, round(width * factor)), max(1, round(height * factor)))
    interpolation = cv2.INTER_AREA if factor < 1 else cv2.INTER_CUBIC
    return cv2.resize(rgb, target, interpolation=interpolation)


class _Relay(QObject):
    """Carries results from worker threads to the UI thread (queued, as the relay lives on the UI thread)."""

    loaded = Signal(int, str, object)  # generation, item id, QImage or None


class _LoadTask(QRunnable):
    def __init__(self, loader: ThumbnailLoader, generation: int) -> None:
        super().__init__()
        self._loader = loader
        self._generation = generation

    def run(self) -> None:
        loader = self._loader
        try:
            while True:
                batch = loader._take(self._generation)
                if not batch:
                    return
                for item_id in batch:
                    image = loader._load(item_id)
                    try:
                        loader._relay.loaded.emit(self._generation, item_id, image)
                    except RuntimeError:  # the loader was deleted while this task ran
                        return
        finally:
            loader._task_finished()


class ThumbnailLoader(QObject):
    """Lazy, cached thumbnails keyed by item id.

    ``thumbnail(id)`` answers at once: the pixmap when cached, else None and the crop is queued. ``ready``
    then reports the ids that arrived (coalesced, about every 30 ms). ``failed(id)`` tells a missing or
    unreadable crop from one still loading."""

    ready = Signal(list)

    def __init__(self, resolver: CropResolver | None = None, size: QSize = DEFAULT_SIZE,
                 capacity: int = DEFAULT_CAPACITY, threads: int = 2, parent: QObject | None = None) -> None:
        super().__init__(parent)
        if capacity < 1:
            raise ValueError(f"thumbnail cache capacity must be at least 1, got {capacity}")
        self._size = QSize(size)
        self._capacity = capacity
        self._resolver = resolver
        self._generation = 0
        self._cache: OrderedDict[str, QPixmap] = OrderedDict()
        self._failed: set[str] = set()
        self._lock = threading.Lock()
        self._wanted: OrderedDict[str, None] = OrderedDict()  # guarded by _lock
        self._running = 0  # guarded by _lock
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(max(1, threads))
        self._relay = _Relay(self)
        self._relay.loaded.connect(self._arrived, Qt.ConnectionType.QueuedConnection)
        self._arrivals: list[str] = []
        self._flush = QTimer(self, singleShot=True, interval=30)
        self._flush.timeout.connect(self._announce)

    @property
    def size(self) -> QSize:
        return QSize(self._size)

    def set_resolver(self, resolver: CropResolver | None) -> None:
        """Use another source of crops: the cache and every queued request are dropped (nothing happens when
        ``resolver`` equals the current one)."""
        if resolver is not None and resolver == self._resolver:
            return
        with self._lock:
            self._generation += 1
            self._wanted.clear()
            self._resolver = resolver
        self._cache.clear()
        self._failed.clear()
        self._arrivals.clear()

    def thumbnail(self, item_id: str) -> QPixmap | None:
        pixmap = self._cache.get(item_id)
        if pixmap is not None:
            self._cache.move_to_end(item_id)
            return pixmap
        if not self.failed(item_id):
            self.request(item_id)
        return None

    def failed(self, item_id: str) -> bool:
        """True when the item has no readable crop (or there is no source of crops at all)."""
        return self._resolver is None or item_id in self._failed

    def request(self, item_id: str) -> None:
        """Queue ``item_id`` (or move it to the front of the queue)."""
        with self._lock:
            if self._resolver is None:
                return
            self._wanted[item_id] = None
            self._wanted.move_to_end(item_id)
            while len(self._wanted) > MAX_PENDING:
                self._wanted.popitem(last=False)
            start = self._running < self._pool.maxThreadCount()
            if start:
                self._running += 1
            generation = self._generation
        if start:
            self._pool.start(_LoadTask(self, generation))

    @property
    def idle(self) -> bool:
        """Nothing queued, loading or waiting to be announced (a screenshot now shows every thumbnail)."""
        with self._lock:
            busy = bool(self._wanted) or self._running > 0
        return not busy and not self._arrivals and not self._flush.isActive()

    def wait(self, msecs: int = 5000) -> bool:
        """Block until queued loads finish (tests and shutdown); their results still arrive as events."""
        return self._pool.waitForDone(msecs)

    def shutdown(self) -> None:
        """Drop queued requests and wait for the loads in flight."""
        with self._lock:
            self._wanted.clear()
            self._generation += 1
        self._pool.waitForDone(-1)

    # ------------------------------------------------------------------------------------- worker side

    def _take(self, generation: int) -> list[str]:
        with self._lock:
            if generation != self._generation:
                return []
            batch = []
            while self._wanted and len(batch) < BATCH:
                batch.append(self._wanted.popitem(last=True)[0])
            return batch

    def _task_finished(self) -> None:
        with self._lock:
            self._running -= 1

    def _load(self, item_id: str) -> QImage | None:
        with self._lock:
            resolver, size = self._resolver, QSize(self._size)
        if resolver is None:
            return None
        try:
            path = resolver(item_id)
        except Exception:  # an unknown id or an unreadable item record: shown as "no crop"
            return None
        if path is None:
            return None
        image = read_image(Path(path), max_side=THUMBNAIL_MAX_SIDE)
        return None if image is None else to_qimage(scaled_to_fit(image, size))

    # ----------------------------------------------------------------------------------------- UI side

    def _arrived(self, generation: int, item_id: str, image: QImage | None) -> None:
        if generation != self._generation:
            return
        if image is None:
            self._failed.add(item_id)
        else:
            self._cache[item_id] = QPixmap.fromImage(image)
            self._cache.move_to_end(item_id)
            while len(self._cache) > self._capacity:
                self._cache.popitem(last=False)
        self._arrivals.append(item_id)
        if not self._flush.isActive():
            self._flush.start()

    def _announce(self) -> None:
        ids, self._arrivals = self._arrivals, []
        if ids:
            self.ready.emit(ids)
