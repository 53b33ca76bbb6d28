"""Marks on gallery items (confirmed, rejected, cleared) for ``AppState``: checked, stored in the case one
transaction each, then applied to the live search session (docs/architecture.md)."""

from __future__ import annotations

from collections.abc import Sequence

from app.state.case_session import ActionRefused
from app.state.gallery_versions import SearchedVersion
from app.store import CaseStore, StepState
from engine.index import Gallery
from engine.retrieval.search import SearchSession

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
