"""Re-running a stored path of steps (docs/methods.md §1.3: steps are values, so the same queries on the same
gallery give the same steps): ``replay`` runs a plan made by ``app.state.replay.replay_plan`` on a fresh
session, and ``RerunStepsJob`` does it off the UI thread so every step of a reopened case has its full
``StepResult`` again. A step whose kept items differ from the stored ones is reported, not hidden.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from app.jobs.job import BackgroundJob
from app.workers import Job
from engine.search import SearchSession, SessionStateError, StepResult

SessionFactory = Callable[[], SearchSession]


@dataclass(frozen=True)
class ReplayOutcome:
    session: SearchSession  # holds the replayed steps (marks as at the last one)
    results: dict[int, StepResult]  # step id → re-run result
    snapshots: dict[int, SearchSession]  # step id → a session ending at that step
    differences: tuple[int, ...]  # step numbers whose kept items differ from the stored ones


def apply_marks(session: SearchSession, rejected: Sequence[str], confirmed: Sequence[str]) -> None:
    """Make the session's marks exactly ``rejected`` and ``confirmed``."""
    for item in (*session.rejected, *session.confirmed):
        session.clear_mark(item)
    for item in rejected:
        session.reject(item)
    for item in confirmed:
        session.confirm(item)


def split_marks(marks: dict[str, str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(rejected, confirmed) item ids of a {item: state} dict."""
    return (tuple(i for i, s in marks.items() if s == "rejected"),
            tuple(i for i, s in marks.items() if s == "confirmed"))


def replay(session: SearchSession, plan: Sequence[Any],
           progress: Callable[[int, int, str], None] | None = None) -> ReplayOutcome:
    """Run ``plan`` (``app.state.replay.ReplayStep`` entries) on ``session``, which must have no steps;
    ``progress(done, total, message)`` is called before each step and may raise to stop."""
    if session.steps:
        raise SessionStateError("replay needs a session without steps")
    results: dict[int, StepResult] = {}
    snapshots: dict[int, SearchSession] = {}
    differences = []
    for done, entry in enumerate(plan):
        number = entry.step.depth + 1
        if progress is not None:
            progress(done, len(plan), f"Re-running step {number} of {len(plan)}")
        apply_marks(session, entry.rejected, entry.confirmed)
        result = session.step(entry.query)
        results[entry.step.id] = result
        snapshots[entry.step.id] = session.branch(-1)
        if tuple(result.kept_ids) != tuple(entry.step.kept_ids):
            differences.append(number)
    if progress is not None and plan:
        progress(len(plan), len(plan), "Re-ran the steps")
    return ReplayOutcome(session, results, snapshots, tuple(differences))


class RerunStepsJob(BackgroundJob):
    """Inputs: a plan of the path to re-run, a factory of step-less sessions on the case's gallery and the
    case's current marks (applied once the path has run). Result: a ``ReplayOutcome``."""

    name = "Re-running steps"

    def __init__(self, plan: Sequence[Any], fresh: SessionFactory, marks: dict[str, str]) -> None:
        self.plan = list(plan)
        self.fresh = fresh
        self.marks = dict(marks)

    def run(self, job: Job) -> ReplayOutcome:
        outcome = replay(self.fresh(), self.plan, job.progress)
        apply_marks(outcome.session, *split_marks(self.marks))
        return outcome
