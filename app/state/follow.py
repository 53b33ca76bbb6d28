"""Follow to the next camera in the app (Qt-free): the sighting a confirmed item belongs to, and the head
step's candidate next sightings as plain data for the views (docs/methods.md §9).

A case's sightings are its confirmed items on the current gallery grouped by camera, track and time
(``engine.index.sightings.group_sightings``, as ``lineup case sightings`` groups them); following one runs
``engine.retrieval.search.follow.follow_query`` as the next step. Its proposals leave out the items the case has
already marked: a confirmed one is a sighting of the case already, a rejected one is not the person.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.index import Gallery
from engine.index.sightings import DEFAULT_GAP, Sighting, group_sightings
from engine.kernel.timefmt import screen_time_short
from engine.retrieval.search import StepResult
from engine.retrieval.search.follow import DEFAULT_PROPOSALS, DEFAULT_WINDOW, duration, is_follow, proposals

__all__ = ["FOLLOW_WINDOW", "NotASighting", "confirmed_sighting", "duration", "proposal_rows", "proposals_message"]

#: The window the window's "Follow to next camera" looks in, before and after the sighting: 12 hours.
FOLLOW_WINDOW = DEFAULT_WINDOW


class NotASighting(ValueError):
    """The item cannot be followed: it is not a confirmed item of the gallery searched."""


def confirmed_sighting(gallery: Gallery | None, marks: Mapping[str, str], item_id: str | None,
                       gap: float = DEFAULT_GAP) -> Sighting:
    """The sighting of the case's confirmed items that holds ``item_id`` (``NotASighting`` says why none)."""
    if gallery is None:
        raise NotASighting("Open a gallery to follow a sighting")
    if not item_id:
        raise NotASighting("Select a confirmed item to follow its sighting to the next camera")
    if marks.get(item_id) != "confirmed":
        raise NotASighting("Follow starts from a sighting of the person: confirm the selected item first (C)")
    confirmed = [gallery.item(i) for i, state in marks.items() if state == "confirmed" and i in gallery]
    return next(s for s in group_sightings(confirmed, gap=gap) if item_id in s.items)


def proposal_rows(result: StepResult | None, gallery: Gallery | None, marks: Mapping[str, str],
                  count: int = DEFAULT_PROPOSALS) -> list[dict[str, Any]]:
    """The candidate next sightings of a follow step, best first, as plain dicts: camera, start, end, items,
    best, source, frames, score, agreement (None: no attribute evidence), direction ("after"/"before");
    empty for no step, a step that is not a follow step, or no gallery."""
    if result is None or gallery is None or not is_follow(result.query):
        return []
    return [proposal.to_dict() for proposal in proposals(result, gallery, count=count, exclude=marks)]


def proposals_message(rows: list[dict[str, Any]]) -> str:
    """One status line naming the proposals: "Next camera? cam05 · 14:02 (after, 0.81), …"."""
    if not rows:
        return "Follow: no sighting on another camera within the window; widen it or search another way"
    named = ", ".join(f"{row['camera']} · {screen_time_short(row['start'])} ({row['direction']}, {row['score']:.2f})"
                      for row in rows)
    return f"Next camera? {named}: confirm or reject them in the results"
