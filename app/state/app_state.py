"""``AppState``: the one object widgets listen to and call (docs/architecture.md: state in plain objects that
emit changes; widgets subscribe; work over ~50 ms in a worker).

It is a thin facade over collaborators, one concern each: ``CaseSession`` (the case store and the open case),
``GallerySession`` (the gallery, its query encoder and the ground truth), ``StepHistory`` (the engine sessions
and results of the case's steps, the step on view), ``app.state.marks``, the step actions
(``app.state.step_actions``: search, cut again, re-run, undo, branch) and the ``JobRunner`` (``jobs``) that
runs the background jobs of ``app.jobs`` and holds the app's one busy state. Every action that changes the
case (a step, undo, branch, a mark, a note) is committed to the ``CaseStore`` in one transaction before any
signal says it happened. Errors become ``error(str)`` messages; methods return None/False instead of
raising, so a widget never needs a try block.

Sessions: the live session's steps are the case's active path; undo and branch switch to the session kept
after a step. A path with no kept session (a reopened case, a branch recorded before this run) is re-run in a
worker before the next search, or on ``restore_session()``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, Signal

from app.jobs import JobRunner, OpenedGallery, OpenGalleryJob, RerunOnVersionJob, VersionRerun
from app.jobs.open_gallery import EncoderFactory
from app.state.case_session import ActionRefused, CaseSession
from app.state.gallery_session import GallerySession
from app.state.gallery_versions import SearchedVersion, searched_version
from app.state.marks import check_in_version, check_items, check_mark_state, record_marks
from app.state.step_actions import StepActions
from app.state.step_history import StepHistory
from app.state.working_state import Filters, QueryInputs, WorkingState, read_working_state, save_sketch
from app.store import CaseState, CaseStore, CaseSummary, StepState
from app.workers import WorkerHandle, describe_error
from engine.index import Gallery
from engine.kernel.keep_rules import DEFAULT_RHO
from engine.retrieval.search import FinalRanking, QueryEncoder, QueryInputError, SearchSession, StepQuery, StepResult


class AppState(StepActions, QObject):
    """See the module docstring (the step actions are in ``app.state.step_actions``). All methods must be called on
    the UI thread."""

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

    def __init__(self, parent: QObject | None = None, *, rho: float = DEFAULT_RHO,
                 pool: QThreadPool | None = None) -> None:
        super().__init__(parent)
        self._rho = rho
        self._cases = CaseSession()
        self._galleries = GallerySession()
        self._steps = StepHistory()
        self._working = WorkingState()  # the open case's search controls (app.state.working_state)
        self._sketch_ref: dict[str, str] | None = None  # the working sketch as last saved in the case
        self._sketch_saved = True  # False while the sketch drawn since was not saved
        self.jobs = JobRunner(self, pool=pool)
        for source, relay in ((self.jobs.busy_changed, self.busy_changed), (self.jobs.progress, self.progress),
                              (self.jobs.error, self.error), (self.jobs.message, self.message)):
            source.connect(relay)

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
        return self._working.filters

    @property
    def working_state(self) -> WorkingState:
        """The open case's filters and query inputs (a clean ``WorkingState()`` without a case)."""
        return self._working

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
        try:
            self._cases.require_store()
            self._require_idle()
        except ValueError as exc:
            self._report(exc)
            return False
        self._save_reported(sketch=True)  # the case left keeps its own controls
        try:
            self._cases.load(case_id)
        except ValueError as exc:
            self._report(exc)
            return False
        self._load_working()
        self._steps.forget()
        self._steps.selected = self.head_step_id
        if self.gallery is not None:
            self._place_gallery(searched_version(self.case, self.gallery), None)
        self.case_changed.emit(self.case)
        self._activate_head()
        self.selected_step_changed.emit(self._steps.selected)
        self.marks_changed.emit(self.marks)
        self.gallery_version_changed.emit(self.searched_version)
        return True

    def close_case(self) -> None:
        if self._idle():
            self._close_case()

    def _close_case(self) -> None:
        self._save_reported(sketch=True)
        self._cases.forget_case()
        self._working, self._sketch_ref, self._sketch_saved = WorkingState(), None, True
        self.filters_changed.emit(self._working.filters)
        self.working_state_changed.emit(self._working)
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
            self._place_gallery(opened.searched, opened.recorded)
            self.case_changed.emit(self.case)
        self.gallery_changed.emit(opened.gallery)
        self._activate_head()
        self.marks_changed.emit(self.marks)
        self.gallery_version_changed.emit(self.searched_version)
        return True

    def _place_gallery(self, searched: SearchedVersion | None, recorded) -> None:
        """Which of the open case's records of the gallery the case goes on with: the older version its path
        searched (``searched``), else the current version (``recorded`` by the job, or found or recorded
        now). The caller emits ``case_changed``."""
        self._galleries.scope = searched
        if searched is not None:
            self._cases.gallery_id = searched.use.id
        elif recorded is not None and self._cases.adopt(recorded.case):
            self._cases.gallery_id = recorded.gallery_id
        else:
            self._register_gallery()

    def _follow_head_version(self) -> None:
        """After the head moved (undo, branch): go on within the version the new head's path searched, or with
        the current version (a branch from the start searches every item)."""
        if self.case is None or self.gallery is None:
            return
        searched = searched_version(self.case, self.gallery)
        if searched == self._galleries.scope:
            return
        self._place_gallery(searched, None)
        self.case_changed.emit(self.case)
        self.marks_changed.emit(self.marks)
        self.gallery_version_changed.emit(searched)

    def rerun_on_grown_gallery(self) -> WorkerHandle | None:
        """Re-run the path searched on an older version of the gallery on every item of its current version,
        recorded as a new branch from the start (``RerunOnVersionJob``); the case then goes on there."""
        if not self._ready():
            return None
        scope = self._galleries.scope
        if scope is None:
            self.error.emit("This case's path already searches the gallery's current version")
            return None
        summary = self.case.case
        if summary.status != "open":
            self.error.emit(f"Case {summary.title!r} is {summary.status}: reopen it to re-run its path")
            return None
        plan = self._rerun_plan()
        if plan is None:
            return None
        job = RerunOnVersionJob(plan, self._galleries.session_factory(self._rho, whole=True), store=self.store,
                                case_id=self.case_id, identity=self._galleries.identity, marks=self.marks)
        return self.jobs.start(job, lambda rerun: self._grown_rerun_done(rerun, scope))

    def _grown_rerun_done(self, rerun: VersionRerun, scope: SearchedVersion) -> None:
        self._galleries.scope = None
        if not self._cases.adopt(rerun.case):
            self._reload_case()
        self._cases.gallery_id = rerun.gallery_id
        outcome = rerun.outcome
        self._steps.results.update(outcome.results)
        self._steps.snapshots.update(outcome.snapshots)
        self._steps.session = outcome.session
        self.case_changed.emit(self.case)
        self.gallery_version_changed.emit(None)
        self.session_changed.emit(self.session)
        self.marks_changed.emit(self.marks)
        self._select(self.head_step_id)
        changed = "" if not outcome.differences else (
            f"; step {', '.join(str(n) for n in outcome.differences)} now keeps other items than on "
            f"v{scope.version.version} (the footage added since)")
        self.message.emit(f"Re-ran {len(outcome.results)} steps on {scope.current.label()} as a new branch from "
                          f"the start{changed}")

    def _register_gallery(self) -> None:
        """Find or record the current gallery in the open case (the caller emits ``case_changed``); a closed
        case cannot record a new gallery, it can still view one it knows."""
        try:
            self._cases.register_gallery(self._galleries.identity)
        except ValueError as exc:
            self._report(exc)

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

    # ------------------------------------------------------------------------------------------ filters

    def set_filters(self, cameras: frozenset[str] | set[str] | list[str] | None = None,
                    time_range: tuple[float | None, float | None] | None = None) -> bool:
        """Filters for the next step (checked like a step query's)."""
        try:  # a throw-away query checks and normalises the filters exactly as a step will
            query = StepQuery(example="filters", cameras=None if cameras is None else frozenset(cameras),
                              time_range=time_range)
        except QueryInputError as exc:
            self._report(exc)
            return False
        self._working = self._working.with_filters(Filters(query.cameras, query.time_range))
        self._save_reported()
        self.filters_changed.emit(self._working.filters)
        return True

    def set_query_inputs(self, inputs: QueryInputs) -> None:
        """The query panel's inputs as they stand (modalities, sketch, IR image, level, keep rule): kept as the
        open case's working state (the sketch's file is written when the case is left or searched)."""
        before = self._working.inputs.sketch
        after = inputs.sketch
        if (before is None) != (after is None) or (after is not None and not (
                before.shape == after.shape and (before == after).all())):
            self._sketch_saved = False
        self._working = self._working.with_inputs(inputs)
        self._save_reported()

    def _load_working(self) -> None:
        """Take the working state of the case just loaded (a new case's is clean) and say so."""
        case, store = self.case, self.store
        working, self._sketch_ref, problems = read_working_state(case.working_state, store.evidence_root,
                                                                 case.case.id)
        self._working, self._sketch_saved = working, True
        for problem in problems:
            self.error.emit(f"Case {case.case.title!r}: {problem}")
        self.filters_changed.emit(working.filters)
        self.working_state_changed.emit(working)

    def _save_working(self, *, sketch: bool = False) -> None:
        """Store the open case's working state (``sketch``: write a sketch drawn since into the case's evidence
        folder first). Raises the store's ``ValueError``/``OSError``."""
        case, store = self.case, self.store
        if case is None or store is None:
            return
        if sketch and not self._sketch_saved:
            self._sketch_ref = save_sketch(self._working.inputs.sketch, store.evidence_root, case.case.id)
            self._sketch_saved = True
        store.save_working_state(case.case.id, self._working.to_json(self._sketch_ref))

    def _save_reported(self, *, sketch: bool = False) -> None:
        try:
            self._save_working(sketch=sketch)
        except (ValueError, OSError) as exc:
            self._report(exc)

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
        try:
            check_mark_state(state)
            self._cases.require_case()
            self._require_idle()
            check_items(self.gallery, self.gallery_id, item_ids)
            check_in_version(self.gallery, self._galleries.scope, list(item_ids))
        except ActionRefused as exc:
            self._report(exc)
            return 0
        shown_id = self.selected_step_id if self.selected_step_id is not None else self.head_step_id
        shown = None if shown_id is None else self.step_state(shown_id)
        if shown is not None and shown.gallery_id != self.gallery_id:
            shown = None
        done, changed, failure = record_marks(self.store, self.case_id, self.gallery_id, self.session, item_ids,
                                              state, note, shown)
        if failure is not None:
            self._report(failure)
        if changed:
            self._reload_case()
            self.marks_changed.emit(self.marks)
        return done

    def add_note(self, text: str, *, item_id: str | None = None, step_id: int | None = None) -> int | None:
        """A note on the case, optionally about an item of the current gallery or a step."""
        if not self._ready():
            return None
        if item_id is not None and self.gallery_id is None:
            self.error.emit("Open a gallery to note on its items")
            return None
        try:
            note_id = self.store.add_note(self.case_id, text, item_id=item_id, step_id=step_id,
                                          gallery_id=None if item_id is None else self.gallery_id)
        except ValueError as exc:
            self._report(exc)
            return None
        self._reload_case()
        return note_id

    def edit_note(self, note_id: int, text: str) -> bool:
        """Replace a note's text (audited; the earlier text stays in the audit trail)."""
        return self._write(lambda store, case_id: store.edit_note(case_id, note_id, text))

    # ------------------------------------------------------------------------------------------ jobs

    def cancel(self) -> None:
        """Ask the running job (search, re-run, gallery load, ingest) to stop at its next cancellation point."""
        self.jobs.cancel()

    def close(self, timeout_ms: int = 5000) -> None:
        """Cancel the running job, wait for it and close the store if this state opened it."""
        self.jobs.close(timeout_ms)
        self._save_reported(sketch=True)
        self._cases.close_store()

    # ------------------------------------------------------------------------------------------ helpers

    def _write(self, action: Callable[[CaseStore, int], Any]) -> bool:
        if not self._ready():
            return False
        try:
            action(self.store, self.case_id)
        except ValueError as exc:
            self._report(exc)
            return False
        self._reload_case()
        return True

    def _reload_case(self) -> None:
        try:
            self._cases.reload()
        except ValueError as exc:
            self._report(exc)
            return
        self.case_changed.emit(self.case)

    def _require_idle(self) -> None:
        refusal = self.jobs.refusal()
        if refusal is not None:
            raise ActionRefused(refusal)

    def _idle(self) -> bool:
        return self._checked(self._require_idle)

    def _ready(self) -> bool:
        """A case is open and no job runs (else ``error`` says which is missing)."""
        return self._checked(self._cases.require_case, self._require_idle)

    def _checked(self, *checks: Callable[[], object]) -> bool:
        try:
            for check in checks:
                check()
        except ActionRefused as exc:
            self._report(exc)
            return False
        return True

    def _report(self, exc: BaseException) -> None:
        self.error.emit(describe_error(exc))
