"""The window never freezes while the detail pane plays a video: the heartbeat of tests/test_app_heartbeat.py
(a 10 ms timer on the UI thread) keeps beating with no gap over its ``MAX_STALL_MS`` while the source player
opens a 1280 × 720 clip at its item and plays it from its first to its last frame. Run with ``pytest -s`` for
the gaps."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from test_app_heartbeat import MAX_STALL_MS, Heartbeat

from app.views.detail import DetailPane
from engine.index import Gallery, GalleryItem

WAIT = 60_000
WIDTH, HEIGHT, FPS, FRAMES = 1280, 720, 30.0, 90


def busy_video(path):
    """Textured frames with a walking figure: a fair load for the decoder."""
    rng = np.random.default_rng(0)
    background = cv2.GaussianBlur(rng.integers(0, 255, (HEIGHT, WIDTH, 3), dtype=np.uint8), (0, 0), 2)
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), FPS, (WIDTH, HEIGHT))
    assert writer.isOpened()
    boxes = []
    for index in range(FRAMES):
        frame = background.copy()
        x = 100 + 10 * index
        cv2.rectangle(frame, (x, 200), (x + 80, 440), (40, 40, 200), -1)
        boxes.append((float(x), 200.0, 80.0, 240.0))
        writer.write(frame)
    writer.release()
    return boxes


@pytest.mark.slow
def test_the_event_loop_never_stalls_while_the_detail_pane_plays_a_video(qtbot, tmp_path):
    path = tmp_path / "cam4.avi"
    boxes = busy_video(path)
    items = [GalleryItem(id=f"f{index}", source=str(path), frame=index, time=1_714_990_530.0 + index / FPS,
                         camera="cam4", box=boxes[index], track=1) for index in range(0, FRAMES, 10)]
    gallery = Gallery.create(tmp_path / "g", {"rgb": 4}, "ckpt")
    gallery.add(items, {"rgb": np.full((len(items), 4), 0.5, np.float32)})
    pane = DetailPane()
    qtbot.addWidget(pane)
    pane.resize(420, 1000)
    pane.show()
    player = pane.player
    shown, boxed = [], []
    player.frame_shown.connect(shown.append)
    player.frame_shown.connect(lambda position: boxed.append(position) if player.facts().boxes else None)

    heart = Heartbeat()
    heart.start()
    with qtbot.waitSignal(player.frame_shown, timeout=WAIT):
        pane.set_gallery_item(gallery, "f40")
    with qtbot.waitSignal(player.frame_shown, timeout=WAIT):
        player.step(-FRAMES)
    player.play()
    qtbot.waitUntil(lambda: not player.is_playing(), timeout=WAIT)
    heart.stop()
    pane.wait()

    assert shown[:2] == [40, 0] and shown[2:] == list(range(1, FRAMES))  # every frame, in order
    assert boxed[2:] == list(range(1, 81))  # the track's box on every frame from its first item to its last
    assert len(heart.ticks) > 100
    print(f"player heartbeat: {len(shown)} frames shown, {len(boxed)} with boxes; {heart.summary()}")
    assert heart.longest_gap() <= MAX_STALL_MS, f"the UI thread stalled: {heart.summary()}"
