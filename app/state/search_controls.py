"""``SearchControls``: the open case's search controls (camera and time filters, the query panel's inputs, how the
witness saw the person) as the part of ``AppState`` that keeps them, saves them in the case and puts them back
when a case is opened, created or closed (docs/architecture.md: the case holds its own search state, a new case
starts clean; the values and their JSON are ``app.state.working_state``).

A plain object (no Qt) on the open case of a ``CaseSession``. It says what changed through ``Events``
(``app.state.events``): ``filters_changed`` (the ``Filters``), ``working_state_changed`` (the whole
``WorkingState``, when a case's controls are put back) and ``error`` (a filter refused, a save that failed, an
image of the case that could not be read back).
"""

from __future__ import annotations

from app.state.case_session import CaseSession
from app.state.events import Events
from app.state.working_state import Filters, QueryInputs, WorkingState, read_working_state, save_sketch
from engine.retrieval.search import QueryInputError, StepQuery


class SearchControls:
    """See the module docstring. ``working``: the controls as they stand (``WorkingState()`` without a case)."""

    def __init__(self, cases: CaseSession, events: Events) -> None:
        self.cases, self.events = cases, events
        self.working = WorkingState()
        self._sketch_ref: dict[str, str] | None = None  # the working sketch as last saved in the case
        self._sketch_saved = True  # False while the sketch drawn since was not saved

    @property
    def filters(self) -> Filters:
        return self.working.filters

    def set_filters(self, cameras: frozenset[str] | set[str] | list[str] | None = None,
                    time_range: tuple[float | None, float | None] | None = None) -> bool:
        """Filters for the next step (checked like a step query's), saved in the open case."""
        try:  # a throw-away query checks and normalises the filters exactly as a step will
            query = StepQuery(example="filters", cameras=None if cameras is None else frozenset(cameras),
                              time_range=time_range)
        except QueryInputError as exc:
            self.events.emit("error", exc)
            return False
        self.working = self.working.with_filters(Filters(query.cameras, query.time_range))
        self.save()
        self.events.emit("filters_changed", self.working.filters)
        return True

    def set_query_inputs(self, inputs: QueryInputs) -> None:
        """The query panel's inputs as they stand, saved in the open case (the sketch's file is written when the
        case is left or searched: ``save(sketch=True)``)."""
        before, after = self.working.inputs.sketch, inputs.sketch
        if (before is None) != (after is None) or (after is not None and not (
                before.shape == after.shape and (before == after).all())):
            self._sketch_saved = False
        self.working = self.working.with_inputs(inputs)
        self.save()

    def set_witness_saw(self, condition: str) -> None:
        """How the witness saw the person (a choice of the witness prior, checked by the caller), saved in the
        open case."""
        if condition != self.working.witness_saw:
            self.working = self.working.with_witness_saw(condition)
            self.save()

    def load(self) -> None:
        """Take the working state of the case just loaded (a new case's is clean) and say so."""
        case, store = self.cases.case, self.cases.store
        working, self._sketch_ref, problems = read_working_state(case.working_state, store.evidence_root,
                                                                 case.case.id)
        self.working, self._sketch_saved = working, True
        for problem in problems:
            self.events.emit("error", f"Case {case.case.title!r}: {problem}")
        self._announce()

    def reset(self) -> None:
        """Clean controls (no case is open) and say so."""
        self.working, self._sketch_ref, self._sketch_saved = WorkingState(), None, True
        self._announce()

    def save(self, *, sketch: bool = False) -> None:
        """Store the open case's working state (``sketch``: write a sketch drawn since into the case's evidence
        folder first); a failure is an ``error`` event."""
        case, store = self.cases.case, self.cases.store
        if case is None or store is None:
            return
        try:
            if sketch and not self._sketch_saved:
                self._sketch_ref = save_sketch(self.working.inputs.sketch, store.evidence_root, case.case.id)
                self._sketch_saved = True
            store.save_working_state(case.case.id, self.working.to_json(self._sketch_ref))
        except (ValueError, OSError) as exc:
            self.events.emit("error", exc)

    def _announce(self) -> None:
        self.events.emit("filters_changed", self.working.filters)
        self.events.emit("working_state_changed", self.working)
