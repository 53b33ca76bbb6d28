"""``BackgroundJob``: one unit of work the app runs off the UI thread (docs/architecture.md, "The app's jobs").

A job is a small object: its constructor takes every input on the UI thread (plain values, the store, a
gallery), ``run(job)`` does the work on a worker thread and returns the result, reporting progress and
checking for a cancel through the ``app.workers.Job`` it is given. It never touches a widget or the app's
state; the ``JobRunner`` that started it hands the result back on the UI thread. An exception becomes one
readable message (``app.workers.describe_error``); a cancel before the job's last cancellation point leaves
no trace.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from app.workers import Job


class BackgroundJob(ABC):
    """See the module docstring. ``name`` is shown while the job runs ("Searching", "Ingesting")."""

    name: str = "Working"

    @property
    def cancelled_message(self) -> str:
        """What the user reads when the job stopped at a cancel."""
        return f"{self.name}: cancelled"

    @abstractmethod
    def run(self, job: Job) -> Any:
        """Do the work on a worker thread and return the result (``job``: progress and the cancel flag)."""
