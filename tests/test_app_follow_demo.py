"""The trainer script ``follow_her`` on the shipped demo world (README "Sightings"): the woman in the red jacket
is confirmed on one camera by description, followed to the next camera twice, and the case's sightings come out
in time order, each confirmed item in exactly one sighting, on the cameras its items were seen by, three cameras
in all, every one of them her (the world's ground truth)."""

from __future__ import annotations

import pytest

from app.case_sightings import case_sightings
from app.launch import launch
from app.state.play_script import load_script
from app.store import CaseStore
from engine.index import Gallery


def test_the_follow_script_parses_with_its_new_actions():
    script = load_script("follow_her")
    kinds = [action.kind for action in script.actions]
    assert kinds.count("follow") == 2 and "show" in kinds
    assert [a.hours for a in script.actions if a.kind == "follow"] == [12.0, 12.0]
    assert all(a.at_most == 1 for a in script.actions if a.kind == "confirm_relevant")


@pytest.mark.slow
def test_follow_her_across_three_cameras_on_the_demo_world(user_data, tmp_path):
    db = tmp_path / "cases.db"
    assert launch(db, None, None, ["lineup"], play="follow_her", quit_after=True, fast=True) == 0
    found = case_sightings(db)
    with CaseStore.open(db, read_only=True) as store:
        state = store.load_case(found.case_id)
    gallery = Gallery.open(state.galleries[0].path)
    confirmed = [mark.item_id for mark in state.confirmed]
    listed = [item for sighting in found.sightings for item in sighting.items]
    assert sorted(listed) == sorted(confirmed) and len(set(listed)) == len(listed)  # each exactly once
    starts = [sighting.start for sighting in found.sightings]
    assert starts == sorted(starts)
    for sighting in found.sightings:
        assert {gallery.item(item).camera for item in sighting.items} == {sighting.camera}
    assert len({sighting.camera for sighting in found.sightings}) == 3
    assert {gallery.item(item).identity for item in confirmed} == {"12"}
    steps = [state.step(step_id) for step_id in state.active_path]
    assert [step.whole_gallery for step in steps] == [False, True, True]
