"""``AppState``: the one object widgets listen to and call (docs/architecture.md: state in plain objects that
emit changes; widgets subscribe; work over ~50 ms in a worker).

It holds the case store and the open case, the gallery and query encoder, the engine ``SearchSession`` on
the case's head step, the step the analyst is looking at, and the camera/time filters for the next step.
Every action that changes the case (a step, undo, branch, a mark, a note) goes through here and is committed
to the ``CaseStore`` in one transaction before any signal says it happened. Errors become ``error(str)``
messages; methods return None/False instead of raising, so a widget never needs a try block.

Sessions: the live session's steps are the case's active path. After each step a copy ending at that step is
kept (``SearchSession.branch``: steps are shared immutable values), so undo and branch switch sessions
without searching again. A path with no kept copy (a reopened case, a branch recorded before this run) is
rebuilt by ``app.state.replay`` in a worker before the next search, or on ``restore_session()``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, Signal

from app.state.query_spec import KeepRule, QuerySpec
from app.state.replay import ReplayOutcome, apply_marks, path_to, replay, replay_plan
from app.store import CaseState, CaseStore, CaseSummary, StepState
from app.store.from_engine import gallery_identity, step_input
from app.workers import Job, WorkerHandle, describe_error, run_in_worker
from engine.gallery import Gallery
from engine.search import FinalRanking, QueryEncoder, QueryInputError, SearchSession, StepQuery, StepResult
from engine.search.opening import open_search

MARK_STATES = ("confirmed", "rejected", "cleared")
EncoderFactory = Callable[[Gallery], QueryEncoder | None]


@dataclass(frozen=True)
class Filters:
    """Camera and time filters applied to the next step (None = no filter)."""

    cameras: frozenset[str] | None = None
    time_range: tuple[float | None, float | None] | None = None


@dataclass(frozen=True)
class GalleryRecord:
    """A gallery newly recorded in the open case by a worker, with the case as stored afterwards."""

    gallery_id: int
    case: CaseState


@dataclass(frozen=True)
class StepOutcome:
    """What a search job hands back to the UI thread."""

    step_id: int
    result: StepResult
    session: SearchSession
    replayed: ReplayOutcome | None
    case: CaseState | None = None  # the case as stored after the step, read in the worker (not on the UI thread)


class AppState(QObject):
    """See the module docstring. All methods must be called on the UI thread."""

    case_changed = Signal(object)  # CaseState | None (after every recorded action, open and close)
    gallery_changed = Signal(object)  # Gallery | None
    session_changed = Signal(object)  # SearchSession | None: the live session on the head step
    selected_step_changed = Signal(object)  # step id | None (None: the start, the whole gallery)
    step_recorded = Signal(int)  # a search step was stored (after case_changed)
    marks_changed = Signal(object)  # {item id: "confirmed" | "rejected"} on the current gallery
    filters_changed = Signal(object)  # Filters
    busy_changed = Signal(bool)
    progress = Signal(int, int, str)  # done, total (0 = unknown), message
    error = Signal(str)  # a readable message for the status bar / a message box
    message = Signal(str)  # information ("Step 2: 1,000 → 500 in 0.12 s")

    def __init__(self, parent: QObject | None = None, *, rho: float = 0.5,
                 pool: QThreadPool | None = None) -> None:
        super().__init__(parent)
        self._rho = rho
        self._pool = pool
        self._store: CaseStore | None = None
        self._owns_store = False
        self._case: CaseState | None = None
        self._gallery: Gallery | None = None
        self._gallery_identity: dict[str, Any] | None = None
        self._gallery_id: int | None = None
        self._encoder: QueryEncoder | None = None
        self._session: SearchSession | None = None
        self._results: dict[int, StepResult] = {}
        self._snapshots: dict[int, SearchSession] = {}
        self._selected: int | None = None
        self._filters = Filters()
        self._job: WorkerHandle | None = None
        self._job_name = ""
        self._target: str | None = None

    # ------------------------------------------------------------------------------------------ reading

    @property
    def target_identity(self) -> str | None:
        """The ground-truth identity steps are scored against (trainers, built worlds), or None."""
        return self._target

    @property
    def store(self) -> CaseStore | None:
        return self._store

    @property
    def case(self) -> CaseState | None:
        return self._case

    @property
    def case_id(self) -> int | None:
        return None if self._case is None else self._case.case.id

    @property
    def gallery(self) -> Gallery | None:
        return self._gallery

    @property
    def gallery_id(self) -> int | None:
        """The store's id of the current gallery within the open case."""
        return self._gallery_id

    @property
    def encoder(self) -> QueryEncoder | None:
        return self._encoder

    @property
    def session(self) -> SearchSession | None:
        return self._session

    @property
    def head_step_id(self) -> int | None:
        return None if self._case is None else self._case.case.head_step_id

    @property
    def selected_step_id(self) -> int | None:
        return self._selected

    @property
    def filters(self) -> Filters:
        return self._filters

    @property
    def busy(self) -> bool:
        return self._job is not None

    @property
    def job_name(self) -> str:
        return self._job_name if self._job is not None else ""

    @property
    def marks(self) -> dict[str, str]:
        """{item id: state} of the open case on the current gallery."""
        if self._case is None or self._gallery_id is None:
            return {}
        return {m.item_id: m.state for m in self._case.marks if m.gallery_id == self._gallery_id}

    @property
    def can_search(self) -> bool:
        return (self._case is not None and self._gallery_id is not None and self._job is None
                and self._case.case.status == "open")

    def final_ranking(self) -> FinalRanking | None:
        """The live session's final ranking over the whole gallery (docs/methods.md §1.3), or None before any step
        or while the head's path still has to be re-run."""
        if self._session is None or not self._session.steps:
            return None
        return self._session.final_ranking()

    def step_state(self, step_id: int) -> StepState | None:
        if self._case is None:
            return None
        try:
            return self._case.step(step_id)
        except KeyError:
            return None

    def step_result(self, step_id: int | None) -> StepResult | None:
        """The engine result of a step searched (or re-run) in this run of the app, else None (the stored
        ``StepState`` still has its kept items, their scores and the score histogram)."""
        return None if step_id is None else self._results.get(step_id)

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
        if self._owns_store and self._store is not None and self._store is not store:
            self._store.close()
        self._store, self._owns_store = store, owned
        self.case_changed.emit(None)

    def cases(self) -> list[CaseSummary]:
        """Summaries of the store's cases (empty without a store)."""
        if self._store is None:
            return []
        try:
            return self._store.list_cases()
        except ValueError as exc:
            self._report(exc)
            return []

    def new_case(self, title: str, description: str = "") -> int | None:
        if not self._ready_store() or not self._idle():
            return None
        try:
            case_id = self._store.create_case(title, description)
        except ValueError as exc:
            self._report(exc)
            return None
        self.open_case(case_id)
        return case_id

    def open_case(self, case_id: int) -> bool:
        if not self._ready_store() or not self._idle():
            return False
        try:
            case = self._store.load_case(case_id)
        except ValueError as exc:
            self._report(exc)
            return False
        self._close_case(emit=False)
        self._case = case
        self._selected = case.case.head_step_id
        if self._gallery is not None:
            self._register_gallery()
        self.case_changed.emit(self._case)
        self._activate_head()
        self.selected_step_changed.emit(self._selected)
        self.marks_changed.emit(self.marks)
        return True

    def close_case(self) -> None:
        if self._idle():
            self._close_case()

    def _close_case(self, emit: bool = True) -> None:
        self._case = None
        self._gallery_id = None
        self._session = None
        self._results.clear()
        self._snapshots.clear()
        self._selected = None
        if emit:
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
        if not self._idle():
            return False
        identity = None
        if gallery is not None:
            try:
                identity = gallery_identity(gallery)
            except (ValueError, OSError) as exc:
                self._report(exc)
                return False
        return self._install_gallery(gallery, encoder, identity)

    def load_gallery(self, path: str | Path,
                     encoder_factory: EncoderFactory | None = None) -> WorkerHandle | None:
        """Open a gallery folder (and make its encoder with ``encoder_factory(gallery)``, e.g. a checkpoint
        load) in a worker, then use it."""

        store, case = self._store, self._case
        known = set() if case is None else {(use.path, use.gallery_fingerprint) for use in case.galleries}

        def work(job: Job) -> tuple[Gallery, QueryEncoder | None, dict[str, Any], GalleryRecord | None]:
            job.progress(0, 0, f"Opening gallery {path}")
            gallery = Gallery.open(path)
            job.check()
            encoder = None
            if encoder_factory is not None:
                job.progress(0, 0, "Loading the model")
                encoder = encoder_factory(gallery)
                _check_pair(gallery, encoder)  # the model's fingerprint is computed (and cached) here
            job.progress(0, 0, "Fingerprinting the gallery")
            identity = gallery_identity(gallery)
            job.check()  # the last point where cancelling leaves no trace
            return gallery, encoder, identity, _record_gallery(store, case, known, identity)

        return self._start("Loading gallery", work, lambda value: self._install_gallery(*value))

    def _install_gallery(self, gallery: Gallery | None, encoder: QueryEncoder | None,
                         identity: dict[str, Any] | None, recorded: GalleryRecord | None = None) -> bool:
        """Use ``gallery``; ``recorded``: the open case already records it (done in a worker, so the store's
        write and the case's reload stay off the UI thread)."""
        try:
            _check_pair(gallery, encoder)
        except ValueError as exc:
            self._report(exc)
            return False
        self._gallery, self._encoder, self._gallery_identity = gallery, encoder, identity
        self._target = None  # identities belong to one gallery
        self._gallery_id = None
        self._results.clear()
        self._snapshots.clear()
        self._session = None
        if self._case is not None and gallery is not None:
            if recorded is not None and recorded.case.case.id == self.case_id:
                self._case, self._gallery_id = recorded.case, recorded.gallery_id
            else:
                self._register_gallery()
            self.case_changed.emit(self._case)
        self.gallery_changed.emit(gallery)
        self._activate_head()
        self.marks_changed.emit(self.marks)
        return True

    def _register_gallery(self) -> None:
        """Find or record the current gallery in the open case (the caller emits ``case_changed``)."""
        self._gallery_id = self._known_gallery_id()
        if self._gallery_id is not None:
            return
        try:
            self._gallery_id = self._store.add_gallery(self.case_id, **self._gallery_identity)
        except ValueError as exc:
            # a closed case cannot record a new gallery; it can still be viewed
            self._gallery_id = self._known_gallery_id()
            if self._gallery_id is None:
                self._report(exc)
            return
        self._reload_case(emit=False)

    def _known_gallery_id(self) -> int | None:
        if self._case is None or self._gallery_identity is None:
            return None
        for use in self._case.galleries:
            if (use.path, use.gallery_fingerprint) == (self._gallery_identity["path"],
                                                       self._gallery_identity["gallery_fingerprint"]):
                return use.id
        return None

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
        self._filters = Filters(query.cameras, query.time_range)
        self.filters_changed.emit(self._filters)
        return True

    # ------------------------------------------------------------------------------------------ steps

    def search(self, spec: QuerySpec) -> WorkerHandle | None:
        """Run the next step from the head with the panel's query (in a worker) and record it."""
        try:
            query = spec.to_step_query(cameras=self._filters.cameras, time_range=self._filters.time_range)
        except QueryInputError as exc:
            self._report(exc)
            return None
        return self.run_step(query)

    def find_similar(self, item_id: str, keep: KeepRule | None = None, scenario: str | None = None) -> \
            WorkerHandle | None:
        """The next step ranks by likeness to a gallery item (a confirmed sighting, typically)."""
        keep = keep or KeepRule("rho", self._rho)
        try:
            query = StepQuery(example=item_id, scenario=scenario, cameras=self._filters.cameras,
                              time_range=self._filters.time_range, **keep.query_arguments())
        except QueryInputError as exc:
            self._report(exc)
            return None
        return self.run_step(query)

    def confirmed_below(self, step_id: int, rule: KeepRule) -> list[tuple[str, float]]:
        """(item id, score) of the confirmed candidates of a step searched in this run that ``rule`` would cut
        if they were not confirmed (the engine keeps confirmed items whatever the rule; this says which ones
        only their mark keeps)."""
        result = self.step_result(step_id)
        if result is None or rule.kind != "threshold":
            return []
        confirmed = {item for item, mark in self.marks.items() if mark == "confirmed"}
        below = [(result.item_ids[int(row)], float(score)) for row, score in zip(result.rows, result.scores,
                                                                                 strict=True)
                 if float(score) < rule.value and result.item_ids[int(row)] in confirmed]
        return sorted(below, key=lambda pair: -pair[1])

    def rerun_with_keep(self, step_id: int, rule: KeepRule) -> WorkerHandle | None:
        """Run a step again with another keep rule (e.g. a cut dragged on its plot): the same query from the
        same parent. The head step is undone and replaced; an earlier step gets a sibling branch. The rule
        applies to that step only: the next step's keep rule is whatever the query panel says."""
        if not self._ready_case() or not self._idle():
            return None
        step = self.step_state(step_id)
        result = self.step_result(step_id)
        if step is None or result is None:
            self.error.emit("Only a step searched (or re-run) since the case was opened can be cut again: "
                            "re-run the case's steps first (Search menu)")
            return None
        if step.undone:
            self.error.emit(f"Step {step.seq} was undone: branch from its parent to search it again")
            return None
        try:
            query = replace(result.query, **({"rho": None, "k": None, "threshold": None} | rule.query_arguments()))
        except QueryInputError as exc:
            self._report(exc)
            return None
        moved = self.undo_step() if step_id == self.head_step_id else self.branch_from(step.parent_id)
        if not moved:
            return None
        return self.run_step(query)

    def run_step(self, query: StepQuery) -> WorkerHandle | None:
        if not self._ready_case() or not self._idle():
            return None
        if self._case.case.status != "open":
            summary = self._case.case
            self.error.emit(f"Case {summary.title!r} is {summary.status}: reopen it to search")
            return None
        if self._gallery_id is None:
            self.error.emit("Open a gallery to search")
            return None
        if query.example is None and self._encoder is None:
            self.error.emit("Text, sketch and IR queries need a model: load a checkpoint for this gallery")
            return None
        store, case_id, gallery_id = self._store, self.case_id, self._gallery_id
        base = self._session
        plan = None
        if base is None:
            try:
                plan = self._plan(self.head_step_id)
            except ValueError as exc:
                self._report(exc)
                return None
        marks = self.marks
        fresh = self._session_factory()

        def work(job: Job) -> StepOutcome:
            replayed = None
            session = base
            if session is None:
                session = fresh()
                if plan:
                    replayed = replay(session, plan, job.progress)
                    session = replayed.session
                apply_marks(session, *_split(marks))
            fork = session.branch(-1) if session.steps else _copy_fresh(session)
            job.progress(0, 0, "Searching")
            result = fork.step(query)
            job.check()  # the last point where cancelling leaves no trace
            step_id = store.record_step(case_id, step_input(result, gallery_id))
            return StepOutcome(step_id, result, fork, replayed, store.load_case(case_id))

        return self._start("Searching", work, self._step_done)

    def _step_done(self, outcome: StepOutcome) -> None:
        if outcome.replayed is not None:
            self._adopt_replay(outcome.replayed)
        self._results[outcome.step_id] = outcome.result
        self._snapshots[outcome.step_id] = outcome.session.branch(-1)
        self._session = outcome.session
        if outcome.case is not None and outcome.case.case.id == self.case_id:
            self._case = outcome.case
            self.case_changed.emit(self._case)
        else:
            self._reload_case(emit=True)
        self._select(outcome.step_id)
        self.session_changed.emit(self._session)
        self.step_recorded.emit(outcome.step_id)
        result = outcome.result
        self.message.emit(f"Step {result.index + 1}: {result.candidates_before:,} → "
                          f"{result.candidates_after:,} candidates in {result.seconds:.2f} s")

    def restore_session(self) -> WorkerHandle | None:
        """Re-run the active path in a worker so every step on it has its full result again."""
        if not self._ready_case() or not self._idle():
            return None
        if self._gallery_id is None:
            self.error.emit("Open the case's gallery to re-run its steps")
            return None
        try:
            plan = self._plan(self.head_step_id)
        except ValueError as exc:
            self._report(exc)
            return None
        if any(entry.query.example is None for entry in plan) and self._encoder is None:
            self.error.emit("This case's steps need a model to re-run: load the checkpoint that made them")
            return None
        marks = self.marks
        fresh = self._session_factory()

        def work(job: Job) -> ReplayOutcome:
            outcome = replay(fresh(), plan, job.progress)
            apply_marks(outcome.session, *_split(marks))
            return outcome

        def done(outcome: ReplayOutcome) -> None:
            self._adopt_replay(outcome)
            self._session = outcome.session
            self.session_changed.emit(self._session)
            self.selected_step_changed.emit(self._selected)

        return self._start("Re-running steps", work, done)

    def _adopt_replay(self, outcome: ReplayOutcome) -> None:
        self._results.update(outcome.results)
        self._snapshots.update(outcome.snapshots)
        if outcome.differences:
            numbers = ", ".join(str(n) for n in outcome.differences)
            self.error.emit(f"Re-running the case gave different kept items at step {numbers} than were "
                            f"recorded (a different model, device or gallery state); the stored steps "
                            f"are kept")

    def _plan(self, head: int | None) -> list:
        if head is None:
            return []
        audit = self._store.audit_trail(self.case_id)
        return replay_plan(self._case, audit, self._gallery_id, path_to(self._case, head))

    def undo_step(self) -> bool:
        """Undo the head step (it stays in the case, marked undone); its parent becomes the head."""
        if not self._ready_case() or not self._idle():
            return False
        if self.head_step_id is None:
            self.error.emit("There is no step to undo")
            return False
        try:
            self._store.undo_step(self.case_id)
        except ValueError as exc:
            self._report(exc)
            return False
        self._after_head_move()
        return True

    def branch_from(self, step_id: int | None) -> bool:
        """Continue from ``step_id`` (None: from the whole gallery); the next step starts a branch there."""
        if not self._ready_case() or not self._idle():
            return False
        try:
            moved = self._store.branch_from(self.case_id, step_id)
        except ValueError as exc:
            self._report(exc)
            return False
        if moved:
            self._after_head_move()
        return True

    def _after_head_move(self) -> None:
        self._reload_case(emit=True)
        self._activate_head()
        self._select(self.head_step_id)

    def _activate_head(self) -> None:
        """Make the live session end at the head step (None when that path must be re-run first)."""
        head = self.head_step_id
        if self._case is None or self._gallery_id is None:
            session = None
        elif head in self._snapshots:
            session = self._snapshots[head].branch(-1)
        elif head is None:
            session = self._session_factory()()
        else:
            session = None
        if session is not None:
            apply_marks(session, *_split(self.marks))
        self._session = session
        self.session_changed.emit(session)

    def _session_factory(self) -> Callable[[], SearchSession]:
        """Makes step-less sessions on the current gallery and encoder (safe to call from a worker)."""
        gallery, encoder, rho, target = self._gallery, self._encoder, self._rho, self._target
        return lambda: open_search(gallery, encoder, rho=rho, target_identity=target)

    def set_target_identity(self, identity: str | None) -> bool:
        """Ground truth for trainers: from the next step on, items of gallery identity ``identity`` count as
        relevant (the plot splits relevant from not and shows the step's mSD and AP); None clears it."""
        if identity is not None:
            identity = str(identity).strip()
            if self._gallery is None:
                self.error.emit("Open a gallery before choosing a ground-truth identity")
                return False
            if not identity or self._gallery.columns.identities.lookup(identity) is None:
                self.error.emit(f"The gallery has no identity {identity!r}: ground truth exists only in built "
                                "worlds (identities are the world's numbers)")
                return False
        self._target = identity or None
        if self._session is not None:
            self._session.target_identity = self._target
        for snapshot in self._snapshots.values():
            snapshot.target_identity = self._target
        self.message.emit("Ground truth cleared" if self._target is None else
                          f"Ground truth: identity {self._target} (shown from the next step on)")
        return True

    def select_step(self, step_id: int | None) -> None:
        """Show a step's results (None: the whole gallery). Viewing changes nothing in the case."""
        if step_id is not None and self.step_state(step_id) is None:
            self.error.emit(f"The case has no step {step_id}")
            return
        self._select(step_id)

    def _select(self, step_id: int | None) -> None:
        self._selected = step_id
        self.selected_step_changed.emit(step_id)

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
        if state not in MARK_STATES:
            self.error.emit(f"A mark is one of {', '.join(MARK_STATES)}, not {state!r}")
            return 0
        if not self._ready_case() or not self._idle():
            return 0
        if self._gallery_id is None:
            self.error.emit("Open a gallery to mark its items")
            return 0
        unknown = [item for item in item_ids if item not in self._gallery]
        if unknown:
            self.error.emit(f"Item {unknown[0]!r} is not in the open gallery")
            return 0
        done, changed = 0, False
        for item_id in item_ids:
            try:
                changed |= self._store.mark(self.case_id, self._gallery_id, item_id, state, note)
            except ValueError as exc:
                self._report(exc)
                break
            if self._session is not None:
                {"confirmed": self._session.confirm, "rejected": self._session.reject,
                 "cleared": self._session.clear_mark}[state](item_id)
            done += 1
        if changed:
            self._reload_case(emit=True)
            self.marks_changed.emit(self.marks)
        return done

    def add_note(self, text: str, *, item_id: str | None = None, step_id: int | None = None) -> int | None:
        """A note on the case, optionally about an item of the current gallery or a step."""
        if not self._ready_case() or not self._idle():
            return None
        gallery_id = None
        if item_id is not None:
            if self._gallery_id is None:
                self.error.emit("Open a gallery to note on its items")
                return None
            gallery_id = self._gallery_id
        try:
            note_id = self._store.add_note(self.case_id, text, item_id=item_id, gallery_id=gallery_id,
                                           step_id=step_id)
        except ValueError as exc:
            self._report(exc)
            return None
        self._reload_case(emit=True)
        return note_id

    # ------------------------------------------------------------------------------------------ jobs

    def cancel(self) -> None:
        """Ask the running job (search, re-run, gallery load) to stop at its next cancellation point."""
        if self._job is not None:
            self._job.cancel()

    def close(self, timeout_ms: int = 5000) -> None:
        """Cancel the running job, wait for it and close the store if this state opened it."""
        if self._job is not None:
            self._job.cancel()
            self._job.wait(timeout_ms / 1000)
        if self._owns_store and self._store is not None:
            self._store.close()
        self._store = None

    def _start(self, name: str, work: Callable[[Job], Any], on_result: Callable[[Any], None]) -> WorkerHandle:
        def finished() -> None:
            self._job = None
            self.busy_changed.emit(False)

        self._job_name = name
        self._job = run_in_worker(work, on_result=on_result, on_error=self.error.emit,
                                  on_progress=self.progress.emit,
                                  on_cancelled=lambda: self.message.emit(f"{name}: cancelled"),
                                  on_finished=finished, name=name, pool=self._pool)
        self.busy_changed.emit(True)
        return self._job

    # ------------------------------------------------------------------------------------------ helpers

    def _write(self, action: Callable[[CaseStore, int], Any]) -> bool:
        if not self._ready_case() or not self._idle():
            return False
        try:
            action(self._store, self.case_id)
        except ValueError as exc:
            self._report(exc)
            return False
        self._reload_case(emit=True)
        return True

    def _reload_case(self, emit: bool) -> None:
        try:
            self._case = self._store.load_case(self.case_id)
        except ValueError as exc:
            self._report(exc)
            return
        if emit:
            self.case_changed.emit(self._case)

    def _ready_store(self) -> bool:
        if self._store is None:
            self.error.emit("Open a case database first")
            return False
        return True

    def _ready_case(self) -> bool:
        if self._store is None or self._case is None:
            self.error.emit("Open or create a case first")
            return False
        return True

    def _idle(self) -> bool:
        if self._job is not None:
            self.error.emit(f"{self._job_name} is still running: wait for it or cancel it")
            return False
        return True

    def _report(self, exc: BaseException) -> None:
        self.error.emit(describe_error(exc))


def _check_pair(gallery: Gallery | None, encoder: QueryEncoder | None) -> None:
    """Raise ``GalleryMismatchError`` when ``encoder``'s checkpoint did not build ``gallery``."""
    if gallery is None or encoder is None:
        return
    fingerprint = getattr(encoder, "fingerprint", None)
    if fingerprint is not None:
        gallery.check_model(fingerprint)
    check = getattr(encoder, "check_gallery", None)
    if check is not None:
        check(gallery)


def _record_gallery(store: CaseStore | None, case: CaseState | None, known: set[tuple[str, str]],
                    identity: dict[str, Any]) -> GalleryRecord | None:
    """Record a gallery the open ``case`` does not know yet and read the case back (in a worker); None when it
    is known, there is no case, or the store refuses (``AppState._register_gallery`` then reports why)."""
    if store is None or case is None or (identity["path"], identity["gallery_fingerprint"]) in known:
        return None
    try:
        gallery_id = store.add_gallery(case.case.id, **identity)
        return GalleryRecord(gallery_id, store.load_case(case.case.id))
    except ValueError:
        return None


def _split(marks: dict[str, str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(rejected, confirmed) item ids of a {item: state} dict."""
    return (tuple(i for i, s in marks.items() if s == "rejected"),
            tuple(i for i, s in marks.items() if s == "confirmed"))


def _copy_fresh(session: SearchSession) -> SearchSession:
    """A step-less session's copy with the same gallery, encoder, ρ and marks (branch needs a step)."""
    copy = SearchSession(session.gallery, session.encoder, rho=session.rho, relevance=session.relevance,
                         target_identity=session.target_identity)
    apply_marks(copy, session.rejected, session.confirmed)
    return copy
