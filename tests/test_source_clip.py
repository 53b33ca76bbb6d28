"""The frames of a source around a frame (engine/ingest/source_clip.py): a video's frames within N seconds with
their video and wall-clock times, an image's neighbours in its folder's order, and named errors."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from indexed_video import index_of, write_indexed

from engine.ingest.source_clip import ClipError, ImageClip, VideoClip, open_clip


def test_a_video_clip_spans_n_seconds_either_side_with_both_clocks(tmp_path):
    path = write_indexed(tmp_path / "clip.avi", 200, fps=10.0)
    clip = open_clip(path, 50, seconds=3, time=1_700_000_000.0)
    assert isinstance(clip, VideoClip) and (clip.first, clip.start, clip.last, clip.fps) == (20, 50, 80, 10.0)
    frame = clip.read(52)
    assert index_of(frame.image) == 52 and frame.video_time == pytest.approx(5.2)
    assert frame.wall_time == pytest.approx(1_700_000_000.2)
    assert index_of(clip.read(20).image) == 20 and index_of(clip.read(80).image) == 80
    with pytest.raises(ClipError, match="frame 81 is outside the clip .20–80."):
        clip.read(81)
    clip.close()
    edge = open_clip(path, 195, seconds=3)
    assert (edge.first, edge.last) == (165, 199) and edge.read(199).wall_time is None
    edge.close()


def test_a_frame_past_the_end_and_a_missing_file_are_named(tmp_path):
    path = write_indexed(tmp_path / "clip.avi", 20)
    with pytest.raises(ClipError, match=r"clip\.avi: it has 20 frames; the item's frame 25 is past its end"):
        open_clip(path, 25)
    with pytest.raises(ClipError, match=r"gone\.mp4: does not exist on this computer"):
        open_clip(tmp_path / "gone.mp4", 3)
    with pytest.raises(ClipError, match=r"gone\.png: does not exist on this computer"):
        open_clip(tmp_path / "gone.png", None)
    with pytest.raises(ClipError, match="seconds ≥ 0"):
        open_clip(path, 1, seconds=-1)


def test_an_image_clip_is_its_folders_neighbours_in_ingest_order(tmp_path):
    folder = tmp_path / "cam3"
    folder.mkdir()
    for index in range(30):  # names sort naturally: img_2 before img_10
        cv2.imwrite(str(folder / f"img_{index}.png"), np.full((8, 8, 3), index * 8, np.uint8))
    clip = open_clip(folder / "img_12.png", None, time=1_700_000_000.0)
    assert isinstance(clip, ImageClip) and (clip.first, clip.start, clip.last) == (2, 12, 22)
    assert clip.file_at(13).name == "img_13.png" and clip.position_of(folder / "img_3.png") == 3
    assert clip.position_of(folder / "img_29.png") is None  # outside the clip
    assert int(clip.read(13).image[0, 0, 0]) == 13 * 8 and clip.read(12).wall_time == 1_700_000_000.0


def test_images_with_times_in_their_names_are_neighbours_within_n_seconds(tmp_path):
    folder = tmp_path / "gate"
    folder.mkdir()
    for second in (0, 1, 2, 5, 6, 9, 30):
        cv2.imwrite(str(folder / f"gate_20240506T1015{second:02d}.png"), np.zeros((4, 4, 3), np.uint8))
    clip = open_clip(folder / "gate_20240506T101505.png", None, seconds=3)
    names = [clip.file_at(p).name[-10:-4] for p in range(clip.first, clip.last + 1)]
    assert names == ["101502", "101505", "101506"]
    assert clip.read(clip.start + 1).wall_time - clip.read(clip.start).wall_time == pytest.approx(1.0)
