"""The shipped OpenVINO person detectors (engine.perception.detection.openvino_ssd) as ``--detector`` choices: the
decoder
on hand-built ``detection_out`` arrays, tiles mapped back to frame pixels, named errors, the factory and CLI
names, and the real networks on frames of a real clip (skipped when ``LINEUP_FOOTAGE_DIR`` does not hold it)."""

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from footage_frames import has_clip, real_frame
from typer.testing import CliRunner

from engine.cli.detector_options import DETECTOR_HELP, MIN_SCORE_HELP, TILES_HELP
from engine.ingest import DetectorError
from engine.ingest.box_labels import load_box_labels, score_frame
from engine.kernel.boxes import iou_matrix
from engine.perception.detection.factory import DETECTORS, TILED, make_detector
from engine.perception.detection.openvino_ssd import SSD_DETECTORS, OpenVinoSsdDetector, decode_ssd
from engine.perception.pretrained.registry import shipped
from lineup.cli import app

LABELS = Path(__file__).parent / "data" / "footage" / "boxes.json"
WALKING = "face-demographics-walking.gif"
NAMES = sorted(SSD_DETECTORS)


def rows(*found: tuple) -> np.ndarray:
    return np.array(found, np.float32).reshape(1, 1, -1, 7)


def test_decoder_keeps_person_rows_up_to_the_padding_and_maps_them_to_frame_pixels():
    output = rows((0, 1, 0.9, 0.10, 0.20, 0.30, 0.60),   # a person
                  (0, 0, 0.95, 0.5, 0.5, 0.6, 0.7),       # another label: not a person for this network
                  (0, 1, 0.2, 0.5, 0.5, 0.6, 0.7),        # below min_score
                  (0, 1, 0.7, -0.10, 0.50, 0.40, 1.20),   # past the region's left and bottom edges
                  (-1, 0, 0, 0, 0, 0, 0),                 # the end of the list
                  (0, 1, 0.99, 0.1, 0.1, 0.2, 0.2))       # padding after it
    boxes, scores = decode_ssd(output, (100, 50, 200, 100), (400, 300), person_label=1, min_score=0.5)
    assert scores.tolist() == pytest.approx([0.9, 0.7])
    assert boxes[0] == pytest.approx([100 + 20, 50 + 20, 40, 40])
    # x from 100 − 20 = 80 (inside the frame) to 100 + 80; y from 100 to 50 + 120 = 170
    assert boxes[1] == pytest.approx([80, 100, 100, 70])
    # a region at the frame's corner: the box is clipped to the frame, not to the region
    boxes, _ = decode_ssd(output, (300, 200, 100, 100), (400, 300), person_label=1, min_score=0.5)
    assert boxes[1] == pytest.approx([290, 250, 50, 50])  # x 290–340, y 250–320 cut at 300
    # the label matters: network 0200 calls people 0
    _, scores = decode_ssd(output, (0, 0, 10, 10), (10, 10), person_label=0, min_score=0.5)
    assert scores.tolist() == pytest.approx([0.95])
    nothing, none = decode_ssd(rows((-1, 0, 0, 0, 0, 0, 0), (0, 1, 1, 0, 0, 1, 1)), (0, 0, 8, 8), (8, 8), 1, 0.1)
    assert nothing.shape == (0, 4) and none.shape == (0,)
    with pytest.raises(DetectorError, match=r"must be \[1, 1, K, 7\], got \[1, 200, 7\]"):
        decode_ssd(np.zeros((1, 200, 7), np.float32), (0, 0, 8, 8), (8, 8), 1, 0.5)


@pytest.mark.parametrize("name", NAMES)
def test_factory_and_registry_name_each_detector(name):
    detector = make_detector(name)
    assert isinstance(detector, OpenVinoSsdDetector) and detector.name == name
    settings = detector.settings()
    assert settings["name"] == name and settings["network"]["name"] == SSD_DETECTORS[name].network
    assert settings["min_score"] == SSD_DETECTORS[name].min_score and settings["tiles"] == "auto"
    _, height, width = shipped(SSD_DETECTORS[name].network).input
    assert detector.input_size == (width, height) and settings["input_size"] == [width, height]
    assert name in DETECTORS and name in TILED and name in DETECTOR_HELP and name in TILES_HELP
    assert f"{name} {SSD_DETECTORS[name].min_score:g}" in MIN_SCORE_HELP
    tuned = make_detector(name, min_score=0.3, tiles="2x3")
    assert tuned.settings()["min_score"] == 0.3 and tuned.settings()["tiles"] == "2x3"
    assert len(tuned.regions(1280, 720)) == 1 + 6


def test_every_registered_name_is_in_the_cli_help():
    assert all(name in DETECTOR_HELP for name in DETECTORS if name != "onnx")


@pytest.mark.parametrize(("options", "message"), [
    ({"min_score": 1.5}, "min_score must lie in"),
    ({"nms_iou": 0}, "nms_iou must lie in"),
    ({"tiles": "lots"}, "tiles must be auto, off or ROWSxCOLUMNS"),
    ({"tiles": "99x2"}, "at most 16 rows"),
    ({"tile_scale": -1.0}, "tile_scale must be positive"),
    ({"min_ratio": 0.5}, "min_ratio must be at least 1"),
    ({"foreground": True}, "unexpected keyword argument 'foreground'"),
])
def test_bad_options_name_the_detector(options, message):
    with pytest.raises(DetectorError, match=message) as caught:
        make_detector("adas-0002", **options)
    assert "'adas-0002'" in str(caught.value)


def test_an_unknown_network_is_named():
    with pytest.raises(DetectorError, match="no shipped OpenVINO detector is called 'retail-0014'"):
        OpenVinoSsdDetector("retail-0014")
    with pytest.raises(DetectorError, match="unknown detector 'retail-0014'"):
        make_detector("retail-0014")


def test_tiles_map_their_boxes_back_to_frame_pixels(monkeypatch):
    """A stand-in network that puts one person in the middle of whatever it is shown: the whole frame's box
    lands at the frame's centre and each tile's at that tile's centre, in frame pixels."""
    detector = make_detector("retail-0013", tiles="2x2")
    seen: list[tuple[int, int]] = []

    def infer(image):
        seen.append(image.shape[:2])
        return rows((0, 1, 0.9, 0.45, 0.40, 0.55, 0.60), (-1, 0, 0, 0, 0, 0, 0))

    monkeypatch.setattr(detector, "_infer", infer)
    frame = np.zeros((400, 600, 3), np.uint8)
    regions = detector.regions(600, 400)
    found = detector.detect(frame)
    assert len(regions) == 5 and regions[0] == (0, 0, 600, 400)
    assert seen == [(h, w) for _, _, w, h in regions]
    expected = sorted((x + 0.45 * w, y + 0.40 * h, 0.10 * w, 0.20 * h) for x, y, w, h in regions)
    got = sorted(map(tuple, found.boxes.tolist()))
    assert np.array(got) == pytest.approx(np.array(expected), abs=1e-3)
    assert found.scores.tolist() == pytest.approx([0.9] * 5)


def test_auto_tiles_follow_the_networks_input_shape():
    wide = make_detector("retail-0013", tiles="auto", min_ratio=3.0, tile_scale=1.0)
    tiles = wide.regions(1920, 1080)[1:]
    assert tiles and all(x + w <= 1920 and y + h <= 1080 for x, y, w, h in tiles)
    # tiles about the input's 544 × 320 (W × H): wider than tall, as the network's input
    assert all(w > h for _, _, w, h in tiles)
    assert wide.regions(480, 270) == [(0, 0, 480, 270)]
    # the defaults (docs/real-footage.md): 720p runs whole, 1080p gets 3 × 3 tiles (3 × 5 for person-0200)
    for name, passes in (("retail-0013", 10), ("adas-0002", 10), ("person-0200", 16)):
        detector = make_detector(name)
        assert len(detector.regions(1280, 720)) == 1 and len(detector.regions(1920, 1080)) == passes
    assert make_detector("retail-0013", tiles="off").regions(3840, 2160) == [(0, 0, 3840, 2160)]


@pytest.mark.parametrize("name", NAMES)
def test_each_network_finds_the_people_of_a_real_frame(name):
    frame = real_frame(WALKING, 0)
    truth = load_box_labels(LABELS)[WALKING].frames[0]
    detector = make_detector(name)
    found = detector.detect(frame)
    tally = score_frame(found.boxes, truth)
    assert tally.misses == 0 and tally.hits == sum(1 for label in truth if not label.ignore) >= 1
    assert (found.boxes[:, 0] >= 0).all() and (found.boxes[:, :2] + found.boxes[:, 2:] <= [480, 270]).all()
    assert (found.scores >= detector.min_score).all()
    # the same frame pasted into a grey canvas twice its size, inside the bottom-right one of 2 × 2 tiles (it
    # starts at 426, 240): the people are found where they were pasted
    canvas = np.full((540, 960, 3), 120, np.uint8)
    canvas[250:520, 440:920] = frame
    tiler = make_detector(name, tiles="2x2")
    assert tiler.regions(960, 540)[-1] == (426, 240, 534, 300)
    tiled = tiler.detect(canvas)
    moved = np.array([[x + 440, y + 250, w, h] for x, y, w, h in (label.box for label in truth
                                                                 if not label.ignore)], np.float32)
    assert (iou_matrix(moved, tiled.boxes).max(axis=1) >= 0.5).all()


def test_cli_detect_takes_the_openvino_detectors_with_their_options(tmp_path):
    folder = tmp_path / "frames"
    folder.mkdir()
    frame = real_frame(WALKING, 0) if has_clip(WALKING) else np.full((270, 480, 3), 90, np.uint8)
    cv2.imwrite(str(folder / "a.png"), frame)
    runner = CliRunner()
    result = runner.invoke(app, ["detect", str(folder), "--detector", "person-0200", "--min-score", "0.4",
                                 "--tiles", "off", "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.output.strip().splitlines()[-1])
    assert record["detector"]["name"] == "person-0200" and record["detector"]["min_score"] == 0.4
    assert record["detector"]["tiles"] == "off" and len(record["frames"]) == 1
    bad = runner.invoke(app, ["detect", str(folder), "--detector", "adas-0002", "--tiles", "lots"])
    assert bad.exit_code == 2 and "'adas-0002'" in bad.output and "tiles must be auto, off" in bad.output
    bad = runner.invoke(app, ["detect", str(folder), "--detector", "retail-0013", "--min-score", "2"])
    assert bad.exit_code == 2 and "'retail-0013'" in bad.output and "min_score must lie in [0, 1]" in bad.output
