"""``StepHistory``: the engine side of a case's steps for ``AppState`` (docs/architecture.md): the live
session on the head step, a session kept after each step (``SearchSession.branch``: steps are shared immutable
values, so undo and branch switch sessions without searching again), every step's full result searched or
re-run in this run of the app, and the step the analyst is looking at. A plain object (no Qt): making a
session live (``activate``) fires ``session_changed`` and choosing the step on view (``select``) fires
``selected_step_changed`` through its ``Events`` (``app.state.events``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from app.state.events import Events
from app.state.query_spec import KeepRule
from engine.retrieval.search import FinalRanking, SearchSession, StepResult

if TYPE_CHECKING:
    from app.jobs import ReplayOutcome, StepOutcome


def set_session_marks(session: SearchSession, marks: dict[str, str]) -> None:
    """Make ``session``'s marks exactly ``marks`` ({item id: "confirmed" | "rejected"})."""
    for item in (*session.rejected, *session.confirmed):
        session.clear_mark(item)
    for item, state in marks.items():
        if state == "rejected":
            session.reject(item)
    for item, state in marks.items():
        if state == "confirmed":
            session.confirm(item)


class StepHistory:
    """See the module docstring."""

    def __init__(self, events: Events | None = None) -> None:
        self.events = events or Events()
        self.session: SearchSession | None = None
        self.selected: int | None = None
        self.results: dict[int, StepResult] = {}
        self.snapshots: dict[int, SearchSession] = {}

    def forget(self) -> None:
        """Drop every session and result (another gallery or case); the selection stays."""
        self.session = None
        self.results.clear()
        self.snapshots.clear()

    def result(self, step_id: int | None) -> StepResult | None:
        return None if step_id is None else self.results.get(step_id)

    def adopt_replay(self, outcome: ReplayOutcome) -> str | None:
        """Keep a re-run path's results and sessions; the message to show when it disagreed with the record."""
        self.results.update(outcome.results)
        self.snapshots.update(outcome.snapshots)
        if not outcome.differences:
            return None
        numbers = ", ".join(str(n) for n in outcome.differences)
        return (f"Re-running the case gave different kept items at step {numbers} than were recorded (a "
                f"different model, device or gallery state); the stored steps are kept")

    def adopt_rerun(self, outcome: ReplayOutcome) -> None:
        """A path re-run as new steps (on a grown gallery): keep its results and sessions, its session live."""
        self.results.update(outcome.results)
        self.snapshots.update(outcome.snapshots)
        self.session = outcome.session

    def select(self, step_id: int | None) -> None:
        """Show ``step_id`` (None: the start) and fire ``selected_step_changed``."""
        self.selected = step_id
        self.events.emit("selected_step_changed", step_id)

    def record(self, outcome: StepOutcome) -> None:
        """A step searched by a worker: its result, a session ending at it, and that session as the live one."""
        self.results[outcome.step_id] = outcome.result
        self.snapshots[outcome.step_id] = outcome.session.branch(-1)
        self.session = outcome.session

    def activate(self, head: int | None, fresh: Callable[[], SearchSession] | None,
                 marks: dict[str, str]) -> SearchSession | None:
        """Make the live session end at ``head`` with ``marks`` (None without ``fresh``, i.e. no case or gallery,
        and when the head's path must be re-run first) and fire ``session_changed``."""
        if fresh is None:
            session = None
        elif head in self.snapshots:
            session = self.snapshots[head].branch(-1)
        elif head is None:
            session = fresh()
        else:
            session = None
        if session is not None:
            set_session_marks(session, marks)
        self.session = session
        self.events.emit("session_changed", session)
        return session

    def retarget(self, identity: str | None) -> None:
        """Score the next steps of every kept session against ground-truth ``identity``."""
        if self.session is not None:
            self.session.target_identity = identity
        for snapshot in self.snapshots.values():
            snapshot.target_identity = identity

    def final_ranking(self) -> FinalRanking | None:
        """The live session's final ranking over the whole gallery (docs/methods.md §1.3), or None before any
        step or while the head's path still has to be re-run."""
        if self.session is None or not self.session.steps:
            return None
        return self.session.final_ranking()

    def confirmed_below(self, step_id: int, rule: KeepRule, marks: dict[str, str]) -> list[tuple[str, float]]:
        """(item id, score) of the confirmed candidates of a step that ``rule`` would cut if they were not
        confirmed, best first."""
        result = self.result(step_id)
        if result is None or rule.kind != "threshold":
            return []
        confirmed = {item for item, mark in marks.items() if mark == "confirmed"}
        below = [(result.item_ids[int(row)], float(score)) for row, score in zip(result.rows, result.scores,
                                                                                 strict=True)
                 if float(score) < rule.value and result.item_ids[int(row)] in confirmed]
        return sorted(below, key=lambda pair: -pair[1])
