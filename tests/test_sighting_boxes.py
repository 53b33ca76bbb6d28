"""The boxes of a sighting frame by frame (engine/index/sighting_boxes.py): items at their frames, tracks
interpolated linearly between their items, the selected item marked, and the sighting's items found in a
gallery (same camera and track, or same camera and source within the gap)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.index import Gallery, GalleryItem
from engine.index.sighting_boxes import SightingBoxes, sighting_items


def item(name, frame, box, *, track=1, time=None, camera="cam1", source="walk.mp4"):
    return GalleryItem(id=name, source=source, frame=frame, box=box, track=track, camera=camera,
                       time=1_700_000_000.0 + frame / 10 if time is None else time)


def test_items_show_at_their_frames_and_tracks_are_interpolated_between_them():
    items = [item("a", 10, (0, 0, 10, 20)), item("b", 20, (100, 40, 30, 60)), item("c", 15, (5, 5, 5, 5), track=2),
             item("loose", 12, (1, 1, 2, 2), track=None)]
    boxes = SightingBoxes(items, selected="b")
    assert boxes.positions() == [10, 12, 15, 20]
    at10 = boxes.at(10)
    assert [(b.item, b.selected, b.interpolated) for b in at10] == [("a", False, False)]
    halfway = {b.track: b for b in boxes.at(15)}
    assert halfway[1].interpolated and halfway[1].box == pytest.approx((50, 20, 20, 40))
    assert halfway[2].item == "c" and not halfway[2].interpolated
    quarter = [b for b in boxes.at(12) if b.track == 1][0]
    assert quarter.box == pytest.approx((20, 8, 14, 28))
    assert any(b.item == "loose" for b in boxes.at(12)) and not any(b.item == "loose" for b in boxes.at(13))
    last = boxes.at(20)
    assert last[-1].item == "b" and last[-1].selected  # the selected box is drawn last, on top
    assert boxes.at(9) == [] and boxes.at(21) == []  # outside the track's items: nothing is guessed


def test_positions_can_be_the_images_of_a_folder():
    items = [item("a", 0, (0, 0, 10, 10), source="f/img_0.png"), item("b", 0, (20, 0, 10, 10), source="f/img_4.png")]
    places = {"f/img_0.png": 0, "f/img_4.png": 4}
    boxes = SightingBoxes(items, "a", lambda it: places.get(it.source))
    assert boxes.at(2)[0].box == pytest.approx((10, 0, 10, 10))


def test_the_sighting_of_an_item_in_a_gallery(tmp_path):
    t0 = 1_700_000_000.0
    items = [
        item("t1", 10, (0, 0, 10, 10), track=7, time=t0),
        item("t2", 30, (10, 0, 10, 10), track=7, time=t0 + 2),
        item("other-track", 20, (50, 0, 10, 10), track=8, time=t0 + 1),
        item("other-camera", 20, (0, 0, 10, 10), track=7, time=t0 + 1, camera="cam2"),
        item("other-video", 20, (0, 0, 10, 10), track=7, time=t0 + 1, source="other.mp4"),
        item("much-later", 40, (0, 0, 10, 10), track=9, time=t0 + 600),
        item("u1", 5, (0, 0, 10, 10), track=None, time=t0 + 50, source="f/a.png"),
        item("u2", 6, (0, 0, 10, 10), track=None, time=t0 + 55, source="f/b.png"),
        item("u3", 7, (0, 0, 10, 10), track=None, time=t0 + 90, source="f/c.png"),
    ]
    gallery = Gallery.create(tmp_path / "g", {"rgb": 4}, "ckpt")
    vectors = np.ones((len(items), 4), np.float32) / 2
    gallery.add(items, {"rgb": vectors})
    assert [i.id for i in sighting_items(gallery, "t1")] == ["t1", "t2"]
    assert [i.id for i in sighting_items(gallery, "other-track")] == ["other-track"]
    assert sorted(i.id for i in sighting_items(gallery, "u2")) == ["u1", "u2"]  # one folder, within the gap
    assert [i.id for i in sighting_items(gallery, "u3")] == ["u3"]
