"""What a timestamp is, how it is read and how it is written; the one place for time text.

A time is seconds. At or after ``WALL_CLOCK_FROM`` (2001-09-09) it is POSIX wall-clock time (UTC based);
below, it counts on the footage clock (seconds since the first frame of a video). Exports (CLI output,
reports) write wall-clock times in UTC with the zone (``Z``); the screen writes them in local time with the
zone's name (``screen_time``).

Accepted spellings of a time (``parse_time``):

- a number: seconds (``1715000000.5``);
- ISO 8601: ``2024-05-06T10:15:30``, ``2024-05-06 10:15:30.250``, with or without an offset (no offset = UTC);
- compact: ``20240506T101530`` or ``20240506T101530.250`` (UTC).
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from typing import Any

#: times at or after this many seconds are POSIX wall-clock times (2001-09-09); below, footage-clock seconds
WALL_CLOCK_FROM = 1e9

_COMPACT = re.compile(r"^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\.\d+)?$")


class TimeInputError(ValueError):
    """A time is neither seconds nor an ISO 8601 string; the message names the input."""


def is_time(seconds: Any) -> bool:
    """True for a finite number of seconds (not a bool)."""
    return isinstance(seconds, int | float) and not isinstance(seconds, bool) and math.isfinite(seconds)


def is_wall_clock(seconds: float) -> bool:
    """True when ``seconds`` is a POSIX wall-clock time, False for a footage-clock time."""
    return seconds >= WALL_CLOCK_FROM


def export_time(seconds: float | None) -> str:
    """UTC date and time with its zone for wall-clock seconds, ``12.5s`` for footage-clock seconds, ``-`` when
    unknown (CLI output and reports)."""
    if seconds is None or not math.isfinite(seconds):
        return "-"
    if is_wall_clock(seconds):
        return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%SZ")
    return f"{seconds:.1f}s"


def parse_time(value: Any, where: str) -> float:
    """Seconds from a number or a time string (see the module docstring); ``where`` names the input in errors."""
    if isinstance(value, bool):
        raise TimeInputError(f"{where}: a time must be seconds or an ISO 8601 string, got {value!r}")
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise TimeInputError(f"{where}: time {value!r} is not finite")
        return float(value)
    if not isinstance(value, str) or not value.strip():
        raise TimeInputError(f"{where}: a time must be seconds or an ISO 8601 string, got {value!r}")
    text = value.strip()
    try:
        return float(text)
    except ValueError:
        pass
    compact = _COMPACT.match(text)
    if compact:
        year, month, day, hour, minute, second, fraction = compact.groups()
        text = f"{year}-{month}-{day}T{hour}:{minute}:{second}{fraction or ''}"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise TimeInputError(f"{where}: {value!r} is neither seconds nor an ISO 8601 time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
