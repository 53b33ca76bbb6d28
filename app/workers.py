"""Background work for the app (docs/architecture.md: anything over ~50 ms leaves the UI thread).

``run_in_worker(fn, ...)`` runs ``fn(job)`` on a ``QThreadPool`` and returns a ``WorkerHandle`` whose signals
arrive on the UI thread: ``progress(done, total, message)``, then exactly one of ``result(value)``,
``error(message)`` or ``cancelled()``, then ``finished()``.

Cancelling is cooperative: ``handle.cancel()`` sets a flag that ``fn`` sees through ``job.cancelled`` or
``job.check()`` between batches; ``job.progress(...)`` checks it too, so an engine function that reports
progress through ``job.engine_progress(message)`` stops at its next batch. A function that returns normally
delivers its result even when a cancel came late (it had passed its last cancellation point, e.g. after
committing to the case store); ``handle.is_cancelled`` tells the receiver.

Exceptions never reach the user as tracebacks: ``describe_error`` turns them into one readable sentence
(the engine's and the store's errors already name the input and the problem). A user's mistake (``USER_ERRORS``:
a missing file, a folder that is no gallery, a bad value) is logged to the ``lineup.app`` log as that one
sentence (its traceback only at debug level), so nothing prints a traceback on stderr; any other exception is
a fault of the app and is logged as an error with its traceback.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal, Slot

LOG = logging.getLogger("lineup.app")

#: Minimum seconds between two relayed progress reports: at most ~10 a second reach the UI thread, each a
#: progress bar repaint (the first, the last and a new message always go through).
PROGRESS_INTERVAL = 0.1


#: Exceptions that mean the input was wrong (the engine's and the store's input errors derive from these),
#: not that the app is: logged as one line, never with a traceback on stderr.
USER_ERRORS = (ValueError, OSError)


class Cancelled(Exception):  # noqa: N818 - reads as "the job was cancelled"
    """Raised inside a job when its handle was cancelled."""


def describe_error(exc: BaseException) -> str:
    """One readable sentence for the UI (no traceback)."""
    if isinstance(exc, Cancelled):
        return "Cancelled."
    if isinstance(exc, MemoryError):
        return "Out of memory: the operation needs more memory than is free; try a smaller batch or gallery."
    if isinstance(exc, OSError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror}{where}"
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, ValueError | KeyError | OSError):
        if isinstance(exc, KeyError) and text.startswith(("'", '"')):
            text = text[1:-1]
        return text[:1].upper() + text[1:]
    return f"Unexpected error ({type(exc).__name__}): {text}"


class Job:
    """What a worker function sees: progress reporting and the cancel flag."""

    def __init__(self, cancel_flag: threading.Event, report: Callable[[int, int, str], None]) -> None:
        self._cancel_flag = cancel_flag
        self._report = report
        self._last_report = 0.0
        self._last_message: str | None = None

    @property
    def cancelled(self) -> bool:
        return self._cancel_flag.is_set()

    def check(self) -> None:
        """Raise ``Cancelled`` when the handle was cancelled (call between batches)."""
        if self._cancel_flag.is_set():
            raise Cancelled("the job was cancelled")

    def progress(self, done: int, total: int, message: str = "") -> None:
        """Report ``done`` of ``total`` (total 0 = unknown); also a cancellation point."""
        self.check()
        now = time.monotonic()
        final = total > 0 and done >= total
        if final or message != self._last_message or now - self._last_report >= PROGRESS_INTERVAL:
            self._last_report = now
            self._last_message = message
            self._report(int(done), int(total), message)

    def engine_progress(self, message: str) -> Callable[[int, int], None]:
        """An engine-style ``progress(done, total)`` callback that reports under ``message``."""

        def report(done: int, total: int) -> None:
            self.progress(done, total, message)

        return report


class WorkerHandle(QObject):
    """A running job. Public signals are emitted on the thread that called ``run_in_worker`` (the UI)."""

    progress = Signal(int, int, str)
    result = Signal(object)
    error = Signal(str)
    cancelled = Signal()
    finished = Signal()

    # emitted from the worker thread; queued to the slots below because the handle lives on the UI thread
    _worker_progress = Signal(int, int, str)
    _worker_done = Signal(str, object)

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.exception: BaseException | None = None
        self._cancel_flag = threading.Event()
        self._done = threading.Event()
        self._running = True
        self._worker_progress.connect(self._relay_progress)
        self._worker_done.connect(self._relay_done)

    def cancel(self) -> None:
        """Ask the job to stop at its next cancellation point."""
        self._cancel_flag.set()

    @property
    def is_cancelled(self) -> bool:
        return self._cancel_flag.is_set()

    @property
    def is_running(self) -> bool:
        """True until ``finished`` has been emitted."""
        return self._running

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the worker function has returned (its signals may still be queued). True if it has."""
        return self._done.wait(timeout)

    def _job(self) -> Job:
        return Job(self._cancel_flag, self._worker_progress.emit)

    @Slot(int, int, str)
    def _relay_progress(self, done: int, total: int, message: str) -> None:
        if self._running:
            self.progress.emit(done, total, message)

    @Slot(str, object)
    def _relay_done(self, outcome: str, value: object) -> None:
        # delivered from a timer, not here: Qt handles queued calls (this one, the repaints a result's receivers
        # cause, the next job's result) ahead of due timers, and a step's result arriving behind the previous
        # one's paint starved the UI thread's timers for two steps' work in a row. A 0 ms single shot is itself
        # a queued call in Qt 6, hence 1 ms.
        QTimer.singleShot(1, self, lambda: self._deliver(outcome, value))

    def _deliver(self, outcome: str, value: object) -> None:
        try:
            if outcome == "result":
                self.result.emit(value)
            elif outcome == "cancelled":
                self.cancelled.emit()
            else:
                self.exception = value  # type: ignore[assignment]
                self.error.emit(describe_error(value))  # type: ignore[arg-type]
        finally:
            self._running = False
            _LIVE.discard(self)
            self.finished.emit()


class _Runnable(QRunnable):
    def __init__(self, handle: WorkerHandle, fn: Callable[[Job], Any]) -> None:
        super().__init__()
        self._handle = handle
        self._fn = fn

    def run(self) -> None:
        handle = self._handle
        try:
            value = self._fn(handle._job())
        except Cancelled:
            outcome, value = "cancelled", None
        except USER_ERRORS as exc:  # the input was wrong: the UI says so; one line in the log
            LOG.info("job %r stopped: %s", handle.name, describe_error(exc))
            LOG.debug("job %r stopped", handle.name, exc_info=exc)
            outcome, value = "error", exc
        except BaseException as exc:  # noqa: BLE001 - relayed to the UI as a message, logged in full
            LOG.error("job %r failed", handle.name, exc_info=exc)
            outcome, value = "error", exc
        else:
            outcome = "result"
        handle._done.set()
        handle._worker_done.emit(outcome, value)


#: Handles whose job has not finished yet (kept alive so their signals are delivered).
_LIVE: set[WorkerHandle] = set()


def run_in_worker(
    fn: Callable[[Job], Any],
    *,
    on_result: Callable[[Any], None] | None = None,
    on_error: Callable[[str], None] | None = None,
    on_progress: Callable[[int, int, str], None] | None = None,
    on_cancelled: Callable[[], None] | None = None,
    on_finished: Callable[[], None] | None = None,
    name: str = "",
    pool: QThreadPool | None = None,
) -> WorkerHandle:
    """Run ``fn(job)`` on ``pool`` (the global pool by default); callbacks run on the calling (UI) thread.

    ``name`` appears in logs and messages ("Searching", "Loading gallery"). Call from the UI thread."""
    handle = WorkerHandle(name or getattr(fn, "__name__", "job"))
    if on_progress is not None:
        handle.progress.connect(on_progress)
    if on_result is not None:
        handle.result.connect(on_result)
    if on_error is not None:
        handle.error.connect(on_error)
    if on_cancelled is not None:
        handle.cancelled.connect(on_cancelled)
    if on_finished is not None:
        handle.finished.connect(on_finished)
    _LIVE.add(handle)
    (pool or QThreadPool.globalInstance()).start(_Runnable(handle, fn))
    return handle


def running_jobs() -> list[WorkerHandle]:
    """Handles whose ``finished`` has not been emitted yet."""
    return list(_LIVE)


def cancel_all(pool: QThreadPool | None = None, timeout_ms: int = 5000) -> bool:
    """Cancel every running job and wait for the pool's threads (e.g. when the main window closes).
    True when all worker functions returned in time."""
    for handle in list(_LIVE):
        handle.cancel()
    return (pool or QThreadPool.globalInstance()).waitForDone(timeout_ms)


#: Modules that workers import on first use and whose first import holds the GIL long enough (norfair pulls
#: in scipy and rich: ~0.5 s here) to freeze the UI thread mid-job; imported once when the window is built.
PRELOADED_MODULES = ("engine.ingest", "norfair")


def preload_worker_modules() -> None:
    """Import ``PRELOADED_MODULES`` now (on the UI thread, before any job runs) instead of inside a worker."""
    import importlib

    for name in PRELOADED_MODULES:
        importlib.import_module(name)
