"""The source player on real footage: a short real clip (``face-demographics-walking.gif``, found through
``LINEUP_FOOTAGE_DIR``; skipped when the setting does not hold it) is ingested, and the detail pane plays the
sighting of its longest track from the sighting's first frame to its last, with the track's box on every frame
that has an item (and interpolated between them). Run with ``pytest -s`` for the figures.

Real clips: intel-iot-devkit/sample-videos, © Intel Corporation and contributors, CC BY 4.0."""

from __future__ import annotations

import time
from collections import Counter

import pytest
from footage_frames import clip_path

from app.views.detail import DetailPane
from engine.index import Gallery
from engine.index.sighting_boxes import sighting_items
from engine.ingest import IngestOptions, ingest
from engine.kernel.video_frames import VideoFrames

WALKING = "face-demographics-walking.gif"
WAIT = 60_000


@pytest.mark.slow
def test_a_real_tracked_sighting_plays_from_its_first_to_its_last_frame_with_its_box(qtbot, tmp_path):
    from engine.ingest.encoder import ModelEncoder
    from engine.retrieval.models import create

    path = clip_path(WALKING)
    ingest(path, tmp_path / "g", ModelEncoder(create("tiny", device="cpu")), options=IngestOptions())
    gallery = Gallery.open(tmp_path / "g")
    tracks = Counter(item.track for item in gallery.iter_items() if item.track is not None)
    assert tracks, "the ingest should track the people of the clip"
    track, _ = tracks.most_common(1)[0]
    first_item = min((i for i in gallery.iter_items() if i.track == track), key=lambda i: i.frame)
    members = sighting_items(gallery, first_item.id)
    frames = sorted(item.frame for item in members)
    assert {item.track for item in members} == {track} and len(frames) >= 2

    pane = DetailPane()
    qtbot.addWidget(pane)
    pane.resize(420, 1000)
    pane.show()
    player = pane.player
    with VideoFrames(path) as video:
        fps = video.fps
    player.set_seconds((frames[-1] - frames[0]) / fps + 1)  # the whole sighting inside the clip
    with qtbot.waitSignal(player.frame_shown, timeout=WAIT):
        pane.set_gallery_item(gallery, first_item.id)
    assert player.position() == frames[0] and player.info().items == len(frames)

    shown: dict[int, tuple] = {}
    player.frame_shown.connect(lambda position: shown.__setitem__(position, player.facts().boxes))
    started = time.monotonic()
    shown[frames[0]] = player.facts().boxes
    player.play()
    qtbot.waitUntil(lambda: frames[-1] in shown, timeout=WAIT)
    player.pause()
    seconds = time.monotonic() - started

    played = [position for position in sorted(shown) if position <= frames[-1]]
    assert played == list(range(frames[0], frames[-1] + 1))  # every frame, none skipped
    by_item = {item.frame: item for item in members}
    for position in played:
        boxes = shown[position]
        assert len(boxes) == 1 and boxes[0].track == track, f"frame {position}: {boxes}"
        if position in by_item:
            assert boxes[0].item == by_item[position].id and boxes[0].box == pytest.approx(by_item[position].box)
        else:
            assert boxes[0].interpolated
    own = sum(1 for position in played if position in by_item)
    print(f"\nplayer on {WALKING}: track {track}, {len(members)} items, frames {frames[0]}–{frames[-1]}: "
          f"{len(played)} frames played, {len(played)} boxes drawn ({own} items' own, {len(played) - own} "
          f"interpolated), {seconds:.2f} s at {fps:g} fps")
