"""What a timestamp is, how it is read and how it is written; the one place for time text.

A time is seconds. At or after ``WALL_CLOCK_FROM`` (2001-09-09) it is POSIX wall-clock time (UTC based);
below, it counts on the footage clock (seconds since the first frame of a video). One rule, ``is_wall_clock``,
for the CLI, the reports and the app's grid.

- Stamps in the files Lineup writes (a gallery's ``updated``, a checkpoint's ``created``): ``utc_stamp``.
- Exports (CLI output, reports): wall-clock times in UTC with the zone, ``2024-06-10 06:13:20Z``
  (``export_time``; stored moments such as audit times: ``export_moment``, ``… UTC``); footage times ``12.5s``.
- Screen (the app): wall-clock times in local time with the zone's name, ``2024-06-10 08:13:20 CEST``
  (``screen_time``; ``screen_time_short`` for a narrow cell); footage times ``h:mm:ss.s``. ``read_screen_time``
  reads back what the screen writes (and plain seconds, ``mm:ss``, a date with or without a time).

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
_CLOCK = re.compile(r"^\s*(-)?(?:(\d+):)?(\d{1,2}):(\d{1,2}(?:\.\d*)?)\s*$")
_ZONE = re.compile(r"^(?P<time>.*\d)\s+(?P<zone>[A-Za-z][A-Za-z0-9+:-]*)$")
_UTC_NAMES = frozenset({"UTC", "Z", "GMT"})
_SCREEN_DATES = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d")
UNKNOWN_ON_SCREEN = "—"


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


def utc_stamp() -> str:
    """Now, as the files Lineup writes stamp it: UTC ISO 8601 to the second, ``2025-01-02T03:04:05+00:00``."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def export_moment(value: datetime) -> str:
    """A stored moment (a ``datetime``; one without a zone is UTC) as ``2025-01-02 03:04:05 UTC``."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _local(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC).astimezone()


def screen_time(seconds: float | None) -> str:
    """Footage clock as ``h:mm:ss.s``; wall-clock times as local ``YYYY-MM-DD HH:MM:SS ZONE``; '—' unknown."""
    if seconds is None or not math.isfinite(seconds):
        return UNKNOWN_ON_SCREEN
    if is_wall_clock(seconds):
        return _local(seconds).strftime("%Y-%m-%d %H:%M:%S %Z")
    sign = "-" if seconds < 0 else ""
    tenths = round(abs(seconds) * 10)
    hours, rest = divmod(tenths, 36000)
    minutes, rest = divmod(rest, 600)
    return f"{sign}{hours}:{minutes:02d}:{rest // 10:02d}.{rest % 10}"


def screen_time_short(seconds: float | None) -> str:
    """``screen_time`` for a narrow cell: wall-clock times as local ``09 Jun 15:55``."""
    if seconds is not None and math.isfinite(seconds) and is_wall_clock(seconds):
        return _local(seconds).strftime("%d %b %H:%M")
    return screen_time(seconds)


def read_screen_time(text: str) -> float | None:
    """Seconds from what ``screen_time`` writes (also plain seconds and ``mm:ss``); None when ``text`` is not a
    time. A date without a zone, or with a zone name other than UTC, is local time."""
    text = text.strip()
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return seconds if math.isfinite(seconds) else None  # "nan" and "inf" are no time
    match = _CLOCK.match(text)
    if match:
        sign, hours, minutes, seconds = match.groups()
        value = int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)
        return -value if sign else value
    zone = None
    named = _ZONE.match(text)
    if named:
        text, zone = named.group("time"), named.group("zone").upper()
    for pattern in _SCREEN_DATES:
        try:
            moment = datetime.strptime(text, pattern)
        except ValueError:
            continue
        return moment.replace(tzinfo=UTC).timestamp() if zone in _UTC_NAMES else moment.timestamp()
    return None


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
        seconds = float(text)
    except ValueError:
        pass
    else:
        if not math.isfinite(seconds):
            raise TimeInputError(f"{where}: time {value!r} is not finite")
        return seconds
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
