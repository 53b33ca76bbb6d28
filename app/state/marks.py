"""Marks on gallery items (confirmed, rejected, cleared) and notes for ``AppState``: checked, stored in the
case one transaction each, then applied to the live search session (docs/architecture.md).

``MarkBook`` is the part of the state that marks and notes: a plain object (no Qt) that acts on the open case
(``CaseSession``), the gallery (``GallerySession``: its items and the version the case searches) and the
live session (``StepHistory``), and says what changed through ``Events`` (``app.state.events``):
``case_changed`` and ``marks_changed``, or ``error`` with what was refused. Like ``AppState``'s methods, its
methods return 0/None/False instead of raising.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from app.state.case_session import ActionRefused, CaseSession, checked
from app.state.events import Events
from app.state.gallery_versions import SearchedVersion
from app.store import CaseStore, StepState
from engine.index import Gallery
from engine.retrieval.search import SearchSession

if TYPE_CHECKING:
    from app.state.gallery_session import GallerySession
    from app.state.step_history import StepHistory

MARK_STATES = ("confirmed", "rejected", "cleared")


def check_mark_state(state: str) -> None:
    if state not in MARK_STATES:
        raise ActionRefused(f"A mark is one of {', '.join(MARK_STATES)}, not {state!r}")


def check_items(gallery: Gallery | None, gallery_id: int | None, item_ids: Sequence[str]) -> None:
    """Refuse marks without a gallery recorded in the case, or on an item the gallery does not have."""
    if gallery is None or gallery_id is None:
        raise ActionRefused("Open a gallery to mark its items")
    unknown = [item for item in item_ids if item not in gallery]
    if unknown:
        raise ActionRefused(f"Item {unknown[0]!r} is not in the open gallery")


def check_in_version(gallery: Gallery | None, scope: SearchedVersion | None, item_ids: list[str]) -> None:
    """Refuse marks on items that came after the version the case's path searches (``ActionRefused``)."""
    if gallery is None or scope is None:
        return
    for item in item_ids:
        if item in gallery and gallery.row(item) >= scope.version.items:
            raise ActionRefused(f"Item {item!r} came with footage added after {scope.version.label()}, which "
                                f"this path searches: re-run the path on the grown gallery to mark it")


def mark_context(step: StepState | None, item_id: str) -> dict[str, float | int | None]:
    """Where an item is being marked: the step on screen and the item's score and rank (1 = best) among the
    items it kept; rank and score stay None when the step did not keep the item, all None without a step."""
    if step is None:
        return {"step_id": None, "score": None, "rank": None}
    try:
        index = step.kept_ids.index(item_id)
    except ValueError:
        return {"step_id": step.id, "score": None, "rank": None}
    return {"step_id": step.id, "score": float(step.kept_scores[index]), "rank": index + 1}


def record_marks(store: CaseStore, case_id: int, gallery_id: int, session: SearchSession | None,
                 item_ids: Sequence[str], state: str, note: str | None,
                 step: StepState | None = None) -> tuple[int, bool, ValueError | None]:
    """Store each mark (a confirmation or rejection with its ``mark_context`` in ``step``), then apply it to
    ``session``. Returns (how many were processed before the first failure, whether any changed the case, that
    failure or None)."""
    done, changed = 0, False
    for item_id in item_ids:
        context = {} if state == "cleared" else mark_context(step, item_id)
        try:
            changed |= store.mark(case_id, gallery_id, item_id, state, note, **context)
        except ValueError as exc:
            return done, changed, exc
        if session is not None:
            {"confirmed": session.confirm, "rejected": session.reject, "cleared": session.clear_mark}[state](item_id)
        done += 1
    return done, changed, None


class MarkBook:
    """See the module docstring. ``require_idle()`` raises ``ActionRefused`` while a job runs."""

    def __init__(self, cases: CaseSession, galleries: GallerySession, steps: StepHistory,
                 require_idle: Callable[[], None], events: Events) -> None:
        self.cases, self.galleries, self.steps = cases, galleries, steps
        self.require_idle = require_idle
        self.events = events

    def mark_many(self, item_ids: list[str], state: str, note: str | None = None) -> int:
        """Mark several items (one store transaction each, one ``marks_changed``). Returns how many were
        processed before the first failure (all of them when none fails)."""
        cases, gallery = self.cases, self.galleries.gallery
        try:
            check_mark_state(state)
            cases.require_case()
            self.require_idle()
            check_items(gallery, cases.gallery_id, item_ids)
            check_in_version(gallery, self.galleries.scope, list(item_ids))
        except ActionRefused as exc:
            self.events.emit("error", exc)
            return 0
        shown_id = self.steps.selected if self.steps.selected is not None else cases.head_step_id
        shown = None if shown_id is None else cases.step(shown_id)
        if shown is not None and shown.gallery_id != cases.gallery_id:
            shown = None
        done, changed, failure = record_marks(cases.store, cases.case_id, cases.gallery_id, self.steps.session,
                                              item_ids, state, note, shown)
        if failure is not None:
            self.events.emit("error", failure)
        if changed:
            cases.refresh()
            self.events.emit("marks_changed", cases.marks())
        return done

    def add_note(self, text: str, *, item_id: str | None = None, step_id: int | None = None) -> int | None:
        """A note on the case, optionally about an item of the current gallery or a step."""
        if not self._ready():
            return None
        cases = self.cases
        if item_id is not None and cases.gallery_id is None:
            self.events.emit("error", "Open a gallery to note on its items")
            return None
        try:
            note_id = cases.store.add_note(cases.case_id, text, item_id=item_id, step_id=step_id,
                                           gallery_id=None if item_id is None else cases.gallery_id)
        except ValueError as exc:
            self.events.emit("error", exc)
            return None
        cases.refresh()
        return note_id

    def edit_note(self, note_id: int, text: str) -> bool:
        """Replace a note's text (audited; the earlier text stays in the audit trail)."""
        if not self._ready():
            return False
        try:
            self.cases.store.edit_note(self.cases.case_id, note_id, text)
        except ValueError as exc:
            self.events.emit("error", exc)
            return False
        self.cases.refresh()
        return True

    def _ready(self) -> bool:
        return checked(self.events, self.cases.require_case, self.require_idle)
