"""``IngestQueue``: sources waiting to be ingested into a gallery folder (Gallery → New gallery…), run one after
another as ``IngestFootageJob`` on the app's ``JobRunner`` (docs/architecture.md, "The app's jobs").

Each entry is a video file or a folder of footage, a folder of person crops or a built world, with its
destination gallery folder; the queue starts the next entry whenever the runner is idle, so another job (a
search) simply waits its turn. Every entry reports its progress (frames or images read), the rate measured so
far and the time left at that rate, and can be cancelled: a queued entry never starts, a running one stops at
its next batch (its committed batches stay, as a version of the gallery; ``engine.index.versions``).
``finished`` says which destinations got new items once nothing is left to run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from app.jobs import BackgroundJob, IngestFootageJob, JobRunner
from app.workers import WorkerHandle

#: What an entry is: the folder or file kinds the New gallery dialog offers.
SOURCE_KINDS = ("footage", "crops", "world")
UNITS = {"footage": "frames", "crops": "images", "world": "images"}
QUEUED, RUNNING, DONE, CANCELLED, FAILED = "queued", "running", "done", "cancelled", "failed"


class IngestQueueError(ValueError):
    """A source the queue cannot take (missing, the wrong kind), named in the message."""


@dataclass
class QueueEntry:
    source: Path
    kind: str  # one of SOURCE_KINDS
    destination: Path
    status: str = QUEUED
    done: int = 0
    total: int = 0
    started: float | None = None
    ended: float | None = None
    message: str = ""
    items_added: int | None = None

    @property
    def unit(self) -> str:
        return UNITS[self.kind]

    def rate(self, now: float) -> float | None:
        """Frames (or images) per second measured since the entry started (None before any was read)."""
        if self.started is None or self.done <= 0:
            return None
        elapsed = (self.ended or now) - self.started
        return self.done / elapsed if elapsed > 0 else None

    def seconds_left(self, now: float) -> float | None:
        rate = self.rate(now)
        if rate is None or self.total <= 0 or self.status != RUNNING:
            return None
        return max(0.0, (self.total - self.done) / rate)

    def describe(self, now: float) -> str:
        """ "412 / 1,200 frames · 35.2 frames/s · about 22 s left" (or the entry's outcome)."""
        if self.status == QUEUED:
            return "Queued"
        if self.status in (CANCELLED, FAILED):
            return self.message or self.status.capitalize()
        parts = [f"{self.done:,} / {self.total:,} {self.unit}" if self.total else f"{self.done:,} {self.unit}"]
        rate = self.rate(now)
        if rate is not None:
            parts.append(f"{rate:,.1f} {self.unit}/s")
        left = self.seconds_left(now)
        if left is not None:
            parts.append(f"about {_duration(left)} left")
        if self.status == DONE:
            added = "" if self.items_added is None else f"{self.items_added:,} items added · "
            return f"Done: {added}" + " · ".join(parts)
        return " · ".join(parts)


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def check_source(source: str | Path, kind: str) -> Path:
    """The source as a path, or ``IngestQueueError`` saying what is wrong with it."""
    if kind not in SOURCE_KINDS:
        raise IngestQueueError(f"A source is one of {', '.join(SOURCE_KINDS)}, not {kind!r}")
    path = Path(source)
    if not path.exists():
        raise IngestQueueError(f"The source {path} does not exist")
    if kind in ("crops", "world") and not path.is_dir():
        raise IngestQueueError(f"A {'crop folder' if kind == 'crops' else 'built world'} is a folder; {path} is "
                               "a file")
    return path


JobFactory = Callable[[QueueEntry], BackgroundJob]


class IngestQueue(QObject):
    """See the module docstring. Call from the UI thread. ``make_job(entry)`` makes an entry's job (default: an
    ``IngestFootageJob`` with ``models``)."""

    changed = Signal(int)  # index of the entry whose status or progress changed
    finished = Signal(object)  # list of destination folders that got items, once nothing is queued or running

    def __init__(self, runner: JobRunner, models=None, *, make_job: JobFactory | None = None,
                 clock: Callable[[], float] = time.monotonic, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.models = models
        self.make_job = make_job or self._ingest_job
        self.clock = clock
        self.entries: list[QueueEntry] = []
        self._running: int | None = None
        self._handle: WorkerHandle | None = None
        runner.busy_changed.connect(lambda busy: None if busy else QTimer.singleShot(0, self._next))

    def _ingest_job(self, entry: QueueEntry) -> BackgroundJob:
        if self.models is None:
            raise IngestQueueError("Ingest needs a model: start with `lineup app --checkpoint PATH`")
        return IngestFootageJob(entry.source, entry.destination, self.models, crops=entry.kind == "crops")

    @property
    def active(self) -> bool:
        """Whether an entry runs or waits."""
        return any(entry.status in (QUEUED, RUNNING) for entry in self.entries)

    def add(self, source: str | Path, kind: str, destination: str | Path) -> int:
        """Queue a source for ``destination`` (raises ``IngestQueueError``); returns its index. Call ``start``."""
        path = check_source(source, kind)
        entry = QueueEntry(path, kind, Path(destination))
        self.entries.append(entry)
        index = len(self.entries) - 1
        self.changed.emit(index)
        return index

    def start(self) -> None:
        """Run the queued entries (the next one starts whenever the runner is idle)."""
        self._next()

    def cancel(self, index: int) -> None:
        """Cancel an entry: a queued one never starts, the running one stops at its next batch."""
        entry = self.entries[index]
        if entry.status == QUEUED:
            entry.status, entry.message = CANCELLED, "Cancelled before it started"
            self.changed.emit(index)
            self._maybe_finished()
        elif entry.status == RUNNING and self._handle is not None:
            self._handle.cancel()

    def cancel_all(self) -> None:
        for index in range(len(self.entries)):
            self.cancel(index)

    def describe(self, index: int) -> str:
        return self.entries[index].describe(self.clock())

    def _next(self) -> None:
        if self._running is not None or self.runner.busy:
            return
        index = next((i for i, e in enumerate(self.entries) if e.status == QUEUED), None)
        if index is None:
            return
        entry = self.entries[index]
        try:
            job = self.make_job(entry)
        except ValueError as exc:
            self._settle(index, FAILED, str(exc))
            QTimer.singleShot(0, self._next)
            return
        handle = self.runner.start(job, lambda summary: self._result(index, summary))
        if handle is None:  # another job started meanwhile: try again when the runner is idle
            return
        self._running, self._handle = index, handle
        entry.status, entry.started = RUNNING, self.clock()
        handle.progress.connect(lambda done, total, message: self._progress(index, done, total, message))
        handle.cancelled.connect(lambda: self._settle(index, CANCELLED, "Cancelled (batches already added stay)"))
        handle.error.connect(lambda text: self._settle(index, FAILED, text))
        handle.finished.connect(lambda: self._finished(index))
        self.changed.emit(index)

    def _progress(self, index: int, done: int, total: int, message: str) -> None:
        entry = self.entries[index]
        if total > 0:  # the model load and gallery opening report no totals: they do not count as read
            entry.done, entry.total = done, total
        entry.message = message
        self.changed.emit(index)

    def _result(self, index: int, summary) -> None:
        entry = self.entries[index]
        totals = summary.totals() if hasattr(summary, "totals") else {}
        entry.items_added = totals.get("items_added")
        entry.done = max(entry.done, entry.total)
        self._settle(index, DONE, "")

    def _settle(self, index: int, status: str, message: str) -> None:
        entry = self.entries[index]
        entry.status, entry.message, entry.ended = status, message, self.clock()
        self.changed.emit(index)

    def _finished(self, index: int) -> None:
        if self.entries[index].status == RUNNING:  # finished without a result, cancel or error
            self._settle(index, CANCELLED, "Stopped")
        self._running = self._handle = None
        self._maybe_finished()
        QTimer.singleShot(0, self._next)

    def _maybe_finished(self) -> None:
        if self.active:
            return
        grown = [e.destination for e in self.entries if e.status == DONE or (e.status == CANCELLED and e.done)]
        self.finished.emit(list(dict.fromkeys(grown)))
