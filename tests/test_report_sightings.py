"""The report's sightings (app/report/sightings.py), their timeline figure (timeline_plot.py) and section
(sighting_sections.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from report_cases import collect, report_case

from app.report.html import BROWSER
from app.report.sighting_sections import duration, sightings
from app.report.sightings import ConfirmedItem, report_sightings
from app.report.timeline_plot import SCALE, render_timeline, tick_label, time_ticks
from engine.index import GalleryItem

pytestmark = pytest.mark.usefixtures("qapp")


def entry(name: str, camera: str | None, time: float | None, score: float | None = None) -> ConfirmedItem:
    return ConfirmedItem(1, GalleryItem(id=name, source=f"/footage/{camera}.mp4", camera=camera, time=time), score,
                         None)


def test_sightings_are_numbered_in_time_order_with_their_members():
    found = report_sightings([entry("b", "cam2", 500.0), entry("a1", "cam1", 100.0), entry("a2", "cam1", 104.0, 0.9),
                              entry("u", None, None)])
    assert [(s.number, s.camera, s.sighting.items) for s in found] == [
        (1, "cam1", ("a1", "a2")), (2, "cam2", ("b",)), (3, None, ("u",))]
    assert found[0].sighting.best == "a2" and found[0].duration == 4.0 and found[2].duration is None
    assert [m.id for m in found[0].members] == ["a1", "a2"] and list(found[0].sources()) == ["/footage/cam1.mp4"]


def test_the_timeline_has_one_lane_per_camera_and_leaves_untimed_sightings_out():
    found = report_sightings([entry("a", "cam1", 1_715_000_000.0), entry("b", "cam2", 1_715_000_600.0),
                              entry("c", "cam3", 1_715_003_600.0), entry("u", "cam9", None)])
    image = render_timeline(found)
    three = render_timeline(found[:3])
    assert image is not None and (image.width, image.height) == (three.width, three.height)
    two = render_timeline(found[:2])
    assert image.height - two.height == 34 * SCALE  # one lane fewer
    assert render_timeline(found[3:]) is None


def test_time_axis_ticks_are_round_utc_times_or_footage_seconds():
    low = datetime(2024, 5, 6, 12, 53, 17, tzinfo=UTC).timestamp()
    ticks, step = time_ticks(low, low + 45)
    assert step == 10 and [tick_label(t, step) for t in ticks] == ["12:53:20", "12:53:30", "12:53:40", "12:53:50",
                                                                    "12:54:00"]
    days, step = time_ticks(low, low + 5 * 86400)
    assert step == 86400 and tick_label(days[0], step) == "05-07"
    footage, step = time_ticks(0.0, 12.0)
    assert step == 2 and tick_label(footage[1], step) == "2 s"


def test_durations_read_in_words():
    assert [duration(v) for v in (None, 0.0, 12.5, 185.0, 7440.0)] == ["—", "0 s", "12.5 s", "3 min 05 s",
                                                                         "2 h 04 min"]


def test_the_section_tables_every_sighting_of_a_case(tmp_path):
    content, _ = collect(report_case(tmp_path))
    page = sightings(content, BROWSER)
    assert f"<h2>Sightings ({len(content.sightings)})</h2>" in page and len(content.sightings) >= 1
    assert page.count("<tr>") == 1 + len(content.sightings)
    covered = sorted(i for s in content.sightings for i in s.sighting.items)
    assert covered == sorted(r.item_id for r in content.confirmed)
    empty = sightings(type(content)(**{**content.__dict__, "sightings": ()}), BROWSER)
    assert "No confirmed item" in empty
