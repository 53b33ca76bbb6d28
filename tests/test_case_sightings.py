"""Sightings: a case's confirmed items grouped by camera, track and time (engine/index/sightings.py), and
``lineup case list|sightings`` on a case database (app/case_sightings.py)."""

from __future__ import annotations

import json

import pytest
from report_cases import report_case
from typer.testing import CliRunner

from app.store import CaseStore
from engine.index import Gallery, GalleryItem
from engine.index.sightings import group_sightings, route
from lineup.cli import app


def item(name: str, camera: str | None, time: float | None, *, track: int | None = None, frame: int | None = None,
         source: str = "walk.mp4") -> GalleryItem:
    return GalleryItem(id=name, source=source, camera=camera, time=time, track=track, frame=frame)


def test_items_of_one_camera_within_the_gap_make_one_sighting_in_time_order():
    items = [item("b2", "cam2", 130.0, frame=2), item("a1", "cam1", 100.0, frame=10), item("a2", "cam1", 106.0,
             frame=16), item("a3", "cam1", 200.0, frame=110), item("b1", "cam2", 125.0, frame=1)]
    found = group_sightings(items, {"a2": 0.9, "a1": 0.4}, gap=10)
    assert [s.items for s in found] == [("a1", "a2"), ("b1", "b2"), ("a3",)]
    first = found[0]
    assert (first.camera, first.start, first.end, first.best, first.frames, first.source) == \
        ("cam1", 100.0, 106.0, "a2", (10, 16), "walk.mp4")
    assert found[1].best == "b1"  # no score: the first item
    assert route(found) == "cam1 → cam2 → cam1"


def test_a_track_is_one_sighting_whatever_its_gaps_and_untimed_items_come_last():
    items = [item("t1", "cam1", 10.0, track=4), item("t2", "cam1", 90.0, track=4), item("x", "cam1", 50.0),
             item("u", "cam3", None)]
    found = group_sightings(items, gap=5)
    assert [s.items for s in found] == [("t1", "t2"), ("x",), ("u",)]
    assert found[-1].start is None and found[-1].camera == "cam3"
    assert sorted(i for s in found for i in s.items) == sorted(i.id for i in items)


def test_a_negative_gap_is_refused():
    with pytest.raises(ValueError, match="gap"):
        group_sightings([item("a", "c", 1.0)], gap=-1)


def test_case_sightings_cover_every_confirmed_item_once_in_time_order(tmp_path):
    case = report_case(tmp_path)
    runner = CliRunner()
    listed = runner.invoke(app, ["case", "list", "--db", str(case.db), "--json"])
    assert listed.exit_code == 0, listed.output
    assert [c["id"] for c in json.loads(listed.output)] == [case.case_id]
    result = runner.invoke(app, ["case", "sightings", "--db", str(case.db), "--json"])  # the most recent case
    assert result.exit_code == 0, result.output
    sightings = json.loads(result.output)
    covered = [i for s in sightings for i in s["items"]]
    assert sorted(covered) == sorted(case.confirmed)
    starts = [s["start"] for s in sightings]
    assert starts == sorted(starts)
    gallery = Gallery.open(case.gallery_root)
    for s in sightings:
        assert {gallery.item(i).camera for i in s["items"]} == {s["camera"]} and s["best"] in s["items"]
    text = runner.invoke(app, ["case", "sightings", "--db", str(case.db), "--case", str(case.case_id)])
    assert text.exit_code == 0 and "route" in text.output


def test_bad_inputs_are_named_errors(tmp_path):
    runner = CliRunner()
    missing = runner.invoke(app, ["case", "sightings", "--db", str(tmp_path / "none.sqlite")])
    assert missing.exit_code == 2 and "does not exist" in missing.output
    case = report_case(tmp_path)
    unknown = runner.invoke(app, ["case", "sightings", "--db", str(case.db), "--case", "99"])
    assert unknown.exit_code == 2 and "no case 99" in unknown.output
    with CaseStore.open(case.db) as store:
        empty = store.create_case("Nothing confirmed yet")
    none = runner.invoke(app, ["case", "sightings", "--db", str(case.db), "--case", str(empty), "--json"])
    assert none.exit_code == 0 and json.loads(none.output) == []
