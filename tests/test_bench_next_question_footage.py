"""bench/next_question_footage.py: the items of a pooled gallery of real clips matched to the hand-labelled people
(``people_rows``), and the witness's first words from a person's labels.

The items are placed by hand at the boxes ``tests/data/footage/people.json`` labels, so no clip is read: the
test runs without ``LINEUP_FOOTAGE_DIR`` (the bench itself needs the clips)."""

from __future__ import annotations

import json
from pathlib import Path

from bench_modules import load_bench

from engine.index import GalleryItem

REPO = Path(__file__).resolve().parents[1]
PEOPLE = json.loads((REPO / "tests" / "data" / "footage" / "people.json").read_text(encoding="utf-8"))
STORE, WALKING = "store-aisle-detection.gif", "face-demographics-walking.gif"


def _item(name: str, clip: str, frame: int, box, track: int) -> GalleryItem:
    return GalleryItem(id=name, source=f"/clips/{clip}", frame=frame, box=tuple(float(v) for v in box),
                       modality="rgb", track=track)


def test_items_are_matched_to_labelled_people_clip_by_clip():
    bench = load_bench("next_question_footage")
    store = {ref["frame"]: ref["box"] for ref in PEOPLE["clips"][STORE]["p1"]["boxes"]}
    walking = {ref["frame"]: ref["box"] for ref in PEOPLE["clips"][WALKING]["p2"]["boxes"]}
    first, last = min(store), max(store)
    x, y, w, h = store[first]
    items = [
        _item("store-p1", STORE, first, (x + 2, y + 1, w - 2, h), track=7),  # IoU well over 0.5
        _item("store-p1-later", STORE, last + 500, (0, 0, 30, 60), track=7),  # no label there: joins by track
        _item("store-nobody", STORE, first, (x - 200, y, w, h), track=8),  # left of p1: nobody's
        _item("store-p2", STORE, first, (x + w + 40, y, w, h), track=9),  # right of p1: over p2's box
        _item("walking-track-7", WALKING, max(walking) + 500, (0, 0, 30, 60), track=7),  # same number, other clip
        _item("walking-p2", WALKING, min(walking), walking[min(walking)], track=3),
    ]
    rows = bench.people_rows(items, PEOPLE, None)
    assert set(rows) == {(clip, person) for clip, people in PEOPLE["clips"].items() for person in people}
    assert rows[(STORE, "p1")] == [0, 1]
    assert rows[(STORE, "p2")] == [3]
    assert rows[(WALKING, "p2")] == [5]
    matched = {(STORE, "p1"), (STORE, "p2"), (WALKING, "p2")}
    assert all(not found for key, found in rows.items() if key not in matched)


def test_the_witness_starts_with_the_gender_or_the_first_labelled_key():
    bench = load_bench("next_question_footage")
    assert bench.first_key({"top_color": "blue", "gender": "male"}) == "gender"
    unlabelled_gender = PEOPLE["clips"]["classroom.gif"]["p3"]["attributes"]
    assert "gender" not in unlabelled_gender
    assert bench.first_key(unlabelled_gender) in unlabelled_gender
    assert bench.first_key({}) is None


def test_chance_is_the_share_of_random_orders_with_one_of_their_items_first():
    bench = load_bench("next_question_footage")
    assert bench.chance(60, [3], 1) == 0.05
    assert bench.chance(60, [3, 60], 5) == round((1 - (55 * 54 * 53) / (60 * 59 * 58) + 1) / 2, 3)
    assert bench.chance(60, [], 5) is None
