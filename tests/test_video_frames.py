"""Frames of a video by exact index (engine/kernel/video_frames.py): frame k read is the k-th frame decoded
whatever the order of reads and the codec, a seek that lands elsewhere falls back to reading forward, and
every bad input is named."""

from __future__ import annotations

import random

import cv2
import numpy as np
import pytest
from indexed_video import index_of, write_indexed

from engine.kernel.video_frames import VideoFrames, VideoInputError, VideoStopped
from engine.retrieval.evidence.items import FrameCursor

FRAMES = 240


@pytest.mark.parametrize(("name", "fourcc"), [("clip.avi", "MJPG"), ("clip.mp4", "mp4v"), ("clip.avi", "XVID"),
                                              ("clip.gif", "")])
def test_frame_k_is_frame_k_in_any_order(tmp_path, name, fourcc):
    frames = 90 if name.endswith(".gif") else FRAMES
    path = write_indexed(tmp_path / name, frames, fourcc=fourcc)
    rng = random.Random(7)
    order = [rng.randrange(frames) for _ in range(40)] + list(range(60, 75)) + list(range(70, 55, -1)) + [0, frames - 1]
    with VideoFrames(path) as video:
        assert video.size == (160, 96) and video.count == frames and video.fps == pytest.approx(25.0, abs=0.1)
        for k in order:
            assert index_of(video.read(k)) == k, f"{name}: asked for frame {k}"


class LyingCapture:
    """A capture whose seeks land ``off`` frames after the one asked for (some codecs do); with ``lies`` it
    also reports, until the next read, standing where it was asked to."""

    def __init__(self, capture: cv2.VideoCapture, off: int, lies: bool) -> None:
        self._capture, self._off, self._lies = capture, off, lies
        self._claimed = None

    def set(self, prop, value):
        assert prop == cv2.CAP_PROP_POS_FRAMES
        self._claimed = int(value) if self._lies else None
        return self._capture.set(prop, value + self._off)

    def get(self, prop):
        if prop == cv2.CAP_PROP_POS_FRAMES and self._claimed is not None:
            return float(self._claimed)
        return self._capture.get(prop)

    def read(self):
        self._claimed = None
        return self._capture.read()

    def grab(self):
        self._claimed = None
        return self._capture.grab()

    def __getattr__(self, name):
        return getattr(self._capture, name)


@pytest.mark.parametrize("lies", [False, True], ids=["says-where-it-landed", "says-where-it-was-asked"])
def test_a_seek_that_lands_elsewhere_falls_back_to_reading_forward(tmp_path, monkeypatch, lies):
    path = write_indexed(tmp_path / "clip.avi", FRAMES)
    opened = VideoFrames._open

    def lying(self):
        return LyingCapture(opened(self), off=5, lies=lies)

    monkeypatch.setattr(VideoFrames, "_open", lying)
    with VideoFrames(path) as video:
        assert index_of(video.read(200)) == 200
        assert not video.seeks  # the capture reported another position: never trusted again
        assert index_of(video.read(120)) == 120 and index_of(video.read(121)) == 121


def test_the_frame_cursor_of_the_evidence_reads_through_it(tmp_path):
    path = write_indexed(tmp_path / "clip.avi", FRAMES)
    cursor = FrameCursor(str(path))
    assert [index_of(cursor.get(k)) for k in (150, 3, 151)] == [150, 3, 151]
    assert cursor.get(FRAMES + 5) is None
    cursor.close()


def test_bad_inputs_are_named(tmp_path, monkeypatch):
    with pytest.raises(VideoInputError, match=r"gone\.mp4: does not exist"):
        VideoFrames(tmp_path / "gone.mp4")
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"not a video at all")
    with pytest.raises(VideoInputError, match=r"junk\.mp4: cannot be opened as a video"):
        VideoFrames(junk)
    path = write_indexed(tmp_path / "clip.avi", 12)
    with pytest.raises(VideoInputError, match="over the limit of 1,000 .LINEUP_MAX_IMAGE_PIXELS"):
        VideoFrames(path, max_pixels=1000)
    monkeypatch.setenv("LINEUP_MAX_IMAGE_PIXELS", "5000")
    with pytest.raises(VideoInputError, match="15,360 pixels"):
        VideoFrames(path)
    monkeypatch.delenv("LINEUP_MAX_IMAGE_PIXELS")
    with VideoFrames(path) as video:
        with pytest.raises(VideoInputError, match=r"clip\.avi: ends before frame 40 \(it has 12 frames\)"):
            video.read(40)
        with pytest.raises(VideoInputError, match="whole number ≥ 0, got -1"):
            video.read(-1)
        assert index_of(video.read(11)) == 11  # still usable after a read past the end


def test_a_long_forward_read_stops_when_asked(tmp_path, monkeypatch):
    path = write_indexed(tmp_path / "clip.avi", FRAMES)
    opened = VideoFrames._open
    monkeypatch.setattr(VideoFrames, "_open", lambda self: LyingCapture(opened(self), off=3, lies=False))
    with VideoFrames(path) as video:
        assert index_of(video.read(100)) == 100 and not video.seeks  # from now on, reads go forward from 0
        calls = []
        with pytest.raises(VideoStopped):
            video.read(200, stop=lambda: calls.append(1) or len(calls) > 2)
        assert len(calls) == 3
        assert isinstance(video.read(5), np.ndarray)
