"""The detail pane's source player (app/views/source_player.py, app/state/source_feed.py): it opens at the
item's frame, steps by exactly one frame (buttons and , / . keys) showing the number and both clocks, draws
the sighting's boxes where they belong (the selected item's highlighted, a track interpolated between its
items), plays, cancels a decode when the selection changes, names a missing or unreadable source, and shows an
image's neighbours in its folder."""

from __future__ import annotations

import time

import cv2
import numpy as np
import pytest
from indexed_video import index_of, indexed_frame, write_indexed
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest

from app.views.detail import DetailPane
from app.views.detail_loading import BOX_COLOR, ITEM_COLOR
from app.views.results_model import format_time
from engine.index import Gallery, GalleryItem
from engine.kernel.video_frames import VideoFrames

WAIT = 10_000
T0 = 1_714_990_530.0  # the wall-clock time of frame 0
FPS = 10.0


def rgb_at(image, x, y):
    color = QColor(image.pixel(x, y))
    return color.red(), color.green(), color.blue()


def image_array(image) -> np.ndarray:
    """An RGB copy of a QImage's pixels."""
    image = image.convertToFormat(image.Format.Format_RGB888)
    data = np.frombuffer(image.constBits(), np.uint8, image.sizeInBytes())
    return data.reshape(image.height(), image.bytesPerLine())[:, : image.width() * 3].reshape(
        image.height(), image.width(), 3).copy()


def make_gallery(root, items):
    gallery = Gallery.create(root, {"rgb": 4}, "ckpt")
    gallery.add(items, {"rgb": np.full((len(items), 4), 0.5, np.float32)})
    return gallery


def video_item(name, source, frame, box, *, track=4, camera="cam1"):
    return GalleryItem(id=name, source=str(source), frame=frame, time=T0 + frame / FPS, camera=camera, box=box,
                       track=track)


@pytest.fixture
def clip(tmp_path):
    """A 10 fps video whose frames carry their index, a gallery with a track of three items (frames 40, 50, 60)
    and an item of another camera at frame 50."""
    path = write_indexed(tmp_path / "cam1.avi", 120, fps=FPS)
    items = [video_item("t40", path, 40, (10, 30, 20, 40)), video_item("t50", path, 50, (30, 30, 20, 40)),
             video_item("t60", path, 60, (50, 30, 20, 40)), video_item("elsewhere", path, 50, (100, 20, 30, 50),
                                                                         camera="cam2")]
    return path, make_gallery(tmp_path / "g", items)


@pytest.fixture
def pane(qtbot):
    widget = DetailPane()
    qtbot.addWidget(widget)
    widget.resize(700, 900)
    widget.show()
    yield widget
    widget.wait()


def open_item(qtbot, pane, gallery, item_id):
    with qtbot.waitSignal(pane.player.frame_shown, timeout=WAIT):
        pane.set_gallery_item(gallery, item_id)
    return pane.player


def shown_index(player) -> int:
    return index_of(image_array(player.image()), player.facts().scale)


def test_the_player_opens_at_the_items_frame_with_its_box_and_both_clocks(qtbot, pane, clip):
    path, gallery = clip
    player = open_item(qtbot, pane, gallery, "t50")
    info = player.info()
    assert (info.kind, info.first, info.start, info.last, info.items) == ("video", 20, 50, 80, 3)
    assert player.position() == 50 and shown_index(player) == 50
    label = player.position_label.text()
    assert label.startswith("Frame 50 (+0) · 0:05.000") and format_time(T0 + 5.0) in label
    image = player.image()
    assert rgb_at(image, 30, 50) == BOX_COLOR and rgb_at(image, 49, 50) == BOX_COLOR  # left and right edges
    assert rgb_at(image, 40, 50)[0] < 120  # inside: the frame itself
    assert rgb_at(image, 100, 40) != ITEM_COLOR  # the other camera's item is no part of the sighting
    assert [b.item for b in player.facts().boxes] == ["t50"] and player.facts().boxes[0].selected
    assert not pane.frame_view.isVisible()  # the player stands in for the still frame
    assert pane.source_image() is not None  # which was still read


def test_stepping_moves_by_exactly_one_frame_and_draws_the_track_between_its_items(qtbot, pane, clip):
    _, gallery = clip
    player = open_item(qtbot, pane, gallery, "t50")
    with qtbot.waitSignal(player.frame_shown, timeout=WAIT) as shown:
        player.next_button.click()
    assert shown.args == [51] and shown_index(player) == 51
    assert player.position_label.text().startswith("Frame 51 (+1) · 0:05.100")
    assert format_time(T0 + 5.1) in player.position_label.text()
    (box,) = player.facts().boxes  # between t50 (x 30) and t60 (x 50): x 32, thin, in the other items' colour
    assert box.interpolated and box.box == pytest.approx((32, 30, 20, 40))
    assert rgb_at(player.image(), 32, 50) == ITEM_COLOR and rgb_at(player.image(), 33, 50) != ITEM_COLOR
    pane.setFocus()
    for key, expected in ((",", 50), (",", 49), (",", 48), (".", 49)):
        with qtbot.waitSignal(player.frame_shown, timeout=WAIT) as shown:
            QTest.keyClick(pane, key)
        assert shown.args == [expected] and shown_index(player) == expected
    assert [b.item for b in player.facts().boxes] == [None]  # between t40 and t50
    with qtbot.waitSignal(player.frame_shown, timeout=WAIT):
        pane.set_gallery_item(gallery, "t40")
    with qtbot.waitSignal(player.frame_shown, timeout=WAIT):
        player.step(20)
    assert player.position() == 60 and [b.item for b in player.facts().boxes] == ["t60"]
    assert not player.facts().boxes[0].selected and rgb_at(player.image(), 50, 50) == ITEM_COLOR
    with qtbot.waitSignal(player.frame_shown, timeout=WAIT):
        player.step(-1000)  # kept inside the clip
    assert player.position() == 10 and shown_index(player) == 10 and player.facts().boxes == ()


def test_play_advances_frame_by_frame_and_space_pauses(qtbot, pane, clip):
    _, gallery = clip
    player = open_item(qtbot, pane, gallery, "t60")
    seen = []
    player.frame_shown.connect(seen.append)
    pane.setFocus()
    QTest.keyClick(pane, Qt.Key.Key_Space)
    assert player.is_playing() and player.play_button.text() == "Pause"
    qtbot.waitUntil(lambda: player.position() >= 66, timeout=WAIT)
    QTest.keyClick(pane, Qt.Key.Key_Space)
    assert not player.is_playing()
    assert seen == list(range(61, 61 + len(seen)))  # every frame in turn, none skipped
    assert shown_index(player) == player.position()
    player.step(1000)
    qtbot.waitUntil(lambda: player.position() == 90, timeout=WAIT)  # frame 60 + 3 s at 10 fps
    with qtbot.waitSignal(player.frame_shown, timeout=WAIT) as first:
        player.play()  # at the end: plays again from the first frame
    assert first.args == [30] == [player.info().first]
    player.pause()


class SlowCapture:
    """A capture that cannot seek (so a far frame is read forward) and takes 20 ms a frame; counts its grabs."""

    grabs = 0

    def __init__(self, capture):
        self._capture = capture

    def set(self, *_args):
        return False

    def grab(self):
        SlowCapture.grabs += 1
        time.sleep(0.02)
        return self._capture.grab()

    def __getattr__(self, name):
        return getattr(self._capture, name)


def test_a_new_selection_cancels_the_decoding_of_the_last(qtbot, pane, tmp_path, monkeypatch):
    long_clip = write_indexed(tmp_path / "long.avi", 420, fps=FPS)
    short = write_indexed(tmp_path / "short.avi", 30, fps=FPS)
    opened = VideoFrames._open
    monkeypatch.setattr(VideoFrames, "_open", lambda self: SlowCapture(opened(self)) if "long" in self.path.name
                        else opened(self))
    gallery = make_gallery(tmp_path / "g", [video_item("far", long_clip, 400, (10, 30, 20, 40)),
                                            video_item("near", short, 5, (10, 30, 20, 40), camera="cam9")])
    player = pane.player
    seen = []
    player.frame_shown.connect(seen.append)
    with qtbot.waitSignal(player.opened, timeout=WAIT):
        pane.set_gallery_item(gallery, "far")  # frame 400 read forward: 8 s at 20 ms a frame
    qtbot.waitUntil(lambda: SlowCapture.grabs > 5, timeout=WAIT)
    started = time.monotonic()
    with qtbot.waitSignal(player.frame_shown, timeout=WAIT):
        pane.set_gallery_item(gallery, "near")
    assert time.monotonic() - started < 3.0
    grabs = SlowCapture.grabs
    qtbot.wait(300)
    assert SlowCapture.grabs == grabs < 200  # the long read stopped when the selection changed
    assert seen == [5] and shown_index(player) == 5 and player.info().file == short


def test_a_missing_or_unreadable_source_is_named_not_played(qtbot, pane, tmp_path):
    gone = tmp_path / "gone.mp4"
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"this is no video")
    gallery = make_gallery(tmp_path / "g", [video_item("gone", gone, 3, (1, 1, 5, 5)),
                                            video_item("junk", junk, 3, (1, 1, 5, 5), camera="cam3")])
    player = pane.player
    with qtbot.waitSignal(player.failed, timeout=WAIT) as failed:
        pane.set_gallery_item(gallery, "gone")
    assert failed.args[0] == f"Cannot play the source: video {gone}: does not exist on this computer"
    assert player.view.note() == failed.args[0] and player.image() is None and player.info() is None
    assert not player.play_button.isEnabled() and pane.frame_view.isVisible()
    player.step(1)  # nothing to step: no error
    with qtbot.waitSignal(player.failed, timeout=WAIT) as failed:
        pane.set_gallery_item(gallery, "junk")
    assert "junk.mp4: cannot be opened as a video" in failed.args[0]


def test_an_image_of_a_folder_shows_its_neighbours(qtbot, pane, tmp_path):
    folder = tmp_path / "cam5"
    folder.mkdir()
    for index in range(16):
        cv2.imwrite(str(folder / f"shot_{index}.png"), indexed_frame(index))
    items = [GalleryItem(id=f"i{index}", source=str(folder / f"shot_{index}.png"), frame=index, time=T0 + index,
                         camera="cam5", box=(16 * (index - 5), 40, 16, 40)) for index in (7, 9)]
    gallery = make_gallery(tmp_path / "g", items)
    player = open_item(qtbot, pane, gallery, "i7")
    info = player.info()
    assert (info.kind, info.first, info.start, info.last, info.items) == ("images", 0, 7, 15, 2)
    assert shown_index(player) == 7 and player.facts().file.name == "shot_7.png"
    assert player.position_label.text().startswith("Image 8 of 16 · shot_7.png")
    assert rgb_at(player.image(), 32, 60) == BOX_COLOR
    for expected in (8, 9):
        with qtbot.waitSignal(player.frame_shown, timeout=WAIT):
            player.step(1)
        assert shown_index(player) == expected and player.facts().file.name == f"shot_{expected}.png"
    assert [b.item for b in player.facts().boxes] == ["i9"] and rgb_at(player.image(), 64, 60) == ITEM_COLOR


def test_clearing_the_pane_stops_the_player(qtbot, pane, clip):
    _, gallery = clip
    player = open_item(qtbot, pane, gallery, "t50")
    player.play()
    pane.clear()
    assert not player.is_playing() and player.image() is None and player.info() is None
    assert not player.next_button.isEnabled()
