"""``StepActions``: the steps of ``AppState`` that run as background jobs (docs/architecture.md): run the next
step (a description, a query image, an example item), follow a sighting to the next camera, cut a step again
with another keep rule, re-run a reopened case's path, and re-run a path searched on an older gallery version
on the grown gallery.

A part composed into ``AppState`` (no mixin): it is given the state's other parts (``CaseSession``,
``GallerySession``, ``StepHistory``, ``SearchControls``, ``StepMoves``), starts the jobs of ``app.jobs`` on the
state's ``JobRunner`` and says what happened through ``Events`` (``app.state.events``): ``case_changed``,
``session_changed``, ``selected_step_changed``, ``step_recorded``, ``message`` and ``error``. Like every
``AppState`` method, these return None instead of raising.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from app.jobs import (
    BackgroundJob,
    JobRunner,
    ReplayOutcome,
    RerunOnVersionJob,
    RerunStepsJob,
    SearchStepJob,
    StepOutcome,
    VersionRerun,
)
from app.state.case_session import CaseSession, checked
from app.state.events import Events
from app.state.follow import FOLLOW_WINDOW, proposal_rows, proposals_message
from app.state.gallery_session import GallerySession
from app.state.gallery_versions import SearchedVersion
from app.state.query_spec import KeepRule, QuerySpec
from app.state.search_controls import SearchControls
from app.state.step_history import StepHistory
from app.state.step_moves import StepMoves
from app.state.timeline_rows import step_label
from app.state.witness_questions import WitnessQuestions
from app.state.working_state import Filters, no_candidates_message
from app.workers import Job, WorkerHandle
from engine.index.sightings import Sighting
from engine.retrieval.search import NoCandidatesError, QueryInputError, StepQuery
from engine.retrieval.search.follow import follow_query, is_follow


class NamingFilters(BackgroundJob):
    """A search job whose "no candidates" failure names the step's active filters and how to clear them."""

    def __init__(self, job: BackgroundJob, filters: Filters) -> None:
        self.job, self.filters = job, filters
        self.name = job.name

    @property
    def cancelled_message(self) -> str:
        return self.job.cancelled_message

    def run(self, job: Job) -> object:
        try:
            return self.job.run(job)
        except NoCandidatesError as exc:
            if not self.filters.active:
                raise
            raise NoCandidatesError(no_candidates_message(str(exc), self.filters)) from exc


class StepActions:
    """See the module docstring. ``require_idle()`` raises ``ActionRefused`` while a job runs; ``rho``: the
    keep rule of a fresh session and of find-similar without one; ``questions``: the witness questions a step
    from the query panel records and every step's job ranks (``app.state.witness_questions``)."""

    def __init__(self, cases: CaseSession, galleries: GallerySession, steps: StepHistory, controls: SearchControls,
                 moves: StepMoves, jobs: JobRunner, require_idle: Callable[[], None], events: Events, *,
                 rho: float, questions: WitnessQuestions | None = None) -> None:
        self.cases, self.galleries, self.steps, self.controls, self.moves = cases, galleries, steps, controls, moves
        self.jobs, self.require_idle, self.events, self.rho = jobs, require_idle, events, rho
        self.questions = questions if questions is not None else WitnessQuestions(cases, events)

    def search(self, spec: QuerySpec) -> WorkerHandle | None:
        """Run the next step from the head with the panel's query (in a worker) and record it."""
        filters = self.controls.filters
        try:
            query = spec.to_step_query(cameras=filters.cameras, time_range=filters.time_range)
        except QueryInputError as exc:
            self.events.emit("error", exc)
            return None
        self.controls.save(sketch=True)  # the case's working sketch is the one searched
        return self.run_step(query, question=self.questions.record_for_step())

    def find_similar(self, item_id: str, keep: KeepRule | None = None, scenario: str | None = None, *,
                     outfit_changed: bool = False) -> WorkerHandle | None:
        """The next step ranks by likeness to a gallery item (a confirmed sighting, typically); with
        ``outfit_changed`` the likeness of the biometrics the checkpoint's heads read joins it, for a person who
        may have changed clothes (``engine.retrieval.search.outfit_change``)."""
        keep = keep or KeepRule("rho", self.rho)
        filters = self.controls.filters
        try:
            query = StepQuery(example=item_id, scenario=scenario, outfit_changed=outfit_changed,
                              cameras=filters.cameras, time_range=filters.time_range, **keep.query_arguments())
        except QueryInputError as exc:
            self.events.emit("error", exc)
            return None
        return self.run_step(query)

    def follow(self, sighting: Sighting, window: float = FOLLOW_WINDOW) -> WorkerHandle | None:
        """The next step looks for the sighting's person on the gallery's other cameras within ``window`` seconds
        before and after it, over the whole gallery (``engine.retrieval.search.follow``); its proposals follow
        when it is recorded. The case's camera and time filters do not apply: the step sets its own."""
        gallery = self.galleries.gallery
        if gallery is None:
            self.events.emit("error", "Open a gallery to follow a sighting")
            return None
        try:
            query = follow_query(gallery, sighting, window=window)
        except (QueryInputError, NoCandidatesError) as exc:
            self.events.emit("error", exc)
            return None
        return self.run_step(query)

    def rerun_with_keep(self, step_id: int, rule: KeepRule) -> WorkerHandle | None:
        """Run a step again with another keep rule (e.g. a cut dragged on its plot): the same query from the
        same parent. The head step is undone and replaced; an earlier step gets a sibling branch. The rule
        applies to that step only: the next step's keep rule is whatever the query panel says."""
        if not self._ready():
            return None
        step, result = self.cases.step(step_id), self.steps.result(step_id)
        if step is None or result is None:
            self.events.emit("error", "Only a step searched (or re-run) since the case was opened can be cut "
                                      "again: re-run the case's steps first (Search menu)")
            return None
        if step.undone:
            self.events.emit("error", f"Step {step_label(self.cases.case, step_id)} was undone: branch from its "
                                      f"parent to search it again")
            return None
        try:
            query = replace(result.query, **({"rho": None, "k": None, "threshold": None} | rule.query_arguments()))
        except QueryInputError as exc:
            self.events.emit("error", exc)
            return None
        moves = self.moves
        moved = moves.undo_step() if step_id == self.cases.head_step_id else moves.branch_from(step.parent_id)
        return self.run_step(query) if moved else None

    def run_step(self, query: StepQuery, *, question: dict | None = None) -> WorkerHandle | None:
        """Run ``query`` as the next step from the head (``SearchStepJob``) and record it, with the witness
        ``question`` before it (``WitnessQuestions.record_for_step``) when given."""
        if not self._ready():
            return None
        cases = self.cases
        summary = cases.case.case
        if summary.status != "open":
            self.events.emit("error", f"Case {summary.title!r} is {summary.status}: reopen it to search")
            return None
        if cases.gallery_id is None:
            self.events.emit("error", "Open a gallery to search")
            return None
        if query.example is None and self.galleries.encoder is None:
            self.events.emit("error", "Text, sketch and IR queries need a model: load a checkpoint for this gallery")
            return None
        base, plan = self.steps.session, None
        if base is None:
            try:
                plan = cases.plan(cases.head_step_id)
            except ValueError as exc:
                self.events.emit("error", exc)
                return None
        job = SearchStepJob(query, store=cases.store, case_id=cases.case_id, gallery_id=cases.gallery_id,
                            base=base, fresh=self.galleries.session_factory(self.rho), plan=plan,
                            marks=cases.marks(), question=question, hidden=self.questions.hidden())
        return self.jobs.start(NamingFilters(job, Filters(query.cameras, query.time_range)), self._step_done)

    def _step_done(self, outcome: StepOutcome) -> None:
        cases, steps = self.cases, self.steps
        if outcome.replayed is not None:
            self._adopt_replay(outcome.replayed)
        steps.record(outcome)
        if cases.adopt(outcome.case):
            self.events.emit("case_changed", cases.case)
        else:
            cases.refresh()
        steps.select(outcome.step_id)
        self.questions.adopt(outcome.step_id, outcome.questions)
        self.events.emit("session_changed", steps.session)
        self.events.emit("step_recorded", outcome.step_id)
        result = outcome.result
        self.events.emit("message", f"Step {step_label(cases.case, outcome.step_id)}: "
                                    f"{result.candidates_before:,} → {result.candidates_after:,} candidates in "
                                    f"{result.seconds:.2f} s")
        if is_follow(result.query):
            self.events.emit("message", proposals_message(proposal_rows(result, self.galleries.gallery,
                                                                        cases.marks())))

    def _rerun_plan(self) -> list | None:
        """The plan to re-run the active path (``CaseSession.plan``), or None after saying why it cannot run
        (a step it cannot replay, or text steps without a model)."""
        try:
            plan = self.cases.plan(self.cases.head_step_id)
        except ValueError as exc:
            self.events.emit("error", exc)
            return None
        if any(entry.query.example is None for entry in plan) and self.galleries.encoder is None:
            self.events.emit("error", "This case's steps need a model to re-run: load the checkpoint that made them")
            return None
        return plan

    def restore_session(self) -> WorkerHandle | None:
        """Re-run the active path in a worker (``RerunStepsJob``) so every step on it has its full result."""
        if not self._ready():
            return None
        if self.cases.gallery_id is None:
            self.events.emit("error", "Open the case's gallery to re-run its steps")
            return None
        plan = self._rerun_plan()
        if plan is None:
            return None

        def done(outcome: ReplayOutcome) -> None:
            self._adopt_replay(outcome)
            self.steps.session = outcome.session
            self.questions.adopt_many(outcome.questions)  # the head step's questions, offered at once
            self.events.emit("session_changed", self.steps.session)
            self.events.emit("selected_step_changed", self.steps.selected)

        job = RerunStepsJob(plan, self.galleries.session_factory(self.rho), self.cases.marks())
        return self.jobs.start(job, done)

    def _adopt_replay(self, outcome: ReplayOutcome) -> None:
        difference = self.steps.adopt_replay(outcome)
        if difference is not None:
            self.events.emit("error", difference)

    def rerun_on_grown_gallery(self) -> WorkerHandle | None:
        """Re-run the path searched on an older version of the gallery on every item of its current version,
        recorded as a new branch from the start (``RerunOnVersionJob``); the case then goes on there."""
        if not self._ready():
            return None
        scope = self.galleries.scope
        if scope is None:
            self.events.emit("error", "This case's path already searches the gallery's current version")
            return None
        cases = self.cases
        summary = cases.case.case
        if summary.status != "open":
            self.events.emit("error", f"Case {summary.title!r} is {summary.status}: reopen it to re-run its path")
            return None
        plan = self._rerun_plan()
        if plan is None:
            return None
        job = RerunOnVersionJob(plan, self.galleries.session_factory(self.rho, whole=True), store=cases.store,
                                case_id=cases.case_id, identity=self.galleries.identity, marks=cases.marks())
        return self.jobs.start(job, lambda rerun: self._grown_rerun_done(rerun, scope))

    def _grown_rerun_done(self, rerun: VersionRerun, scope: SearchedVersion) -> None:
        cases, steps = self.cases, self.steps
        self.galleries.scope = None
        if not cases.adopt(rerun.case):
            cases.refresh()
        cases.gallery_id = rerun.gallery_id
        outcome = rerun.outcome
        steps.adopt_rerun(outcome)
        self.events.emit("case_changed", cases.case)
        self.events.emit("gallery_version_changed", None)
        self.events.emit("session_changed", steps.session)
        self.events.emit("marks_changed", cases.marks())
        steps.select(cases.head_step_id)
        changed = "" if not outcome.differences else (
            f"; step {', '.join(str(n) for n in outcome.differences)} now keeps other items than on "
            f"v{scope.version.version} (the footage added since)")
        self.events.emit("message", f"Re-ran {len(outcome.results)} steps on {scope.current.label()} as a new "
                                    f"branch from the start{changed}")

    def _ready(self) -> bool:
        """A case is open and no job runs (else an ``error`` event says which is missing)."""
        return checked(self.events, self.cases.require_case, self.require_idle)
