"""The step actions of ``AppState`` (docs/architecture.md): run the next step (a description, a query image, an
example item), cut a step again with another keep rule, re-run a reopened case's path, undo, branch and
choose the step on view.

``StepActions`` is mixed into ``AppState``: it acts through the state's collaborators (``CaseSession``,
``GallerySession``, ``StepHistory``), starts the search and re-run jobs of ``app.jobs`` on the state's
``JobRunner`` and says what happened through the state's signals. Like every ``AppState`` method, these
return None/False and emit ``error`` instead of raising.
"""

from __future__ import annotations

from dataclasses import replace

from app.jobs import BackgroundJob, ReplayOutcome, RerunStepsJob, SearchStepJob, StepOutcome
from app.state.query_spec import KeepRule, QuerySpec
from app.state.timeline_rows import step_label
from app.state.working_state import Filters, no_candidates_message
from app.workers import Job, WorkerHandle
from engine.retrieval.search import NoCandidatesError, QueryInputError, StepQuery


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
    """See the module docstring (``AppState`` provides the attributes and signals used here)."""


    def search(self, spec: QuerySpec) -> WorkerHandle | None:
        """Run the next step from the head with the panel's query (in a worker) and record it."""
        try:
            query = spec.to_step_query(cameras=self.filters.cameras, time_range=self.filters.time_range)
        except QueryInputError as exc:
            self._report(exc)
            return None
        self._save_reported(sketch=True)  # the case's working sketch is the one searched
        return self.run_step(query)

    def find_similar(self, item_id: str, keep: KeepRule | None = None, scenario: str | None = None, *,
                     outfit_changed: bool = False) -> WorkerHandle | None:
        """The next step ranks by likeness to a gallery item (a confirmed sighting, typically); with
        ``outfit_changed`` the likeness of the biometrics the checkpoint's heads read joins it, for a person who
        may have changed clothes (``engine.retrieval.search.outfit_change``)."""
        keep = keep or KeepRule("rho", self._rho)
        try:
            query = StepQuery(example=item_id, scenario=scenario, outfit_changed=outfit_changed,
                              cameras=self.filters.cameras,
                              time_range=self.filters.time_range, **keep.query_arguments())
        except QueryInputError as exc:
            self._report(exc)
            return None
        return self.run_step(query)

    def confirmed_below(self, step_id: int, rule: KeepRule) -> list[tuple[str, float]]:
        """(item id, score) of the confirmed candidates of a step searched in this run that ``rule`` would cut
        if they were not confirmed (the engine keeps confirmed items whatever the rule; this says which ones
        only their mark keeps)."""
        return self._steps.confirmed_below(step_id, rule, self.marks)

    def rerun_with_keep(self, step_id: int, rule: KeepRule) -> WorkerHandle | None:
        """Run a step again with another keep rule (e.g. a cut dragged on its plot): the same query from the
        same parent. The head step is undone and replaced; an earlier step gets a sibling branch. The rule
        applies to that step only: the next step's keep rule is whatever the query panel says."""
        if not self._ready():
            return None
        step, result = self.step_state(step_id), self.step_result(step_id)
        if step is None or result is None:
            self.error.emit("Only a step searched (or re-run) since the case was opened can be cut again: "
                            "re-run the case's steps first (Search menu)")
            return None
        if step.undone:
            self.error.emit(f"Step {step_label(self.case, step_id)} was undone: branch from its parent to search it "
                            f"again")
            return None
        try:
            query = replace(result.query, **({"rho": None, "k": None, "threshold": None} | rule.query_arguments()))
        except QueryInputError as exc:
            self._report(exc)
            return None
        moved = self.undo_step() if step_id == self.head_step_id else self.branch_from(step.parent_id)
        return self.run_step(query) if moved else None

    def run_step(self, query: StepQuery) -> WorkerHandle | None:
        """Run ``query`` as the next step from the head (``SearchStepJob``) and record it."""
        if not self._ready():
            return None
        summary = self.case.case
        if summary.status != "open":
            self.error.emit(f"Case {summary.title!r} is {summary.status}: reopen it to search")
            return None
        if self.gallery_id is None:
            self.error.emit("Open a gallery to search")
            return None
        if query.example is None and self.encoder is None:
            self.error.emit("Text, sketch and IR queries need a model: load a checkpoint for this gallery")
            return None
        base, plan = self.session, None
        if base is None:
            try:
                plan = self._cases.plan(self.head_step_id)
            except ValueError as exc:
                self._report(exc)
                return None
        job = SearchStepJob(query, store=self.store, case_id=self.case_id, gallery_id=self.gallery_id, base=base,
                            fresh=self._galleries.session_factory(self._rho), plan=plan, marks=self.marks)
        return self.jobs.start(NamingFilters(job, Filters(query.cameras, query.time_range)), self._step_done)

    def _step_done(self, outcome: StepOutcome) -> None:
        if outcome.replayed is not None:
            self._adopt_replay(outcome.replayed)
        self._steps.record(outcome)
        if self._cases.adopt(outcome.case):
            self.case_changed.emit(self.case)
        else:
            self._reload_case()
        self._select(outcome.step_id)
        self.session_changed.emit(self.session)
        self.step_recorded.emit(outcome.step_id)
        result = outcome.result
        self.message.emit(f"Step {step_label(self.case, outcome.step_id)}: {result.candidates_before:,} → "
                          f"{result.candidates_after:,} candidates in {result.seconds:.2f} s")

    def _rerun_plan(self) -> list | None:
        """The plan to re-run the active path (``CaseSession.plan``), or None after saying why it cannot run
        (a step it cannot replay, or text steps without a model)."""
        try:
            plan = self._cases.plan(self.head_step_id)
        except ValueError as exc:
            self._report(exc)
            return None
        if any(entry.query.example is None for entry in plan) and self.encoder is None:
            self.error.emit("This case's steps need a model to re-run: load the checkpoint that made them")
            return None
        return plan

    def restore_session(self) -> WorkerHandle | None:
        """Re-run the active path in a worker (``RerunStepsJob``) so every step on it has its full result."""
        if not self._ready():
            return None
        if self.gallery_id is None:
            self.error.emit("Open the case's gallery to re-run its steps")
            return None
        plan = self._rerun_plan()
        if plan is None:
            return None

        def done(outcome: ReplayOutcome) -> None:
            self._adopt_replay(outcome)
            self._steps.session = outcome.session
            self.session_changed.emit(self.session)
            self.selected_step_changed.emit(self.selected_step_id)

        job = RerunStepsJob(plan, self._galleries.session_factory(self._rho), self.marks)
        return self.jobs.start(job, done)

    def _adopt_replay(self, outcome: ReplayOutcome) -> None:
        difference = self._steps.adopt_replay(outcome)
        if difference is not None:
            self.error.emit(difference)

    def undo_step(self) -> bool:
        """Undo the head step (it stays in the case, marked undone); its parent becomes the head."""
        if not self._ready():
            return False
        if self.head_step_id is None:
            self.error.emit("There is no step to undo")
            return False
        try:
            self.store.undo_step(self.case_id)
        except ValueError as exc:
            self._report(exc)
            return False
        self._after_head_move()
        return True

    def branch_from(self, step_id: int | None) -> bool:
        """Continue from ``step_id`` (None: from the whole gallery); the next step starts a branch there."""
        if not self._ready():
            return False
        try:
            moved = self.store.branch_from(self.case_id, step_id)
        except ValueError as exc:
            self._report(exc)
            return False
        if moved:
            self._after_head_move()
        return True

    def _after_head_move(self) -> None:
        self._reload_case()
        self._follow_head_version()
        self._activate_head()
        self._select(self.head_step_id)

    def _activate_head(self) -> None:
        """Make the live session end at the head step (None when that path must be re-run first)."""
        fresh = None if self.case is None or self.gallery_id is None else self._galleries.session_factory(self._rho)
        self.session_changed.emit(self._steps.activate(self.head_step_id, fresh, self.marks))

    def select_step(self, step_id: int | None) -> None:
        """Show a step's results (None: the whole gallery). Viewing changes nothing in the case."""
        if step_id is not None and self.step_state(step_id) is None:
            self.error.emit(f"The case has no step {step_id}")
            return
        self._select(step_id)

    def _select(self, step_id: int | None) -> None:
        self._steps.selected = step_id
        self.selected_step_changed.emit(step_id)

