"""A case's sightings as the sightings timeline shows them (Qt-free): one lane per camera, each sighting a mark
from its start to its end, the gaps between consecutive confirmed sightings and the route across cameras
(``engine.index.sightings``; README "The workstation").

Confirmed sightings come from the case's confirmed items on the open gallery (``group_sightings``, in time
order: a row's ``index`` is its place in that order, the index a follow-to-next-camera action takes); proposed
ones are plain objects or mappings (``AppState.proposals()`` gives mappings) with ``camera``, ``start``,
``end``, ``items``, ``best`` and optionally ``score``, ``agreement`` and ``direction`` (``index``: their place in
the list given). Sightings without a time have no place on the axis: they are counted (``untimed``), not
drawn. Times are written as the screen writes them (``engine.kernel.timefmt.screen_time``)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from app.store import CaseState
from engine.index.items import GalleryItem
from engine.index.sightings import DEFAULT_GAP, Sighting, group_sightings, route
from engine.kernel.timefmt import is_wall_clock, screen_time, screen_time_short

CONFIRMED, PROPOSED = "confirmed", "proposed"
UNKNOWN_CAMERA = "?"


@dataclass(frozen=True)
class SightingRow:
    kind: str  # CONFIRMED | PROPOSED
    index: int  # place among the sightings of its kind (confirmed: time order; proposed: the order given)
    camera: str  # UNKNOWN_CAMERA when the items name none
    start: float
    end: float
    items: tuple[str, ...]
    best: str
    label: str  # "cam02 · 2024-06-10 08:13:20 CEST · 3 items"
    score: float | None = None
    agreement: float | None = None
    direction: str | None = None

    @property
    def proposed(self) -> bool:
        return self.kind == PROPOSED

    def tooltip(self) -> str:
        lines = [("Proposed: " if self.proposed else "") + self.label]
        if self.end > self.start:
            lines.append(f"{screen_time(self.start)} – {screen_time(self.end)} ({gap_text(self.end - self.start)})")
        extra = [f"{name} {value:.3f}" for name, value in (("score", self.score), ("agreement", self.agreement))
                 if value is not None]
        if self.direction:
            extra.append(f"direction {self.direction}")
        if extra:
            lines.append(" · ".join(extra))
        return "\n".join(lines)


@dataclass(frozen=True)
class Gap:
    """The time between two consecutive confirmed sightings (``before`` and ``after``: places in the rows)."""

    before: int
    after: int
    seconds: float
    text: str  # "2 h 05 min"
    camera_change: bool


@dataclass(frozen=True)
class SightingsChart:
    rows: tuple[SightingRow, ...]  # time order (start, end), confirmed before proposed at one start
    lanes: tuple[str, ...]  # cameras, sorted by name (an unknown camera last)
    gaps: tuple[Gap, ...]
    route: str  # "cam02 → cam05 → cam03" (confirmed sightings, untimed ones included, as the engine writes it)
    untimed: int  # confirmed sightings without a time (not on the axis)

    def lane(self, place: int) -> int:
        return self.lanes.index(self.rows[place].camera)

    def span(self) -> tuple[float, float] | None:
        """The first start and the last end of the rows, or None without rows."""
        if not self.rows:
            return None
        return min(row.start for row in self.rows), max(row.end for row in self.rows)

    @property
    def wall_clock(self) -> bool:
        return bool(self.rows) and is_wall_clock(self.rows[0].start)

    def step_time(self, place: int | None, step: int) -> int | None:
        """The place ``step`` sightings later (negative: earlier) in time, held at the first and the last; from
        None the first (forward) or the last (backward)."""
        if not self.rows:
            return None
        if place is None:
            return 0 if step > 0 else len(self.rows) - 1
        return min(max(place + step, 0), len(self.rows) - 1)

    def step_lane(self, place: int | None, step: int) -> int | None:
        """The sighting nearest in time to ``place``'s in the lane ``step`` lanes down (negative: up); the same
        place when there is no such lane."""
        if place is None:
            return self.step_time(None, 1)
        lane = self.lane(place) + step
        if not 0 <= lane < len(self.lanes):
            return place
        middle = _middle(self.rows[place])
        candidates = [k for k, row in enumerate(self.rows) if row.camera == self.lanes[lane]]
        return min(candidates, key=lambda k: (abs(_middle(self.rows[k]) - middle), k))

    def place_of(self, kind: str, items: Iterable[str]) -> int | None:
        """The place of the row of ``kind`` sharing most items with ``items`` (None: no row shares one)."""
        wanted = set(items)
        best, shared = None, 0
        for place, row in enumerate(self.rows):
            common = len(wanted.intersection(row.items)) if row.kind == kind else 0
            if common > shared:
                best, shared = place, common
        return best


EMPTY = SightingsChart((), (), (), "", 0)


def _middle(row: SightingRow) -> float:
    return (row.start + row.end) / 2


def gap_text(seconds: float) -> str:
    """A duration in the largest two units that matter: "45 s", "12 min 05 s", "3 h 05 min", "2 d 04 h"."""
    if not math.isfinite(seconds):
        raise ValueError(f"a duration must be a finite number of seconds, got {seconds!r}")
    total = round(abs(seconds))
    sign = "-" if seconds < 0 and total else ""
    if total < 60:
        return f"{sign}{total} s"
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return f"{sign}{minutes} min" + (f" {secs:02d} s" if secs else "")
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{sign}{hours} h" + (f" {minutes:02d} min" if minutes else "")
    days, hours = divmod(hours, 24)
    return f"{sign}{days} d" + (f" {hours:02d} h" if hours else "")


def _label(camera: str, start: float, end: float, count: int) -> str:
    when = screen_time(start)
    if end > start:
        when = f"{when} – {screen_time_short(end) if is_wall_clock(end) else screen_time(end)}"
    return f"{camera} · {when} · {count} item{'s' if count != 1 else ''}"


def _number(value: object, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"a sighting's {what} must be a finite number of seconds or a score, got {value!r}")
    return float(value)


class SightingLike(Protocol):
    """What a row is made from: an ``engine.index.sightings.Sighting`` or a proposal (which may also carry
    ``score``, ``agreement`` and ``direction``)."""

    camera: str | None
    start: float | None
    end: float | None
    items: Sequence[str]
    best: str | None


def _value(source: SightingLike | Mapping[str, object], name: str, required: bool = True) -> object:
    if isinstance(source, Mapping):
        if required and name not in source:
            raise AttributeError(f"it has no {name!r}")
        return source.get(name)
    return getattr(source, name) if required else getattr(source, name, None)


def _row(kind: str, index: int, source: SightingLike | Mapping[str, object]) -> SightingRow | None:
    """The row of a sighting or proposal ``source``, or None when it has no start."""
    try:
        start, end, items, camera, best = (_value(source, name) for name in ("start", "end", "items", "camera", "best"))
        items = tuple(items)
    except (AttributeError, TypeError) as exc:
        raise ValueError(f"{kind} sighting {index} is not a sighting ({exc})") from None
    start = _number(start, "start")
    if start is None:
        return None
    end = _number(end, "end")
    end = start if end is None else end
    if end < start:
        raise ValueError(f"{kind} sighting {index} ends ({end}) before it starts ({start})")
    if not items:
        raise ValueError(f"{kind} sighting {index} at {screen_time(start)} has no items")
    camera = camera or UNKNOWN_CAMERA
    best = best or items[0]
    direction = _value(source, "direction", required=False)
    return SightingRow(kind, index, camera, start, end, items, best, _label(camera, start, end, len(items)),
                       score=_number(_value(source, "score", required=False), "score"),
                       agreement=_number(_value(source, "agreement", required=False), "agreement"),
                       direction=None if direction is None else str(direction))


def chart(sightings: Sequence[Sighting],
          proposals: Sequence[SightingLike | Mapping[str, object]] = ()) -> SightingsChart:
    """The chart of confirmed ``sightings`` (as ``group_sightings`` orders them) and ``proposals``."""
    rows = [row for k, s in enumerate(sightings) if (row := _row(CONFIRMED, k, s)) is not None]
    untimed = len(sightings) - len(rows)
    rows += [row for k, p in enumerate(proposals) if (row := _row(PROPOSED, k, p)) is not None]
    rows.sort(key=lambda row: (row.start, row.end, row.kind != CONFIRMED, row.index))
    cameras = {row.camera for row in rows}
    lanes = sorted(cameras - {UNKNOWN_CAMERA}) + ([UNKNOWN_CAMERA] if UNKNOWN_CAMERA in cameras else [])
    confirmed = [place for place, row in enumerate(rows) if row.kind == CONFIRMED]
    gaps = []
    for before, after in zip(confirmed, confirmed[1:], strict=False):
        seconds = max(0.0, rows[after].start - rows[before].end)
        gaps.append(Gap(before, after, seconds, gap_text(seconds), rows[before].camera != rows[after].camera))
    return SightingsChart(tuple(rows), tuple(lanes), tuple(gaps), route(sightings), untimed)


def case_chart(items: Sequence[GalleryItem], scores: dict[str, float] | None = None,
               proposals: Sequence[SightingLike | Mapping[str, object]] = (),
               gap: float = DEFAULT_GAP) -> SightingsChart:
    """The chart of confirmed ``items`` grouped into sightings (``scores`` pick each one's best item)."""
    return chart(group_sightings(items, scores, gap), proposals)


def confirmed_marks(case: CaseState | None, gallery_id: int | None) -> dict[str, float | None]:
    """{item id: score when marked} of ``case``'s confirmed items on gallery ``gallery_id``, in mark order."""
    if case is None or gallery_id is None:
        return {}
    return {mark.item_id: mark.score for mark in case.marks
            if mark.gallery_id == gallery_id and mark.state == CONFIRMED}
