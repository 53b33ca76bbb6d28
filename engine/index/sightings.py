"""Sightings: where and when a person was seen, from the gallery items an investigator confirmed.

A sighting is a run of items of one camera that belong together: the items of one track where the ingest
tracked, otherwise items whose times follow each other within ``gap`` seconds. Each sighting has a start and an
end (the first and last item's time), the frames it spans, the source file it comes from when all its items
share one, and a best item (the highest score given, else the first). Sightings are ordered by start; items
without a time each make a sighting of their own and come last, in the order given."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.index.items import GalleryItem

DEFAULT_GAP = 10.0  # seconds between two items of one camera that still make one sighting


@dataclass(frozen=True)
class Sighting:
    camera: str | None
    start: float | None
    end: float | None
    items: tuple[str, ...]
    best: str
    source: str | None
    frames: tuple[int | None, int | None]

    def to_dict(self) -> dict[str, Any]:
        return {"camera": self.camera, "start": self.start, "end": self.end, "items": list(self.items),
                "best": self.best, "source": self.source, "frames": list(self.frames)}


def _sighting(members: Sequence[GalleryItem], scores: Mapping[str, float]) -> Sighting:
    members = sorted(members, key=lambda item: (item.time is None, item.time or 0.0, item.frame or 0))
    best = max(members, key=lambda item: scores.get(item.id, float("-inf")))
    if best.id not in scores:
        best = members[0]
    times = [item.time for item in members if item.time is not None]
    frames = [item.frame for item in members if item.frame is not None]
    sources = {item.source for item in members}
    return Sighting(members[0].camera, min(times) if times else None, max(times) if times else None,
                    tuple(item.id for item in members), best.id, sources.pop() if len(sources) == 1 else None,
                    (min(frames) if frames else None, max(frames) if frames else None))


def group_sightings(items: Sequence[GalleryItem], scores: Mapping[str, float] | None = None,
                    gap: float = DEFAULT_GAP) -> list[Sighting]:
    """The sightings of ``items`` (each item in exactly one), in time order; ``scores`` pick each best item."""
    if not gap >= 0:
        raise ValueError(f"the gap between items of one sighting must be a number of seconds ≥ 0, got {gap!r}")
    scores = scores or {}
    timed = [item for item in items if item.time is not None]
    untimed = [item for item in items if item.time is None]
    groups: list[list[GalleryItem]] = []
    tracks: dict[tuple[str | None, str, int], list[GalleryItem]] = {}
    loose: dict[str | None, list[GalleryItem]] = {}
    for item in timed:
        if item.track is not None:
            tracks.setdefault((item.camera, item.source, item.track), []).append(item)
        else:
            loose.setdefault(item.camera, []).append(item)
    groups.extend(tracks.values())
    for members in loose.values():
        members.sort(key=lambda item: item.time)
        run = [members[0]]
        for item in members[1:]:
            if item.time - run[-1].time <= gap:
                run.append(item)
            else:
                groups.append(run)
                run = [item]
        groups.append(run)
    out = sorted((_sighting(group, scores) for group in groups), key=lambda s: (s.start, s.end, s.items))
    return out + [_sighting([item], scores) for item in untimed]


def route(sightings: Sequence[Sighting]) -> str:
    """The cameras in the order the person was seen, repeats of one camera in a row written once."""
    cameras: list[str] = []
    for sighting in sightings:
        name = sighting.camera or "?"
        if not cameras or cameras[-1] != name:
            cameras.append(name)
    return " → ".join(cameras)
