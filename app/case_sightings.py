"""A case's confirmed items as sightings across cameras (``engine.index.sightings``), for ``lineup case
sightings`` and the cases it lists (``lineup case list``). The case database is opened read-only; each gallery
the case searched is opened as a reader, and a gallery that is missing or unreadable is named."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.store import CaseStore
from app.store.state import CaseSummary
from engine.index import Gallery
from engine.index.sightings import DEFAULT_GAP, Sighting, group_sightings, route


@dataclass(frozen=True)
class CaseSightings:
    case_id: int
    title: str
    sightings: tuple[Sighting, ...]

    @property
    def route(self) -> str:
        return route(self.sightings)

    def to_dict(self) -> dict[str, Any]:
        return {"case": self.case_id, "title": self.title, "route": self.route,
                "sightings": [s.to_dict() for s in self.sightings]}


def _open_store(db: str | Path) -> CaseStore:
    if not Path(db).is_file():
        raise ValueError(f"case database {db} does not exist")
    return CaseStore.open(db, read_only=True)


def _recent_first(store: CaseStore) -> list[CaseSummary]:
    return sorted(store.list_cases(), key=lambda case: (case.updated_at, case.id), reverse=True)


def list_cases(db: str | Path) -> list[CaseSummary]:
    """The cases of ``db``, most recently changed first."""
    with _open_store(db) as store:
        return _recent_first(store)


def case_sightings(db: str | Path, case_id: int | None = None, gap: float = DEFAULT_GAP) -> CaseSightings:
    """The sightings of case ``case_id`` of ``db`` (the most recently changed case when None)."""
    with _open_store(db) as store:
        cases = _recent_first(store)
        if not cases:
            raise ValueError(f"case database {db} holds no case")
        if case_id is None:
            case_id = cases[0].id
        elif case_id not in {case.id for case in cases}:
            raise ValueError(f"case database {db} has no case {case_id} (it has {', '.join(str(c.id) for c in cases)})")
        state = store.load_case(case_id)
    paths = {use.id: use.path for use in state.galleries}
    galleries: dict[int, Gallery] = {}
    items, scores = [], {}
    for mark in state.marks:
        if mark.state != "confirmed":
            continue
        if mark.gallery_id not in galleries:
            path = paths[mark.gallery_id]
            try:
                galleries[mark.gallery_id] = Gallery.open(path)
            except (OSError, ValueError) as exc:
                raise ValueError(f"gallery {path} of case {case_id} cannot be read: {exc}") from None
        gallery = galleries[mark.gallery_id]
        if mark.item_id not in gallery:
            raise ValueError(f"gallery {gallery.root} no longer holds confirmed item {mark.item_id!r}")
        items.append(gallery.item(mark.item_id))
        if mark.score is not None:
            scores[mark.item_id] = mark.score
    return CaseSightings(case_id, state.case.title, tuple(group_sightings(items, scores, gap)))
