"""The sightings timeline's data, without Qt: a case's confirmed items as rows on lanes per camera, the gaps and
the route, proposed sightings beside them, moving between rows in time and across lanes
(app/state/sightings_rows.py), and the ticks of its time axis (app/state/time_axis.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import pytest

from app.state.sightings_rows import (
    CONFIRMED,
    PROPOSED,
    UNKNOWN_CAMERA,
    case_chart,
    chart,
    confirmed_marks,
    gap_text,
)
from app.state.time_axis import DAY, tick_step, ticks
from app.store.state import MarkState
from engine.index import GalleryItem
from engine.index.sightings import group_sightings

T0 = datetime(2024, 6, 10, 8, 0).timestamp()  # local 08:00


def item(name: str, camera: str | None, time: float | None) -> GalleryItem:
    return GalleryItem(id=name, source=f"{name}.jpg", camera=camera, time=time)


@dataclass(frozen=True)
class Proposal:
    camera: str | None
    start: float | None
    end: float | None
    items: tuple[str, ...]
    best: str | None
    score: float | None = 0.71
    agreement: float | None = 0.5
    direction: str | None = "next"


ITEMS = [item("a1", "cam05", T0), item("a2", "cam05", T0 + 4), item("b", "cam02", T0 + 3600),
         item("c", "cam05", T0 + 3 * 3600 + 300), item("d", "cam03", T0 + 3 * 3600 + 360), item("u", "cam07", None)]


def test_confirmed_items_become_rows_in_time_on_lanes_sorted_by_camera_with_gaps_and_route():
    shown = case_chart(ITEMS, {"a2": 0.9})
    assert [row.items for row in shown.rows] == [("a1", "a2"), ("b",), ("c",), ("d",)]
    assert [row.index for row in shown.rows] == [0, 1, 2, 3]  # as group_sightings orders them
    assert {row.kind for row in shown.rows} == {CONFIRMED}
    assert shown.lanes == ("cam02", "cam03", "cam05")  # the untimed sighting's camera has no lane
    assert shown.untimed == 1
    assert shown.route == "cam05 → cam02 → cam05 → cam03 → cam07"
    first = shown.rows[0]
    assert (first.camera, first.start, first.end, first.best) == ("cam05", T0, T0 + 4, "a2")
    assert first.label.startswith("cam05 · 2024-06-10 08:00:00") and first.label.endswith("· 2 items")
    assert [(g.before, g.after, g.text, g.camera_change) for g in shown.gaps] == [
        (0, 1, "59 min 56 s", True), (1, 2, "2 h 05 min", True), (2, 3, "1 min", True)]
    assert shown.span() == (T0, T0 + 3 * 3600 + 360) and shown.wall_clock


def test_proposals_join_the_rows_in_time_with_their_own_kind_and_never_count_as_gaps_or_route():
    proposals = [Proposal("cam04", T0 + 1800, T0 + 1900, ("p1", "p2"), "p2"), Proposal(None, T0 + 10, None, ("q",),
                                                                                     None, score=None)]
    shown = chart(group_sightings(ITEMS[:3]), proposals)
    assert [(row.kind, row.items) for row in shown.rows] == [
        (CONFIRMED, ("a1", "a2")), (PROPOSED, ("q",)), (PROPOSED, ("p1", "p2")), (CONFIRMED, ("b",))]
    assert shown.lanes == ("cam02", "cam04", "cam05", UNKNOWN_CAMERA)
    assert [(g.before, g.after) for g in shown.gaps] == [(0, 3)]
    assert shown.route == "cam05 → cam02"
    proposed = shown.rows[2]
    assert (proposed.index, proposed.best, proposed.score, proposed.agreement, proposed.direction) == \
        (0, "p2", 0.71, 0.5, "next")
    assert shown.rows[1].best == "q" and shown.rows[1].end == shown.rows[1].start  # no end: one instant
    assert "Proposed: cam04" in proposed.tooltip() and "score 0.710 · agreement 0.500" in proposed.tooltip()
    assert shown.place_of(PROPOSED, ["p1"]) == 2 and shown.place_of(CONFIRMED, ["p1"]) is None


@pytest.mark.parametrize("bad, words", [
    (Proposal("cam1", T0, T0 - 5, ("x",), "x"), "ends"),
    (Proposal("cam1", T0, T0, (), None), "has no items"),
    (Proposal("cam1", "soon", None, ("x",), "x"), "start must be a finite number"),
    (object(), "is not a sighting"),
])
def test_a_malformed_proposal_is_refused_by_name(bad, words):
    with pytest.raises(ValueError, match=words):
        chart([], [bad])


def test_moving_in_time_and_between_lanes():
    shown = case_chart(ITEMS[:5])  # lanes cam02 (b), cam03 (d), cam05 (a, c)
    assert [shown.step_time(place, 1) for place in range(4)] == [1, 2, 3, 3]
    assert [shown.step_time(place, -1) for place in range(4)] == [0, 0, 1, 2]
    assert (shown.step_time(None, 1), shown.step_time(None, -1)) == (0, 3)
    assert shown.step_lane(1, 1) == 3  # cam02 → cam03: its one sighting
    assert shown.step_lane(3, 1) == 2  # cam03 (3:06) → cam05: c (3:05) is nearer than a (0:00)
    assert shown.step_lane(1, -1) == 1  # no lane above cam02: stay
    assert shown.step_lane(0, -2) == 1
    assert shown.step_lane(None, 1) == 0
    empty = chart([])
    assert empty.step_time(None, 1) is None and empty.span() is None and empty.route == ""


def test_gap_text_keeps_the_two_largest_units():
    assert [gap_text(s) for s in (0, 45.4, 60, 725, 3600, 3 * 3600 + 300, 2 * DAY + 4 * 3600, DAY)] == [
        "0 s", "45 s", "1 min", "12 min 05 s", "1 h", "3 h 05 min", "2 d 04 h", "1 d"]
    with pytest.raises(ValueError, match="finite"):
        gap_text(float("nan"))


def test_confirmed_marks_of_the_open_gallery_only():
    at = datetime(2024, 1, 1)
    marks = (MarkState(1, "a", "confirmed", None, at, score=0.8), MarkState(1, "b", "rejected", None, at),
             MarkState(2, "c", "confirmed", None, at), MarkState(1, "d", "confirmed", None, at))

    class Case:
        pass

    case = Case()
    case.marks = marks
    assert confirmed_marks(case, 1) == {"a": 0.8, "d": None}
    assert confirmed_marks(case, None) == {} and confirmed_marks(None, 1) == {}


def test_wall_clock_ticks_fall_on_local_hours_and_midnights_and_name_their_day():
    hours = ticks(T0 - 1800, T0 + 5 * 3600, 600)
    assert tick_step(T0 - 1800, T0 + 5 * 3600, 600) == 3600
    assert [text for _, text in hours] == ["10 Jun 08:00", "09:00", "10:00", "11:00", "12:00", "13:00"]
    assert hours[0][0] == T0
    days = ticks(T0, T0 + 9 * DAY, 700)
    assert all(datetime.fromtimestamp(t).strftime("%H:%M") == "00:00" for t, _ in days)
    assert days[0][1] == "11 Jun" and len(days) >= 3
    crossing = [text for _, text in ticks(T0 + 14 * 3600, T0 + 20 * 3600, 600)]
    assert "11 Jun" in crossing  # the midnight tick names the new day


def test_footage_clock_ticks_and_bad_ranges():
    assert [text for _, text in ticks(0.0, 120.0, 400)] == ["0:00:00", "0:00:30", "0:01:00", "0:01:30", "0:02:00"]
    assert tick_step(0.0, 2.0, 400) == 0.5
    with pytest.raises(ValueError, match="end after its start"):
        ticks(10.0, 10.0, 100)
    with pytest.raises(ValueError, match="width"):
        ticks(0.0, 10.0, 0)
