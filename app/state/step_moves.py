"""``StepMoves``: moving through a case's steps for ``AppState`` (docs/architecture.md): undo the head step,
branch from an earlier step (or the start), choose the step on view, and make the live session end at the
head (``StepHistory.activate``: the session kept after that step, or none while its path must be re-run).

A plain object (no Qt) over the open case (``CaseSession``), the gallery (``GallerySession``, and the version
the head's path searched: ``GalleryPlacement``) and the steps' sessions (``StepHistory``). It says what
changed through ``Events`` (``app.state.events``): ``case_changed``, ``session_changed``,
``selected_step_changed`` (and, when the head moved onto a path of another gallery version, ``marks_changed``
and ``gallery_version_changed``), or ``error``. Its methods return False instead of raising.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from app.state.case_session import CaseSession, checked
from app.state.events import Events
from app.state.gallery_placement import GalleryPlacement
from app.state.step_history import StepHistory

if TYPE_CHECKING:
    from app.state.gallery_session import GallerySession


class StepMoves:
    """See the module docstring. ``require_idle()`` raises ``ActionRefused`` while a job runs; ``rho``: the
    keep rule of a fresh session."""

    def __init__(self, cases: CaseSession, galleries: GallerySession, placement: GalleryPlacement,
                 steps: StepHistory, require_idle: Callable[[], None], events: Events, *, rho: float) -> None:
        self.cases, self.galleries, self.placement, self.steps = cases, galleries, placement, steps
        self.require_idle, self.events, self.rho = require_idle, events, rho

    def undo_step(self) -> bool:
        """Undo the head step (it stays in the case, marked undone); its parent becomes the head."""
        cases = self.cases
        if not checked(self.events, cases.require_case, self.require_idle):
            return False
        if cases.head_step_id is None:
            self.events.emit("error", "There is no step to undo")
            return False
        try:
            cases.store.undo_step(cases.case_id)
        except ValueError as exc:
            self.events.emit("error", exc)
            return False
        self._after_head_move()
        return True

    def branch_from(self, step_id: int | None) -> bool:
        """Continue from ``step_id`` (None: from the whole gallery); the next step starts a branch there."""
        cases = self.cases
        if not checked(self.events, cases.require_case, self.require_idle):
            return False
        try:
            moved = cases.store.branch_from(cases.case_id, step_id)
        except ValueError as exc:
            self.events.emit("error", exc)
            return False
        if moved:
            self._after_head_move()
        return True

    def select_step(self, step_id: int | None) -> None:
        """Show a step's results (None: the whole gallery). Viewing changes nothing in the case."""
        if step_id is not None and self.cases.step(step_id) is None:
            self.events.emit("error", f"The case has no step {step_id}")
            return
        self.steps.select(step_id)

    def activate_head(self) -> None:
        """Make the live session end at the head step (None when that path must be re-run first)."""
        cases = self.cases
        fresh = None if cases.case is None or cases.gallery_id is None else self.galleries.session_factory(self.rho)
        self.steps.activate(cases.head_step_id, fresh, cases.marks())

    def _after_head_move(self) -> None:
        self.cases.refresh()
        self.placement.follow_head()
        self.activate_head()
        self.steps.select(self.cases.head_step_id)
