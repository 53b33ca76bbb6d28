"""``JobRunner``: the one place the app's background jobs run, and the app's one busy state.

At most one job runs at a time. ``start(job, ...)`` refuses a second job while one runs (the ``error`` signal
says which one is running) rather than queueing it: every job reads the case or the gallery as it was when
it started, so a queued one would act on a state that has since moved. The worker thread is
``app.workers.run_in_worker`` (a ``QThreadPool``); its signals arrive on the UI thread in this order:
``busy_changed(True)``, ``progress(...)``, then the job's result (``on_result``), its failure (``failed`` and
``error``) or its cancel (``message``), then ``busy_changed(False)``, and last ``then(result)`` when given,
so a follow-up job (open the gallery an ingest just grew) can start once the runner is free.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, Signal

from app.jobs.job import BackgroundJob
from app.workers import WorkerHandle, run_in_worker


class JobRunner(QObject):
    """See the module docstring. Call from the UI thread."""

    busy_changed = Signal(bool)
    progress = Signal(int, int, str)  # done, total (0 = unknown), message
    failed = Signal(str, str)  # job name, readable message (the traceback goes to the log)
    error = Signal(str)  # a job failed, or was refused because another one runs
    message = Signal(str)  # information: a job stopped at a cancel

    def __init__(self, parent: QObject | None = None, *, pool: QThreadPool | None = None) -> None:
        super().__init__(parent)
        self._pool = pool
        self._job: BackgroundJob | None = None
        self._handle: WorkerHandle | None = None

    @property
    def busy(self) -> bool:
        return self._handle is not None

    @property
    def job_name(self) -> str:
        """The running job's name ("" when idle)."""
        return "" if self._job is None else self._job.name

    def refusal(self) -> str | None:
        """Why a new job (or a change of the case) must wait now, or None when the runner is idle."""
        if self._job is None:
            return None
        return f"{self._job.name} is still running: wait for it or cancel it"

    def start(self, job: BackgroundJob, on_result: Callable[[Any], None] | None = None, *,
              then: Callable[[Any], None] | None = None) -> WorkerHandle | None:
        """Run ``job`` in a worker; ``on_result(value)`` runs on the UI thread while the runner is still busy,
        ``then(value)`` once it is idle again. Returns the worker's handle, or None (and ``error``) when
        another job runs."""
        refusal = self.refusal()
        if refusal is not None:
            self.error.emit(refusal)
            return None
        delivered: list[Any] = []

        def result(value: Any) -> None:
            delivered.append(value)
            if on_result is not None:
                on_result(value)

        def failed(text: str) -> None:
            self.failed.emit(job.name, text)
            self.error.emit(text)

        def finished() -> None:
            self._job = self._handle = None
            self.busy_changed.emit(False)
            if then is not None and delivered:
                then(delivered[0])

        self._job = job
        self._handle = run_in_worker(job.run, on_result=result, on_error=failed, on_progress=self.progress.emit,
                                     on_cancelled=lambda: self.message.emit(job.cancelled_message),
                                     on_finished=finished, name=job.name, pool=self._pool)
        self.busy_changed.emit(True)
        return self._handle

    def cancel(self) -> None:
        """Ask the running job to stop at its next cancellation point."""
        if self._handle is not None:
            self._handle.cancel()

    def close(self, timeout_ms: int = 5000) -> bool:
        """Cancel the running job and wait for its worker function to return; True when it did in time."""
        if self._handle is None:
            return True
        self._handle.cancel()
        return self._handle.wait(timeout_ms / 1000)
