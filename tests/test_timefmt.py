"""``engine.kernel.timefmt``: one rule for wall-clock vs footage-clock seconds, UTC with its zone in exports, local
time with its zone on screen, and reading times back."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta, timezone

import pytest

from engine.kernel.timefmt import (
    WALL_CLOCK_FROM,
    TimeInputError,
    export_moment,
    export_time,
    is_wall_clock,
    parse_time,
    read_screen_time,
    screen_time,
    screen_time_short,
)

POSIX = 1_718_000_000.0  # 2024-06-10 06:13:20 UTC


@pytest.fixture
def berlin(monkeypatch):
    """The process's local zone set to Europe/Berlin (CEST in June) for the test."""
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_one_rule_for_what_a_timestamp_is():
    assert not is_wall_clock(83.4) and not is_wall_clock(5e8) and not is_wall_clock(WALL_CLOCK_FROM - 1)
    assert is_wall_clock(WALL_CLOCK_FROM) and is_wall_clock(POSIX)
    # 5e8 s (1985) was a wall-clock time on the grid and a footage time in the CLI; now both say footage
    assert export_time(5e8) == "500000000.0s" and screen_time(5e8) == "138888:53:20.0"


def test_exports_write_utc_with_the_zone(berlin):
    assert export_time(POSIX) == "2024-06-10 06:13:20Z"
    assert export_time(12.54) == "12.5s" and export_time(None) == "-" and export_time(float("nan")) == "-"
    assert export_moment(datetime(2025, 1, 2, 3, 4, 5)) == "2025-01-02 03:04:05 UTC"
    east = timezone(timedelta(hours=2))
    assert export_moment(datetime(2025, 1, 2, 5, 4, 5, tzinfo=east)) == "2025-01-02 03:04:05 UTC"


def test_the_screen_writes_local_time_with_the_zone(berlin):
    assert screen_time(POSIX) == "2024-06-10 08:13:20 CEST"
    assert screen_time_short(POSIX) == "10 Jun 08:13"
    assert screen_time(3725.5) == "1:02:05.5" and screen_time(-61.0) == "-0:01:01.0"
    assert screen_time(None) == "—" and screen_time_short(83.4) == "0:01:23.4"


def test_screen_text_reads_back(berlin):
    for seconds in (0.0, 83.4, 3725.5, POSIX):
        assert read_screen_time(screen_time(seconds)) == pytest.approx(seconds)
    assert read_screen_time("2024-06-10 06:13:20 UTC") == pytest.approx(POSIX)
    assert read_screen_time("2024-06-10 08:13") == pytest.approx(POSIX - 20)
    assert read_screen_time("1:23") == pytest.approx(83.0) and read_screen_time("12.5") == 12.5
    assert read_screen_time("soon") is None and read_screen_time("2024-13-40") is None
    assert read_screen_time("nan") is None and read_screen_time("-inf") is None  # not a time to filter by


def test_parse_time_reads_numbers_iso_and_compact_and_names_bad_input():
    assert parse_time(12, "--from") == 12.0 and parse_time("1718000000", "--from") == POSIX
    assert parse_time("2024-06-10T06:13:20", "--from") == POSIX
    assert parse_time("2024-06-10T08:13:20+02:00", "--from") == POSIX
    assert parse_time("20240610T061320.5", "--from") == POSIX + 0.5
    assert datetime.fromtimestamp(parse_time("2024-06-10 06:13:20", "x"), UTC).hour == 6
    for bad, problem in ((True, "seconds or an ISO 8601"), (float("inf"), "not finite"), ("", "seconds or an ISO"),
                         ("yesterday", "neither seconds nor an ISO 8601")):
        with pytest.raises(TimeInputError, match=problem) as raised:
            parse_time(bad, "--until")
        assert str(raised.value).startswith("--until: ")
