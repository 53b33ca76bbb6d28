"""``SearchStepJob``: run the next step of a case and record it, off the UI thread, with the questions to ask the
witness next (``engine.retrieval.search.questions``, every open key ranked under every viewing condition). When the
head's path has no live session (a reopened case), the path is re-run first (``app.jobs.rerun_steps``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.jobs.job import BackgroundJob
from app.jobs.rerun_steps import ReplayOutcome, SessionFactory, apply_marks, replay, split_marks
from app.store import CaseState, CaseStore
from app.store.from_engine import step_input
from app.workers import Job
from engine.retrieval.search import SearchSession, StepQuery, StepResult
from engine.retrieval.search.questions import questions_by_condition


@dataclass(frozen=True)
class StepOutcome:
    """What a search job hands back to the UI thread."""

    step_id: int
    result: StepResult
    session: SearchSession
    replayed: ReplayOutcome | None
    case: CaseState | None = None  # the case as stored after the step, read in the worker (not on the UI thread)
    #: viewing condition → every key the witness may be asked next, best first
    #: (``engine.retrieval.search.questions.questions_by_condition``)
    questions: Mapping[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)


def copy_fresh(session: SearchSession) -> SearchSession:
    """A step-less session's copy with the same gallery (and gallery version), encoder, ρ and marks (branch
    needs a step)."""
    copy = SearchSession(session.gallery, session.encoder, rho=session.rho, relevance=session.relevance,
                         target_identity=session.target_identity, item_limit=session.item_limit)
    apply_marks(copy, session.rejected, session.confirmed)
    return copy


class SearchStepJob(BackgroundJob):
    """Inputs: the query, where to record it (store, case id, gallery id), the live session on the head step
    or, without one, a factory of fresh sessions, the plan of the head's path and the case's marks; the witness
    question before the step and its answer (``question``, recorded with it) and the keys the witness said they
    do not know on this branch (``hidden``, never suggested)."""

    name = "Searching"

    def __init__(self, query: StepQuery, *, store: CaseStore, case_id: int, gallery_id: int,
                 base: SearchSession | None, fresh: SessionFactory, plan: Sequence[Any] | None,
                 marks: dict[str, str], question: dict[str, Any] | None = None,
                 hidden: frozenset[str] = frozenset()) -> None:
        self.query = query
        self.question, self.hidden = question, frozenset(hidden)
        self.store, self.case_id, self.gallery_id = store, case_id, gallery_id
        self.base = base
        self.fresh = fresh
        self.plan = plan
        self.marks = dict(marks)

    def run(self, job: Job) -> StepOutcome:
        replayed = None
        session = self.base
        if session is None:
            session = self.fresh()
            if self.plan:
                replayed = replay(session, self.plan, job.progress)
                session = replayed.session
            apply_marks(session, *split_marks(self.marks))
        fork = session.branch(-1) if session.steps else copy_fresh(session)
        job.progress(0, 0, "Searching")
        result = fork.step(self.query)
        hidden = self.hidden | set((self.question or {}).get("unknown", ()))
        questions = questions_by_condition(fork, result, hidden=hidden, top=None)
        job.check()  # the last point where cancelling leaves no trace
        step_id = self.store.record_step(self.case_id, step_input(result, self.gallery_id, self.question))
        return StepOutcome(step_id, result, fork, replayed, self.store.load_case(self.case_id), questions)
