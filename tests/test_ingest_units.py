"""Ingest parts in isolation: resolution levels, times and sidecars, sharpness and sample spread, item ids,
box helpers, option parsing, the tracker on hand-made boxes."""

import json
from datetime import UTC, datetime

import cv2
import numpy as np
import pytest

from engine.ingest import (
    Detections,
    DetectorError,
    IngestError,
    IngestOptions,
    TrackerSettings,
    item_id,
    level_of_height,
    make_detector,
    parse_scenarios,
    parse_size,
)
from engine.ingest.samples import Candidate, TrackSamples, sharpness
from engine.ingest.timing import Stamp, parse_time, read_image_sidecar, read_video_sidecar, stamp_from_name
from engine.ingest.tracking import PersonTracker, SeparateDetections
from engine.perception.detection.detectors import clip_boxes, suppress

T0 = datetime(2024, 5, 6, 10, 15, 30, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(("height", "level"), [
    (1000, "HR"), (256, "HR"), (192, "HR"), (191.9, "mild"), (128, "mild"), (96, "mild"), (95, "mid"),
    (64, "mid"), (48, "mid"), (47, "ultra"), (32, "ultra"), (1, "ultra"),
])
def test_resolution_level_boundaries_sit_between_world_heights(height, level):
    assert level_of_height(height) == level


@pytest.mark.parametrize("bad", [0, -3, float("nan"), True, "64"])
def test_resolution_level_rejects_non_heights(bad):
    with pytest.raises(ValueError, match="crop height"):
        level_of_height(bad)


@pytest.mark.parametrize("text", ["2024-05-06T10:15:30", "2024-05-06 10:15:30", "20240506T101530",
                                  "2024-05-06T12:15:30+02:00", str(T0), T0])
def test_time_spellings_agree(text):
    assert parse_time(text, "t") == pytest.approx(T0)


def test_time_fractions_and_errors():
    assert parse_time("20240506T101530.250", "t") == pytest.approx(T0 + 0.25)
    for bad in ["yesterday", "", None, float("inf"), True]:
        with pytest.raises(IngestError, match="where"):
            parse_time(bad, "where")


def test_camera_and_time_from_file_names(tmp_path):
    assert stamp_from_name(tmp_path / "cam01_20240506T101530.mp4") == Stamp("cam01", T0)
    assert stamp_from_name(tmp_path / "gate-2_2024-05-06T10-15-30_extra.jpg") == Stamp("gate-2", T0)
    assert stamp_from_name(tmp_path / f"c7_{int(T0)}.png") == Stamp("c7", T0)
    assert stamp_from_name(tmp_path / "frame_000123.jpg") == Stamp()
    assert stamp_from_name(tmp_path / "holiday.jpg") == Stamp()


def test_image_sidecars_csv_and_json(tmp_path):
    (tmp_path / "sidecar.csv").write_text("file,camera,time\na.jpg,cam03,2024-05-06T10:15:30\nb.jpg,,12.5\n")
    assert read_image_sidecar(tmp_path) == {"a.jpg": Stamp("cam03", T0), "b.jpg": Stamp(None, 12.5)}
    other = tmp_path / "j"
    other.mkdir()
    (other / "sidecar.json").write_text(json.dumps({"a.jpg": {"camera": "x", "time": 3}}))
    assert read_image_sidecar(other) == {"a.jpg": Stamp("x", 3.0)}
    (other / "sidecar.json").write_text(json.dumps([{"file": "b.jpg", "time": "soon"}]))
    with pytest.raises(IngestError, match="sidecar.json entry 0: time"):
        read_image_sidecar(other)
    empty = tmp_path / "e"
    empty.mkdir()
    assert read_image_sidecar(empty) is None
    (empty / "sidecar.csv").write_text("name,camera\na.jpg,c\n")
    with pytest.raises(IngestError, match="'file' column"):
        read_image_sidecar(empty)


def test_video_sidecar(tmp_path):
    video = tmp_path / "clip.mp4"
    assert read_video_sidecar(video) == Stamp()
    (tmp_path / "clip.mp4.json").write_text(json.dumps({"camera": "lobby", "start": "2024-05-06T10:15:30"}))
    assert read_video_sidecar(video) == Stamp("lobby", T0)


def test_sharpness_prefers_focus_and_is_size_normalised():
    rng = np.random.default_rng(0)
    sharp = (rng.random((160, 80, 3)) * 255).astype(np.uint8)
    blurred = cv2.GaussianBlur(sharp, (0, 0), 3)
    assert sharpness(sharp) > 5 * sharpness(blurred)
    big = cv2.resize(sharp, (160, 320), interpolation=cv2.INTER_NEAREST)
    same = cv2.resize(big, (64, 128), interpolation=cv2.INTER_AREA)
    assert sharpness(big) == pytest.approx(sharpness(same), rel=1e-3)
    assert sharpness(np.zeros((0, 5, 3), np.uint8)) == 0.0


def _candidate(frame: int, sharp: float) -> Candidate:
    return Candidate(frame, (0.0, 0.0, 1.0, 1.0), 1.0, sharp, np.zeros((1, 1, 3), np.uint8))


def test_track_samples_spread_over_time_and_pick_the_sharpest_in_each_part():
    reservoir = TrackSamples(keep=3)
    sharp_frames = {10, 50, 90}
    for frame in range(100):
        reservoir.offer(_candidate(frame, 10.0 if frame in sharp_frames else float(frame % 7)))
        assert len(reservoir._slots) <= 2 * 3 + 1
    assert [c.frame for c in reservoir.picked()] == [10, 50, 90]
    assert reservoir.seen == 100


def test_track_samples_short_tracks_and_single_sample():
    short = TrackSamples(keep=3)
    for frame in range(2):
        short.offer(_candidate(frame, 1.0))
    assert [c.frame for c in short.picked()] == [0, 1]
    single = TrackSamples(keep=1)
    for frame, value in enumerate([1, 5, 3, 9, 2]):
        single.offer(_candidate(frame, value))
    assert [c.frame for c in single.picked()] == [3]
    assert TrackSamples(2).picked() == []
    with pytest.raises(ValueError, match="at least 1"):
        TrackSamples(0)


def test_item_ids_are_deterministic_and_tell_inputs_apart():
    sha = "ab" * 32
    base = item_id(sha, 3, 1, (1.0, 2.0, 3.0, 4.0))
    assert base == item_id(sha, 3, 1, (1.0, 2.0, 3.0, 4.0)) and base.startswith(sha[:16] + "-")
    variants = {item_id(sha, 4, 1, (1, 2, 3, 4)), item_id(sha, 3, 2, (1, 2, 3, 4)), item_id(sha, 3, 1, (1, 2, 3, 5)),
                item_id("cd" * 32, 3, 1, (1, 2, 3, 4)), item_id(sha, None, None, (1, 2, 3, 4))}
    assert base not in variants and len(variants) == 5


def test_clip_and_suppress():
    clipped = clip_boxes(np.array([[-10, -5, 30, 20], [90, 90, 50, 50]], np.float32), 100, 100)
    assert clipped.tolist() == [[0, 0, 20, 15], [90, 90, 10, 10]]
    boxes = np.array([[0, 0, 10, 20], [1, 1, 10, 20], [50, 50, 10, 20], [0, 0, 0, 5]], np.float32)
    kept = suppress(boxes, np.array([0.5, 0.9, 0.3, 1.0], np.float32), iou=0.5)
    assert kept.boxes.tolist() == [[1, 1, 10, 20], [50, 50, 10, 20]]
    assert kept.scores.tolist() == pytest.approx([0.9, 0.3])
    assert len(suppress(boxes, np.array([0.1, 0.2, 0.3, 0.4], np.float32), iou=0.5, min_score=0.35)) == 0
    with pytest.raises(DetectorError, match="one score per box"):
        Detections(np.zeros((2, 4)), np.zeros(3))


def test_option_parsing_and_validation():
    assert parse_size("320x240") == (320, 240) and parse_size(" 64 X 32 ") == (64, 32)
    for bad in ["320", "0x5", "axb", ""]:
        with pytest.raises(DetectorError, match="640x640"):
            parse_size(bad)
    assert parse_scenarios("all")[0] == "DT-ST" and len(parse_scenarios("all")) == 6
    assert parse_scenarios("none") == () and parse_scenarios("ad-lt, DT-ST,AD-LT") == ("AD-LT", "DT-ST")
    with pytest.raises(IngestError, match="unknown re-identification"):
        parse_scenarios("AD-XX")
    with pytest.raises(DetectorError, match="unknown detector"):
        make_detector("yolo")
    with pytest.raises(DetectorError, match="does not exist"):
        make_detector("/nowhere/model.onnx")
    with pytest.raises(DetectorError, match="unexpected keyword"):
        make_detector("hog", input_size=(3, 3))
    for bad in [dict(stride=0), dict(samples_per_track=0), dict(modality="thermal"), dict(min_box_height=0),
                dict(batch_size=0), dict(camera=" ")]:
        with pytest.raises(IngestError):
            IngestOptions(**bad)
    with pytest.raises(IngestError, match="confirm_hits"):
        TrackerSettings(confirm_hits=20, max_missed=5)


def _boxes(*rows) -> Detections:
    return Detections(np.array(rows, np.float32).reshape(-1, 4), np.ones(len(rows), np.float32))


def test_tracker_follows_two_walkers_and_drops_a_blip():
    tracker = PersonTracker(TrackerSettings(min_iou=0.3, max_missed=3, confirm_hits=2))
    matched: dict[int, list[int]] = {}
    numbers: dict[int, int] = {}
    ended: list[int] = []
    for frame in range(12):
        rows = [(10 + 4 * frame, 20, 40, 100), (300 - 4 * frame, 30, 40, 100)]
        if frame == 5:
            rows.append((200, 200, 30, 60))  # a one-frame false alarm
        step = tracker.update(_boxes(*rows))
        for key, index in step.matches:
            matched.setdefault(key, []).append(index)
        numbers.update(step.tracks)
        ended += step.ended
    ended += tracker.finish()
    assert sorted(numbers.values()) == [1, 2]
    walkers = [k for k in matched if k in numbers]
    assert all(len(matched[k]) == 12 for k in walkers)  # the first (unconfirmed) detections count too
    blip = [k for k in matched if k not in numbers]
    assert len(blip) == 1 and matched[blip[0]] == [2]
    assert sorted(ended) == sorted(matched)


def test_tracker_reset_restarts_numbers_and_separate_detections():
    tracker = PersonTracker(TrackerSettings(confirm_hits=1))
    assert tracker.update(_boxes((0, 0, 10, 20))).tracks
    tracker.reset()
    assert list(tracker.update(_boxes((50, 50, 10, 20))).tracks.values()) == [1]
    separate = SeparateDetections()
    step = separate.update(_boxes((0, 0, 10, 20), (30, 0, 10, 20)))
    assert step.matches == [(0, 0), (1, 1)] and step.tracks == {0: None, 1: None} and step.ended == [0, 1]
    assert separate.update(_boxes((0, 0, 10, 20))).matches == [(2, 0)] and separate.finish() == []
