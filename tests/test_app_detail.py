"""Detail pane (app/views/detail.py): metadata, the source frame with its box (image and video sources), a
missing source, crop hash check, buttons and stale loads."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from PySide6.QtGui import QColor

from app.views.detail import BOX_COLOR, OUTSIDE_DIM, DetailInputError, DetailPane, draw_box, read_source_frame
from app.views.results import CONFIRMED, REJECTED, format_time
from engine.index import GalleryItem
from engine.kernel.hashing import sha256_file

BOX = (20.0, 10.0, 30.0, 50.0)
GREY = 120


def rgb_at(image, x, y):
    color = QColor(image.pixel(x, y))
    return color.red(), color.green(), color.blue()


@pytest.fixture
def files(tmp_path):
    source = np.full((80, 120, 3), GREY, dtype=np.uint8)
    source[10:60, 20:50] = (40, 200, 90)  # BGR: the "person" inside the box
    source_path = tmp_path / "frame.png"
    cv2.imwrite(str(source_path), source)
    crop_path = tmp_path / "crop.png"
    cv2.imwrite(str(crop_path), source[10:60, 20:50])
    return source_path, crop_path


def make_item(source, crop_path, **extra):
    fields = dict(id="item-7", source=str(source), frame=None, time=83.4, camera="gate", box=BOX, track=3,
                  source_sha256=sha256_file(source) if source.exists() else None,
                  crop_sha256=sha256_file(crop_path) if crop_path else None, resolution="MR",
                  crop="crops/x.png", modality="rgb", identity="p9")
    fields.update(extra)
    return GalleryItem(**fields)


@pytest.fixture
def pane(qtbot):
    widget = DetailPane()
    qtbot.addWidget(widget)
    widget.resize(700, 760)
    widget.show()
    yield widget
    widget.wait()


def show(qtbot, pane, item, crop_path, **kwargs):
    with qtbot.waitSignal(pane.loaded, timeout=5000) as loaded:
        pane.set_item(item, crop_path, **kwargs)
    return loaded.args[0]


def test_metadata_and_source_image_with_the_box(qtbot, pane, files):
    source, crop = files
    item = make_item(source, crop)
    status = show(qtbot, pane, item, crop, score=0.6123, mark=CONFIRMED)
    assert status == "Source image" == pane.source_status()
    shown = pane.metadata()
    assert shown["Score"] == "0.612" and shown["Camera"] == "gate" and shown["Time"] == format_time(83.4)
    assert shown["Source"] == str(source) and shown["Frame"] == "—" and shown["Track"] == "3"
    assert shown["Box"] == "x 20, y 10, 30 × 50 px"
    assert shown["Resolution"] == "MR · 30 × 50 px crop"
    assert shown["Crop SHA-256"] == item.crop_sha256 and shown["Crop check"] == "✓ file matches its SHA-256"
    assert shown["Source SHA-256"] == item.source_sha256 and shown["Identity"] == "p9"
    assert pane.title.text() == "item-7" and pane.mark() == CONFIRMED and pane.mark_chip.isVisibleTo(pane)

    pane.resize(220, pane.height())  # a narrow pane: long values elide to fit, the full text stays available
    pane.show()
    qtbot.waitExposed(pane)
    source_label = pane.values["Source"]
    assert "…" in source_label.text() and source_label.toolTip() == str(source)
    assert source_label.fontMetrics().horizontalAdvance(source_label.text()) <= max(40, source_label.width())
    assert pane.metadata()["Source"] == str(source)

    frame = pane.source_image()
    assert (frame.width(), frame.height()) == (120, 80)
    assert rgb_at(frame, 20, 30) == BOX_COLOR  # left edge of the box
    assert rgb_at(frame, 49, 30) == BOX_COLOR  # right edge (x + w − 1)
    assert rgb_at(frame, 35, 10) == BOX_COLOR  # top edge
    assert rgb_at(frame, 35, 35) == (90, 200, 40)  # inside: untouched (RGB)
    dim = int(GREY * OUTSIDE_DIM)
    assert rgb_at(frame, 100, 70) == (dim, dim, dim)  # outside: dimmed
    crop_image = pane.crop_image()
    assert (crop_image.width(), crop_image.height()) == (30, 50)


def test_video_source_is_read_at_the_items_frame(qtbot, pane, tmp_path):
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (64, 48))
    assert writer.isOpened()
    for index in range(8):
        writer.write(np.full((48, 64, 3), 30 * index, dtype=np.uint8))
    writer.release()
    image, status = read_source_frame(str(path), 5)
    assert status == "Frame 5 of clip.avi" and abs(int(image[40, 60, 0]) - 150) <= 6
    item = make_item(path, None, frame=5, box=(2.0, 2.0, 10.0, 20.0), crop=None, crop_sha256=None)
    status = show(qtbot, pane, item, None)
    assert status == "Frame 5 of clip.avi"
    frame = pane.source_image()
    assert rgb_at(frame, 2, 10) == BOX_COLOR
    assert abs(rgb_at(frame, 60, 40)[0] - int(150 * OUTSIDE_DIM)) <= 5
    assert pane.crop_view.note() == "This item has no crop file."
    _, past_end = read_source_frame(str(path), 50)
    assert "frame 50" in past_end.lower()


def test_missing_source_is_said_not_shown(qtbot, pane, files, tmp_path):
    _, crop = files
    gone = tmp_path / "gone.mp4"
    status = show(qtbot, pane, make_item(gone, crop), crop)
    assert status.startswith("Source not available") and str(gone) in status
    assert pane.source_image() is None and pane.frame_view.note() == status
    assert pane.crop_image() is not None
    show(qtbot, pane, make_item(gone, crop), tmp_path / "no-crop.png")
    assert pane.crop_image() is None and pane.metadata()["Crop check"] == "✗ crop file missing or unreadable"
    assert pane.crop_view.note() == "Crop not available:\nno-crop.png"


def test_a_missing_source_whose_hash_is_the_crops_shows_the_crop(qtbot, pane, files, tmp_path):
    _, crop = files
    gone = tmp_path / "images" / "p1_0.png"  # a built world's image, not on this computer
    item = make_item(gone, crop, source_sha256=sha256_file(crop), box=None)
    status = show(qtbot, pane, item, crop)
    assert status.startswith("Source image (the crop is the source: same SHA-256; p1_0.png")
    assert pane.source_image() is not None
    other = make_item(gone, crop, source_sha256="1" * 64)
    assert show(qtbot, pane, other, crop).startswith("Source not available")


def test_a_changed_crop_file_fails_the_hash_check(qtbot, pane, files):
    source, crop = files
    item = make_item(source, crop, crop_sha256="0" * 64)
    show(qtbot, pane, item, crop)
    assert pane.metadata()["Crop check"] == f"✗ file differs (its SHA-256 is {sha256_file(crop)[:12]}…)"
    assert sha256_file(crop) in pane.values["Crop check"].toolTip()


def test_buttons_emit_marks_and_find_similar(qtbot, pane, files):
    source, crop = files
    show(qtbot, pane, make_item(source, crop), crop)
    with qtbot.waitSignal(pane.marks_changed) as marked:
        pane.reject_button.click()
    assert marked.args == [["item-7"], REJECTED] and pane.mark() == REJECTED
    assert pane.mark_chip.text() == "Rejected"
    with qtbot.waitSignal(pane.marks_changed) as marked:
        pane.confirm_button.click()
    assert marked.args == [["item-7"], CONFIRMED]
    with qtbot.waitSignal(pane.find_similar_requested) as similar:
        pane.similar_button.click()
    assert similar.args == ["item-7"]
    with qtbot.waitSignal(pane.find_similar_across_outfits_requested) as across:
        pane.other_clothes_button.click()
    assert across.args == ["item-7"]
    pane.clear()
    assert not pane.other_clothes_button.isEnabled()
    assert not pane.confirm_button.isEnabled() and pane.item_id() is None and pane.metadata()["Camera"] == ""


def test_a_newer_item_wins_over_a_slower_older_load(qtbot, pane, files, tmp_path):
    source, crop = files
    pane.set_item(make_item(tmp_path / "nowhere.png", crop, id="old"), crop)
    status = show(qtbot, pane, make_item(source, crop, id="new"), crop)
    pane.wait()
    qtbot.wait(20)
    assert status == "Source image" and pane.item_id() == "new" and pane.source_status() == "Source image"


def test_bad_input_is_named(pane):
    with pytest.raises(DetailInputError, match="needs a GalleryItem"):
        pane.set_item({"id": "x"})


def test_draw_box_clips_to_the_image():
    image = np.full((20, 20, 3), 100, dtype=np.uint8)
    out = draw_box(image, (-5.0, -5.0, 100.0, 100.0))
    assert tuple(out[0, 0]) == BOX_COLOR and tuple(out[10, 10]) == (100, 100, 100)
    assert (draw_box(image, None) == image).all()
