"""The report's sightings: the case's confirmed items grouped by camera, track and time
(``engine.index.sightings``), numbered in time order, each with its items' gallery records (the source file and
the SHA-256 ingest recorded for it) and the best item's thumbnail. Qt-free, like the rest of the content."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from app.report.images import ReportImage
from engine.index import GalleryItem
from engine.index.sightings import DEFAULT_GAP, Sighting, group_sightings, route


@dataclass(frozen=True)
class ReportSighting:
    """Sighting ``number`` (1 = earliest) of the report: the engine's ``Sighting``, its items' records in its
    order (``members``) with the gallery each came from, and the report's copy of the best item's crop."""

    number: int
    sighting: Sighting
    members: tuple[GalleryItem, ...]
    galleries: tuple[int, ...]  # the gallery of each member
    thumbnail: ReportImage | None = None

    @property
    def camera(self) -> str | None:
        return self.sighting.camera

    @property
    def start(self) -> float | None:
        return self.sighting.start

    @property
    def end(self) -> float | None:
        return self.sighting.end

    @property
    def duration(self) -> float | None:
        return None if self.start is None or self.end is None else self.end - self.start

    @property
    def frames(self) -> tuple[int | None, int | None]:
        return self.sighting.frames

    def sources(self) -> dict[str, list[GalleryItem]]:
        """The source files its items come from (file path → its items, in the sighting's order)."""
        out: dict[str, list[GalleryItem]] = {}
        for item in self.members:
            out.setdefault(item.source, []).append(item)
        return out


@dataclass(frozen=True)
class ConfirmedItem:
    """A confirmed item as the sightings need it: its gallery, its record, its mark's score, its thumbnail."""

    gallery_id: int
    item: GalleryItem
    score: float | None
    thumbnail: ReportImage | None


def report_sightings(confirmed: Iterable[ConfirmedItem], gap: float = DEFAULT_GAP) -> tuple[ReportSighting, ...]:
    """The sightings of the confirmed items, numbered from 1 in time order (untimed ones last)."""
    confirmed = list(confirmed)
    by_id: dict[str, ConfirmedItem] = {}
    for entry in confirmed:
        by_id.setdefault(entry.item.id, entry)
    scores = {entry.item.id: entry.score for entry in confirmed if entry.score is not None}
    found = group_sightings([entry.item for entry in by_id.values()], scores, gap)
    out = []
    for number, sighting in enumerate(found, 1):
        entries = [by_id[item_id] for item_id in sighting.items]
        out.append(ReportSighting(number, sighting, tuple(e.item for e in entries),
                                  tuple(e.gallery_id for e in entries), by_id[sighting.best].thumbnail))
    return tuple(out)


def sightings_route(sightings: Iterable[ReportSighting]) -> str:
    """The cameras in the order the person was seen (``engine.index.sightings.route``)."""
    return route([s.sighting for s in sightings])


def cameras(sightings: Iterable[ReportSighting]) -> list[str]:
    """The cameras of the sightings, by name ("?" for items without a camera)."""
    return sorted({s.camera or "?" for s in sightings})


def timed(sightings: Iterable[ReportSighting]) -> list[ReportSighting]:
    return [s for s in sightings if s.start is not None]

