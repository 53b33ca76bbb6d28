"""Re-running a stored path of steps (docs/methods.md §1.3: steps are values, so the same queries on the same
gallery give the same steps): ``replay`` runs a plan made by ``app.state.replay.replay_plan`` on a fresh
session, and ``RerunStepsJob`` does it off the UI thread so every step of a reopened case has its full
``StepResult`` again, and ranks the questions to ask the witness after the path's last step (the head), so a
reopened case offers its question at once. A step whose kept items differ from the stored ones is reported, not
hidden.

``RerunOnVersionJob`` runs a path searched on an older version of a gallery on its current version (the
gallery grew: docs/architecture.md, "Gallery versions") and records the re-run steps as a new branch from the
start, on the case's record of the current version, with the marks each step had.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from app.jobs.job import BackgroundJob
from app.store import CaseState, CaseStore
from app.store.from_engine import step_input
from app.workers import Job
from engine.retrieval.search import SearchSession, SessionStateError, StepResult
from engine.retrieval.search.questions import questions_by_condition

SessionFactory = Callable[[], SearchSession]


@dataclass(frozen=True)
class ReplayOutcome:
    session: SearchSession  # holds the replayed steps (marks as at the last one)
    results: dict[int, StepResult]  # step id → re-run result
    snapshots: dict[int, SearchSession]  # step id → a session ending at that step
    differences: tuple[int, ...]  # step numbers whose kept items differ from the stored ones
    #: step id → viewing condition → the questions after it (``questions_by_condition``), where ranked
    questions: Mapping[int, Mapping[str, tuple[dict[str, Any], ...]]] = field(default_factory=dict)


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
    case's current marks (applied once the path has run). Result: a ``ReplayOutcome`` with the questions after
    the path's last step."""

    name = "Re-running steps"

    def __init__(self, plan: Sequence[Any], fresh: SessionFactory, marks: dict[str, str]) -> None:
        self.plan = list(plan)
        self.fresh = fresh
        self.marks = dict(marks)

    def run(self, job: Job) -> ReplayOutcome:
        outcome = replay(self.fresh(), self.plan, job.progress)
        apply_marks(outcome.session, *split_marks(self.marks))
        if not self.plan:
            return outcome
        job.check()
        head = self.plan[-1].step.id
        return replace(outcome, questions={head: questions_by_condition(outcome.session, top=None)})


@dataclass(frozen=True)
class VersionRerun:
    """What ``RerunOnVersionJob`` hands back: the case's record of the current version, the re-run (its
    ``results`` and ``snapshots`` keyed by the new steps' ids) and the case as stored afterwards."""

    gallery_id: int
    outcome: ReplayOutcome
    case: CaseState


class RerunOnVersionJob(BackgroundJob):
    """Inputs: the plan of the path searched on the old version (its steps, with their marks), a factory of
    step-less sessions on the whole current gallery, where to record (store, case id, the current version's
    identity for ``CaseStore.add_gallery``) and the case's marks now (carried to the new branch)."""

    name = "Re-running the path on the grown gallery"

    def __init__(self, plan: Sequence[Any], fresh: SessionFactory, *, store: CaseStore, case_id: int,
                 identity: dict[str, Any], marks: dict[str, str]) -> None:
        self.plan = list(plan)
        self.fresh = fresh
        self.store, self.case_id, self.identity = store, case_id, dict(identity)
        self.marks = dict(marks)

    def run(self, job: Job) -> VersionRerun:
        outcome = replay(self.fresh(), self.plan, job.progress)
        job.check()  # the last point where cancelling leaves no trace
        store, case_id = self.store, self.case_id
        gallery_id = store.add_gallery(case_id, **self.identity)
        store.branch_from(case_id, None)
        marks: dict[str, str] = {}
        ids: dict[int, int] = {}
        for entry in self.plan:
            wanted = {item: "rejected" for item in entry.rejected} | {item: "confirmed" for item in entry.confirmed}
            marks = self._set_marks(gallery_id, marks, wanted)
            ids[entry.step.id] = store.record_step(case_id, step_input(outcome.results[entry.step.id], gallery_id))
        self._set_marks(gallery_id, marks, self.marks)
        renamed = ReplayOutcome(outcome.session, {ids[k]: v for k, v in outcome.results.items()},
                                {ids[k]: v for k, v in outcome.snapshots.items()}, outcome.differences)
        return VersionRerun(gallery_id, renamed, store.load_case(case_id))

    def _set_marks(self, gallery_id: int, have: dict[str, str], wanted: dict[str, str]) -> dict[str, str]:
        """Make the marks on ``gallery_id`` go from ``have`` to ``wanted`` (so each re-run step is recorded with
        the marks it ran with, and the case's replay of the new branch finds them)."""
        for item in have.keys() - wanted.keys():
            self.store.mark(self.case_id, gallery_id, item, "cleared")
        for item, state in wanted.items():
            if have.get(item) != state:
                self.store.mark(self.case_id, gallery_id, item, state)
        return dict(wanted)
