"""``AppState``: the one object widgets listen to and call (docs/architecture.md: state in plain objects that
emit changes; widgets subscribe; work over ~50 ms in a worker).

It is a thin Qt facade over parts with one responsibility each, all plain Python that imports no Qt and says
what changed through one ``Events`` hook (``app.state.events``), which this facade re-emits as its signals:
``CaseSession`` (the case store and the open case), ``GallerySession`` (the gallery, its query encoder and
the ground truth) with ``GalleryPlacement`` (the gallery version the case's path searches), ``StepHistory``
(the engine sessions and results of the case's steps, the step on view) with ``StepMoves`` (undo, branch,
the step on view), ``MarkBook`` (marks and notes, ``app.state.marks``), ``SearchControls`` (the case's
filters and query inputs), ``WitnessQuestions`` (the next question to ask the witness, public as
``questions``) and ``StepActions`` (the steps run as jobs: search, follow, cut again, re-run) on the
``JobRunner`` (``jobs``) that runs the background jobs of ``app.jobs`` and holds the app's one busy state.
Every action that changes the case (a step, undo, branch, a mark, a note) is committed to the ``CaseStore``
in one transaction before any signal says it happened. Errors become ``error(str)`` messages; methods return
None/False instead of raising, so a widget never needs a try block.

Sessions: the live session's steps are the case's active path; undo and branch switch to the session kept
after a step. A path with no kept session (a reopened case, a branch recorded before this run) is re-run in a
worker before the next search, or on ``restore_session()``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, Signal

from app.jobs import JobRunner, OpenedGallery, OpenGalleryJob
from app.jobs.open_gallery import EncoderFactory
from app.state.case_session import ActionRefused, CaseSession, checked
from app.state.events import Events
from app.state.follow import FOLLOW_WINDOW, proposal_rows
from app.state.gallery_placement import GalleryPlacement
from app.state.gallery_session import GallerySession
from app.state.gallery_versions import SearchedVersion, searched_version
from app.state.marks import MarkBook
from app.state.query_spec import KeepRule, QuerySpec
from app.state.search_controls import SearchControls
from app.state.step_actions import StepActions
from app.state.step_history import StepHistory
from app.state.step_moves import StepMoves
from app.state.witness_questions import WitnessQuestions
from app.state.working_state import Filters, QueryInputs, WorkingState
from app.store import CaseState, CaseStore, CaseSummary, StepState
from app.workers import WorkerHandle, describe_error
from engine.index import Gallery
from engine.index.sightings import Sighting
from engine.kernel.keep_rules import DEFAULT_RHO
from engine.retrieval.search import FinalRanking, QueryEncoder, SearchSession, StepQuery, StepResult


class AppState(QObject):
    """See the module docstring. All methods must be called on the UI thread."""

    case_changed = Signal(object)  # CaseState | None (after every recorded action, open and close)
    gallery_changed = Signal(object)  # Gallery | None
    #: SearchedVersion | None: the older gallery version the case's path searches (the gallery grew since)
    gallery_version_changed = Signal(object)
    session_changed = Signal(object)  # SearchSession | None: the live session on the head step
    selected_step_changed = Signal(object)  # step id | None (None: the start, the whole gallery)
    step_recorded = Signal(int)  # a search step was stored (after case_changed)
    marks_changed = Signal(object)  # {item id: "confirmed" | "rejected"} on the current gallery
    filters_changed = Signal(object)  # Filters
    #: WorkingState: the open case's search controls, put back when a case is opened, created or closed
    working_state_changed = Signal(object)
    busy_changed = Signal(bool)  # the job runner's busy state
    progress = Signal(int, int, str)  # done, total (0 = unknown), message
    error = Signal(str)  # a readable message for the status bar / a message box
    message = Signal(str)  # information ("Step 2: 1,000 → 500 in 0.12 s")
    questions_changed = Signal(object)  # None: the witness question on offer may have changed (``questions``)

    def __init__(self, parent: QObject | None = None, *, rho: float = DEFAULT_RHO,
                 pool: QThreadPool | None = None) -> None:
        super().__init__(parent)
        self._rho = rho
        self.jobs = JobRunner(self, pool=pool)
        for source, relay in ((self.jobs.busy_changed, self.busy_changed), (self.jobs.progress, self.progress),
                              (self.jobs.error, self.error), (self.jobs.message, self.message)):
            source.connect(relay)
        self._events = events = Events()
        events.connect(self._relay)
        self._cases = CaseSession(events)
        self._galleries = GallerySession()
        self._steps = StepHistory(events)
        self._placement = GalleryPlacement(self._cases, self._galleries, events)
        self._controls = SearchControls(self._cases, events)
        self._marks = MarkBook(self._cases, self._galleries, self._steps, self._require_idle, events)
        self._moves = StepMoves(self._cases, self._galleries, self._placement, self._steps, self._require_idle,
                                events, rho=rho)
        self.questions = WitnessQuestions(self._cases, events, self._steps, self._controls)  # to ask the witness
        self._actions = StepActions(self._cases, self._galleries, self._steps, self._controls, self._moves,
                                    self.jobs, self._require_idle, events, rho=rho, questions=self.questions)

    def _relay(self, name: str, *args: object) -> None:
        """An event of a part, emitted as the signal of the same name (an exception as its readable message)."""
        if name == "error" and isinstance(args[0], BaseException):
            args = (describe_error(args[0]),)
        getattr(self, name).emit(*args)

    # ------------------------------------------------------------------------------------------ reading

    @property
    def target_identity(self) -> str | None:
        """The ground-truth identity steps are scored against (trainers, built worlds), or None."""
        return self._galleries.target

    @property
    def store(self) -> CaseStore | None:
        return self._cases.store

    @property
    def case(self) -> CaseState | None:
        return self._cases.case

    @property
    def case_id(self) -> int | None:
        return self._cases.case_id

    @property
    def gallery(self) -> Gallery | None:
        return self._galleries.gallery

    @property
    def searched_version(self) -> SearchedVersion | None:
        """The older version of the open gallery the case's path searched, when the gallery has grown since
        (searches on this path stay within its items; ``rerun_on_grown_gallery`` offers the rest); else None."""
        return self._galleries.scope

    @property
    def gallery_id(self) -> int | None:
        """The store's id of the current gallery within the open case."""
        return self._cases.gallery_id

    @property
    def encoder(self) -> QueryEncoder | None:
        return self._galleries.encoder

    @property
    def session(self) -> SearchSession | None:
        return self._steps.session

    @property
    def head_step_id(self) -> int | None:
        return self._cases.head_step_id

    @property
    def selected_step_id(self) -> int | None:
        return self._steps.selected

    @property
    def filters(self) -> Filters:
        return self._controls.filters

    @property
    def working_state(self) -> WorkingState:
        """The open case's filters and query inputs (a clean ``WorkingState()`` without a case)."""
        return self._controls.working

    @property
    def busy(self) -> bool:
        return self.jobs.busy

    @property
    def job_name(self) -> str:
        return self.jobs.job_name

    @property
    def marks(self) -> dict[str, str]:
        """{item id: state} of the open case on the current gallery."""
        return self._cases.marks()

    @property
    def can_search(self) -> bool:
        case = self._cases.case
        return (case is not None and self.gallery_id is not None and not self.busy
                and case.case.status == "open")

    def final_ranking(self) -> FinalRanking | None:
        """The live session's final ranking over the whole gallery (docs/methods.md §1.3), or None."""
        return self._steps.final_ranking()

    def step_state(self, step_id: int) -> StepState | None:
        return self._cases.step(step_id)

    def step_result(self, step_id: int | None) -> StepResult | None:
        """The engine result of a step searched (or re-run) in this run of the app, else None (the stored
        ``StepState`` still has its kept items, their scores and the score histogram)."""
        return self._steps.result(step_id)

    # ------------------------------------------------------------------------------------- store and cases

    def open_store(self, path: str | Path, *, actor: str | None = None) -> bool:
        """Open (or create) a case database; this state closes it later."""
        try:
            store = CaseStore.open(path, actor=actor)
        except (ValueError, OSError) as exc:
            self._report(exc)
            return False
        self.set_store(store, owned=True)
        return True

    def set_store(self, store: CaseStore, *, owned: bool = False) -> None:
        """Use an already open store (``owned``: close it with this state)."""
        self._close_case()
        self._cases.use_store(store, owned=owned)
        self.case_changed.emit(None)

    def cases(self) -> list[CaseSummary]:
        """Summaries of the store's cases (empty without a store)."""
        try:
            return self._cases.cases()
        except ValueError as exc:
            self._report(exc)
            return []

    def new_case(self, title: str, description: str = "") -> int | None:
        try:
            self._cases.require_store()
            self._require_idle()
            case_id = self._cases.create(title, description)
        except ValueError as exc:
            self._report(exc)
            return None
        self.open_case(case_id)
        return case_id

    def open_case(self, case_id: int) -> bool:
        if not checked(self._events, self._cases.require_store, self._require_idle):
            return False
        self._controls.save(sketch=True)  # the case left keeps its own controls
        try:
            self._cases.load(case_id)
        except ValueError as exc:
            self._report(exc)
            return False
        self._controls.load()
        self._steps.forget()
        self._steps.selected = self.head_step_id
        if self.gallery is not None:
            self._placement.place(searched_version(self.case, self.gallery), None)
        self.case_changed.emit(self.case)
        self._moves.activate_head()
        self.selected_step_changed.emit(self._steps.selected)
        self.marks_changed.emit(self.marks)
        self.gallery_version_changed.emit(self.searched_version)
        return True

    def close_case(self) -> None:
        if checked(self._events, self._require_idle):
            self._close_case()

    def _close_case(self) -> None:
        self._controls.save(sketch=True)
        self._cases.forget_case()
        self._controls.reset()
        self._steps.forget()
        self._steps.selected = None
        self.case_changed.emit(None)
        self.session_changed.emit(None)
        self.selected_step_changed.emit(None)
        self.marks_changed.emit({})

    def rename_case(self, title: str) -> bool:
        return self._write(lambda store, case_id: store.rename(case_id, title))

    def describe_case(self, description: str) -> bool:
        return self._write(lambda store, case_id: store.describe(case_id, description))

    def set_case_status(self, status: str) -> bool:
        """"closed" makes the case read-only, "open" writable again."""
        return self._write(lambda store, case_id: store.set_status(case_id, status))

    # ------------------------------------------------------------------------------------------ gallery

    def set_gallery(self, gallery: Gallery | None, encoder: QueryEncoder | None = None) -> bool:
        """Search ``gallery`` with ``encoder`` (None: only find-similar); record it in the open case."""
        try:
            self._require_idle()
            identity = self._galleries.identify(gallery)
            searched = None if gallery is None else searched_version(self.case, gallery)
        except (ValueError, OSError) as exc:
            self._report(exc)
            return False
        return self._install_gallery(OpenedGallery(gallery, encoder, identity, None, searched))

    def load_gallery(self, path: str | Path,
                     encoder_factory: EncoderFactory | None = None) -> WorkerHandle | None:
        """Open a gallery folder (and make its encoder with ``encoder_factory(gallery)``, e.g. a checkpoint
        load) in a worker (``OpenGalleryJob``), then use it."""
        job = OpenGalleryJob(path, encoder_factory, store=self.store, case=self.case, find_version=searched_version)
        return self.jobs.start(job, self._install_gallery)

    def _install_gallery(self, opened: OpenedGallery) -> bool:
        """Use the opened gallery; ``opened.recorded``: the job already recorded it in the open case (so the
        store's write and the case's reload stay off the UI thread)."""
        try:
            self._galleries.use(opened.gallery, opened.encoder, opened.identity)
        except ValueError as exc:
            self._report(exc)
            return False
        self._cases.gallery_id = None
        self._steps.forget()
        if self.case is not None and opened.gallery is not None:
            self._placement.place(opened.searched, opened.recorded)
            self.case_changed.emit(self.case)
        self.gallery_changed.emit(opened.gallery)
        self._moves.activate_head()
        self.marks_changed.emit(self.marks)
        self.gallery_version_changed.emit(self.searched_version)
        return True

    def rerun_on_grown_gallery(self) -> WorkerHandle | None:
        """Re-run the path searched on an older version of the gallery on every item of its current version,
        recorded as a new branch from the start (``RerunOnVersionJob``); the case then goes on there."""
        return self._actions.rerun_on_grown_gallery()

    def set_target_identity(self, identity: str | None) -> bool:
        """Ground truth for trainers: from the next step on, items of gallery identity ``identity`` count as
        relevant (the plot splits relevant from not and shows the step's mSD and AP); None clears it."""
        try:
            target = self._galleries.check_target(identity)
        except ActionRefused as exc:
            self._report(exc)
            return False
        self._galleries.target = target
        self._steps.retarget(target)
        self.message.emit("Ground truth cleared" if target is None else
                          f"Ground truth: identity {target} (shown from the next step on)")
        return True

    # ------------------------------------------------------------------------------- filters and inputs

    def set_filters(self, cameras: frozenset[str] | set[str] | list[str] | None = None,
                    time_range: tuple[float | None, float | None] | None = None) -> bool:
        """Filters for the next step (checked like a step query's)."""
        return self._controls.set_filters(cameras, time_range)

    def set_query_inputs(self, inputs: QueryInputs) -> None:
        """The query panel's inputs as they stand (modalities, sketch, IR image, level, keep rule): kept as the
        open case's working state (the sketch's file is written when the case is left or searched)."""
        self._controls.set_query_inputs(inputs)

    # ------------------------------------------------------------------------------------------ steps

    def search(self, spec: QuerySpec) -> WorkerHandle | None:
        """Run the next step from the head with the panel's query (in a worker) and record it."""
        return self._actions.search(spec)

    def find_similar(self, item_id: str, keep: KeepRule | None = None, scenario: str | None = None, *,
                     outfit_changed: bool = False) -> WorkerHandle | None:
        """The next step ranks by likeness to a gallery item (``StepActions.find_similar``)."""
        return self._actions.find_similar(item_id, keep, scenario, outfit_changed=outfit_changed)

    def follow_sighting(self, sighting: Sighting, window: float = FOLLOW_WINDOW) -> WorkerHandle | None:
        """The next step looks for the sighting's person on the other cameras (``StepActions.follow``)."""
        return self._actions.follow(sighting, window)

    def proposals(self) -> list[dict[str, Any]]:
        """The head step's candidate next sightings when it follows a sighting (``app.state.follow``), else []."""
        return proposal_rows(self._steps.result(self.head_step_id), self.gallery, self.marks)

    def run_step(self, query: StepQuery) -> WorkerHandle | None:
        """Run ``query`` as the next step from the head (``SearchStepJob``) and record it."""
        return self._actions.run_step(query)

    def rerun_with_keep(self, step_id: int, rule: KeepRule) -> WorkerHandle | None:
        """Run a step again with another keep rule (``StepActions.rerun_with_keep``)."""
        return self._actions.rerun_with_keep(step_id, rule)

    def confirmed_below(self, step_id: int, rule: KeepRule) -> list[tuple[str, float]]:
        """(item id, score) of the confirmed candidates of a step searched in this run that ``rule`` would cut
        if they were not confirmed (the engine keeps confirmed items whatever the rule; this says which ones
        only their mark keeps)."""
        return self._steps.confirmed_below(step_id, rule, self.marks)

    def restore_session(self) -> WorkerHandle | None:
        """Re-run the active path in a worker (``RerunStepsJob``) so every step on it has its full result."""
        return self._actions.restore_session()

    def undo_step(self) -> bool:
        """Undo the head step (it stays in the case, marked undone); its parent becomes the head."""
        return self._moves.undo_step()

    def branch_from(self, step_id: int | None) -> bool:
        """Continue from ``step_id`` (None: from the whole gallery); the next step starts a branch there."""
        return self._moves.branch_from(step_id)

    def select_step(self, step_id: int | None) -> None:
        """Show a step's results (None: the whole gallery). Viewing changes nothing in the case."""
        self._moves.select_step(step_id)

    # ------------------------------------------------------------------------------------- marks and notes

    def confirm(self, item_id: str, note: str | None = None) -> bool:
        return self.mark(item_id, "confirmed", note)

    def reject(self, item_id: str, note: str | None = None) -> bool:
        return self.mark(item_id, "rejected", note)

    def clear_mark(self, item_id: str) -> bool:
        return self.mark(item_id, "cleared")

    def mark(self, item_id: str, state: str, note: str | None = None) -> bool:
        """Confirm, reject or clear an item of the current gallery: stored, then applied to the session."""
        return self.mark_many([item_id], state, note) == 1

    def mark_many(self, item_ids: list[str], state: str, note: str | None = None) -> int:
        """Mark several items (one store transaction each, one ``marks_changed``). Returns how many were
        processed before the first failure (all of them when none fails)."""
        return self._marks.mark_many(item_ids, state, note)

    def add_note(self, text: str, *, item_id: str | None = None, step_id: int | None = None) -> int | None:
        """A note on the case, optionally about an item of the current gallery or a step."""
        return self._marks.add_note(text, item_id=item_id, step_id=step_id)

    def edit_note(self, note_id: int, text: str) -> bool:
        """Replace a note's text (audited; the earlier text stays in the audit trail)."""
        return self._marks.edit_note(note_id, text)

    # ------------------------------------------------------------------------------------------ jobs

    def cancel(self) -> None:
        """Ask the running job (search, re-run, gallery load, ingest) to stop at its next cancellation point."""
        self.jobs.cancel()

    def close(self, timeout_ms: int = 5000) -> None:
        """Cancel the running job, wait for it and close the store if this state opened it."""
        self.jobs.close(timeout_ms)
        self._controls.save(sketch=True)
        self._cases.close_store()

    # ------------------------------------------------------------------------------------------ helpers

    def _write(self, action: Callable[[CaseStore, int], Any]) -> bool:
        if not checked(self._events, self._cases.require_case, self._require_idle):
            return False
        try:
            action(self.store, self.case_id)
        except ValueError as exc:
            self._report(exc)
            return False
        self._cases.refresh()
        return True

    def _require_idle(self) -> None:
        refusal = self.jobs.refusal()
        if refusal is not None:
            raise ActionRefused(refusal)

    def _report(self, exc: BaseException) -> None:
        self.error.emit(describe_error(exc))
