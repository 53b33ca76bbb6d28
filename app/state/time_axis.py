"""Ticks of a time axis on screen (Qt-free): where they fall and what they say, for a visible range of seconds
drawn over a width in pixels. Wall-clock times are written in local time as the screen writes them
(``engine.kernel.timefmt``): days as "10 Jun", hours and minutes as "08:15" (a tick at midnight, and the first
tick, name their day: "10 Jun 08:15"), seconds as "08:15:30"; footage-clock times as ``h:mm:ss``."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from engine.kernel.timefmt import is_wall_clock, screen_time

DAY = 86400.0
#: Tick steps in seconds, smallest first; steps of a day or more fall on local midnights.
STEPS = (0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200,
         DAY, 2 * DAY, 7 * DAY, 14 * DAY, 28 * DAY, 91 * DAY, 364 * DAY)


def tick_step(start: float, end: float, pixels: float, spacing: float = 90.0) -> float:
    """The smallest step whose ticks lie at least ``spacing`` pixels apart when ``start``..``end`` spans
    ``pixels``; wall-clock times never tick below a second."""
    if not (math.isfinite(start) and math.isfinite(end)) or end <= start:
        raise ValueError(f"a time axis needs an end after its start, got {start!r}..{end!r}")
    if pixels <= 0:
        raise ValueError(f"a time axis needs a width in pixels > 0, got {pixels!r}")
    per_second = pixels / (end - start)
    smallest = 1 if is_wall_clock(start) else 0
    for step in STEPS:
        if step >= smallest and step * per_second >= spacing:
            return step
    return STEPS[-1]


def _local(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC).astimezone()


def _tick_text(seconds: float, step: float, first: bool) -> str:
    if not is_wall_clock(seconds):
        text = screen_time(seconds)
        return text[:-2] if step >= 1 and text.endswith(".0") else text
    moment = _local(seconds)
    if step >= DAY or (moment.hour, moment.minute, moment.second) == (0, 0, 0):
        return moment.strftime("%d %b")
    clock = moment.strftime("%H:%M" if step >= 60 else "%H:%M:%S")
    return f"{moment.strftime('%d %b')} {clock}" if first else clock


def _midnight(day: datetime, days: int) -> float:
    """The local midnight ``days`` after that of ``day`` (its own, across a move to or from summer time)."""
    return (day + timedelta(days=days)).replace(tzinfo=None).astimezone().timestamp()


def _day_ticks(start: float, end: float, days: int) -> list[float]:
    day = _local(start).replace(hour=0, minute=0, second=0, microsecond=0)
    k = 0 if _midnight(day, 0) >= start else 1
    out = []
    while (seconds := _midnight(day, k)) <= end:
        out.append(seconds)
        k += days
    return out


def ticks(start: float, end: float, pixels: float, spacing: float = 90.0) -> list[tuple[float, str]]:
    """(seconds, text) of each tick in ``start``..``end`` drawn over ``pixels``."""
    step = tick_step(start, end, pixels, spacing)
    if is_wall_clock(start) and step >= DAY:
        times = _day_ticks(start, end, round(step / DAY))
    else:
        offset = _local(start).utcoffset().total_seconds() if is_wall_clock(start) else 0.0
        first = math.ceil((start + offset) / step) * step - offset
        count = int(math.floor((end - first) / step)) + 1
        times = [first + k * step for k in range(max(count, 0))]
    return [(t, _tick_text(t, step, k == 0)) for k, t in enumerate(times)]
