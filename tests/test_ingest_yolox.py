"""The shipped detectors (engine.perception.detection.yolox, engine.perception.detection.darknet,
engine.perception.detection.tiles) and
``lineup detect``:
the YOLOX decoder on hand-built outputs, letterbox mapping, tile planning and merging, the real networks on a
frame of a real clip (skipped when ``LINEUP_FOOTAGE_DIR`` does not hold it), the CLI's JSON and its named errors."""

import json
import warnings
from pathlib import Path

import cv2
import numpy as np
import pytest
from footage_frames import has_clip, real_frame
from typer.testing import CliRunner

from engine.ingest import DetectorError, make_detector
from engine.ingest.box_labels import load_box_labels, score_frame
from engine.perception.detection.tiles import cut_by_tile, merge_passes, parse_tiles, plan_tiles
from engine.perception.detection.yolox import YoloxDetector, decode_yolox, input_shape, letterbox
from lineup.cli import app

LABELS = Path(__file__).parent / "data" / "footage" / "boxes.json"
WALKING = "face-demographics-walking.gif"


def test_decoder_puts_a_known_cell_at_its_box():
    net_w, net_h = 64, 32  # strides 8, 16, 32: 8×4 + 4×2 + 2×1 = 42 rows
    rows = np.zeros((1, 42, 5 + 3), np.float32)
    cell = 2 * 8 + 5  # stride 8, gy = 2, gx = 5
    rows[0, cell, :5] = (0.5, 0.25, np.log(3.0), np.log(6.0), 0.8)
    rows[0, cell, 5:] = (0.5, 0.1, 1.0)
    coarse = 32 + 4 + 1  # stride 16: gy = 1, gx = 1
    rows[0, coarse, :4] = (0.0, 0.0, 0.0, 0.0)
    boxes, scores = decode_yolox(rows, net_w, net_h)
    cx, cy, w, h = (5 + 0.5) * 8, (2 + 0.25) * 8, 3 * 8, 6 * 8
    assert boxes[cell] == pytest.approx([cx - w / 2, cy - h / 2, w, h])
    assert scores[cell] == pytest.approx([0.4, 0.08, 0.8])
    assert boxes[coarse] == pytest.approx([16 - 8, 16 - 8, 16, 16])
    with pytest.raises(DetectorError, match=r"expects output \[1, 42, 5 \+ C\]"):
        decode_yolox(rows[:, :40], net_w, net_h, "model.onnx")


def test_letterbox_keeps_the_aspect_and_pads_bottom_right():
    image = np.full((270, 480, 3), 200, np.uint8)
    canvas, scale = letterbox(image, 416)
    assert scale == pytest.approx(416 / 480) and canvas.shape == (256, 416, 3)  # 234 rows → next multiple of 32
    assert (canvas[:234] == 200).all() and (canvas[234:] == 114).all()
    assert input_shape(100, 300, 416)[1:] == (160, 416)


def test_a_box_maps_back_to_frame_pixels_through_letterbox_and_tile_offset():
    """A box in network pixels, divided by the letterbox scale and shifted by the region origin, is the box in
    the frame: the mapping ``YoloxDetector.detect`` applies."""
    frame = np.zeros((720, 1280, 3), np.uint8)
    region = (394, 320, 493, 400)
    crop = frame[320:720, 394:887]
    canvas, scale = letterbox(crop, 416)
    in_net = np.array([[100.0, 50.0, 40.0, 80.0]], np.float32)
    mapped = in_net / scale + np.array([region[0], region[1], 0, 0], np.float32)
    assert mapped[0] == pytest.approx([394 + 100 / scale, 320 + 50 / scale, 40 / scale, 80 / scale])
    assert canvas.shape[1] == 416


def test_tile_plans():
    assert plan_tiles(480, 270, "auto", 416) == []
    assert plan_tiles(1280, 720, "auto", 416) == []  # 720p runs whole: long side ≤ 3.5 × the input
    assert len(plan_tiles(1280, 720, (2, 4), 416)) == 8
    assert plan_tiles(1920, 1080, "off", 416) == []
    auto = plan_tiles(1920, 1080, "auto", 416)
    assert len(auto) == 18  # 3 rows × 6 columns of about 416 px
    for x, y, w, h in auto:
        assert x >= 0 and x + w <= 1920 and y >= 0 and y + h <= 1080
    columns = sorted({x for x, _, _, _ in auto})
    width = auto[0][2]
    assert all(b - a <= 0.8 * width + 1 for a, b in zip(columns, columns[1:], strict=False))  # ≥ 20 % overlap
    assert len(plan_tiles(1000, 600, parse_tiles("2x3"), 416)) == 6
    assert parse_tiles(" 2X3 ") == (2, 3)
    for bad in ("0x2", "two", "2x"):
        with pytest.raises(DetectorError, match="tiles must be"):
            parse_tiles(bad)


def test_a_person_split_across_two_tiles_becomes_one_box():
    width, height = 1000, 400
    left, right = (0, 0, 560, 400), (440, 0, 560, 400)
    pieces = np.array([[520, 100, 40, 120], [440, 102, 100, 118]], np.float32)  # each cut by its tile's inner edge
    assert cut_by_tile(pieces[:1], left, width, height)[0] and cut_by_tile(pieces[1:], right, width, height)[0]
    merged = merge_passes(pieces, np.array([0.6, 0.7]), np.array([1, 2]), np.array([True, True]), 0.45)
    assert len(merged) == 1 and merged.boxes[0] == pytest.approx([440, 100, 120, 120])
    assert merged.scores[0] == pytest.approx(0.7)
    # the whole frame found the person: the cut pieces go; an uncut person elsewhere stays
    boxes = np.vstack([pieces, [[445, 98, 118, 125], [50, 50, 30, 80]]]).astype(np.float32)
    merged = merge_passes(boxes, np.array([0.6, 0.7, 0.5, 0.4]), np.array([1, 2, 0, 1]),
                          np.array([True, True, False, False]), 0.45)
    assert sorted(map(tuple, merged.boxes.round().tolist())) == [(50, 50, 30, 80), (445, 98, 118, 125)]


@pytest.mark.parametrize("name", ["yolox", "fast"])
def test_shipped_detector_finds_the_people_of_a_real_frame(name):
    clip = load_box_labels(LABELS)[WALKING]
    index = next(i for i, boxes in clip.frames.items() if len([b for b in boxes if not b.ignore]) == 2)
    found = make_detector(name).detect(real_frame(WALKING, index))
    tally = score_frame(found.boxes, clip.frames[index])
    assert tally.hits == 2 and tally.false_positives == 0, tally.to_dict()


def test_tiles_find_small_people_the_whole_frame_misses():
    """The labelled frame shrunk to people ~75 px tall, pasted 4 × 4 times on a 1920×1080 canvas."""
    clip = load_box_labels(LABELS)[WALKING]
    index = next(i for i, boxes in clip.frames.items() if len([b for b in boxes if not b.ignore]) == 2)
    small = cv2.resize(real_frame(WALKING, index), None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
    canvas = np.full((1080, 1920, 3), 120, np.uint8)
    labels = []
    for row in range(4):
        for column in range(4):
            x0, y0 = column * 480 + 20, row * 270 + 20
            canvas[y0 : y0 + small.shape[0], x0 : x0 + small.shape[1]] = small
            labels += [type(b)((x0 + b.box[0] * 0.5, y0 + b.box[1] * 0.5, b.box[2] * 0.5, b.box[3] * 0.5), b.person)
                       for b in clip.frames[index] if not b.ignore]
    tiled = score_frame(make_detector("yolox", tiles="auto").detect(canvas).boxes, labels)
    whole = score_frame(make_detector("yolox", tiles="off").detect(canvas).boxes, labels)
    assert tiled.recall >= 0.5 and tiled.precision >= 0.9, tiled.to_dict()
    assert tiled.recall > whole.recall + 0.3, (tiled.to_dict(), whole.to_dict())


def test_yolox_on_video_hands_a_foreground_mask_and_warms_up():
    detector = make_detector("auto", foreground=True)
    frames = [real_frame(WALKING, 0)] * 3
    detector.reset()
    assert detector.warm_up(iter(frames)) == 3
    found = detector.detect(frames[0])
    assert found.foreground is not None and found.foreground.shape == frames[0].shape[:2]
    assert found.objects is not None
    assert make_detector("yolox").warm_up(iter(())) == 0 and make_detector("yolox").detect(frames[0]).foreground is None


# ------------------------------------------------------------------------------------------ lineup detect


def small_footage(tmp_path: Path) -> tuple[Path, Path]:
    """A 6-frame AVI and a 3-image folder; the person (a shrunk real frame when the clips exist, else nobody)
    shows in some frames only, the rest are empty grey."""
    person = real_frame(WALKING, 0) if has_clip(WALKING) else None
    grey = np.full((270, 480, 3), 90, np.uint8)
    video = tmp_path / "cam01.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 5, (480, 270))
    for k in range(6):
        writer.write(person if person is not None and k < 3 else grey)
    writer.release()
    folder = tmp_path / "stills"
    folder.mkdir()
    for k in range(3):
        cv2.imwrite(str(folder / f"img{k}.png"), person if person is not None and k == 0 else grey)
    return video, folder


def run_detect(*args: str):
    return CliRunner().invoke(app, ["detect", *args])


def test_detect_json_lists_every_frame_of_a_video_and_of_an_image_folder(tmp_path):
    video, folder = small_footage(tmp_path)
    result = run_detect(str(video), "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert set(out) == {"source", "detector", "frames"} and out["detector"]["name"] == "yolox"
    assert [f["frame"] for f in out["frames"]] == list(range(6))
    for record in out["frames"]:
        assert set(record) == {"frame", "file", "time", "boxes", "objects"} and record["file"] is None
        assert record["time"] == pytest.approx(record["frame"] / 5)
        for box in record["boxes"]:
            assert set(box) == {"box", "score"} and len(box["box"]) == 4 and 0 < box["score"] <= 1
    assert all(not f["boxes"] for f in out["frames"][3:])  # grey frames: empty, but listed
    if has_clip(WALKING):
        assert all(len(f["boxes"]) == 2 for f in out["frames"][:3])
    result = run_detect(str(folder), "--json", "--detector", "fast", "--stride", "2")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert [(f["frame"], f["file"]) for f in out["frames"]] == [(0, "img0.png"), (2, "img2.png")]
    assert out["detector"]["name"] == "fast" and out["frames"][1]["boxes"] == []
    summary = run_detect(str(folder))
    assert summary.exit_code == 0 and "3 frames" in summary.stdout


def tiny_onnx(path: Path) -> Path:
    import torch

    class Wrong(torch.nn.Module):
        def forward(self, image):
            return image.mean(dim=(2, 3))  # [1, 3]: no detector layout at all

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Wrong().eval(), torch.zeros(1, 3, 64, 64), str(path), dynamo=False, opset_version=13,
                          input_names=["images"], output_names=["out"])
    return path


def test_detect_names_its_errors(tmp_path):
    video, _ = small_footage(tmp_path)
    missing = run_detect(str(tmp_path / "nowhere.mp4"), "--json")
    assert missing.exit_code == 2 and "does not exist" in missing.output
    unknown = run_detect(str(video), "--detector", "yolo")
    assert unknown.exit_code == 2 and "unknown detector 'yolo'" in unknown.output
    wrong = tiny_onnx(tmp_path / "wrong.onnx")
    bad = run_detect(str(video), "--detector", str(wrong), "--onnx-layout", "yolox")
    assert bad.exit_code == 2 and "layout 'yolox' expects output" in bad.output and "wrong.onnx" in bad.output
    with pytest.raises(DetectorError, match="does not exist"):
        YoloxDetector(tmp_path / "absent.onnx")
    tiles = run_detect(str(video), "--detector", "hog", "--tiles", "2x2")
    assert tiles.exit_code == 2 and "--tiles applies to the tiling detectors" in tiles.output and "hog" in tiles.output
    bad_tiles = run_detect(str(video), "--tiles", "lots")
    assert bad_tiles.exit_code == 2 and "tiles must be auto, off or ROWSxCOLUMNS" in bad_tiles.output


def test_ingest_takes_the_tiling_of_its_default_detector(tmp_path):
    video, _ = small_footage(tmp_path)
    bad = CliRunner().invoke(app, ["ingest", str(video), "--gallery", str(tmp_path / "g"), "--tiles", "0x2"])
    assert bad.exit_code == 2 and "tiles must be auto, off or ROWSxCOLUMNS" in bad.output
    assert not (tmp_path / "g").exists()
    from engine.ingest.options import IngestOptions
    from engine.ingest.reader import SourceReader as _Reader

    reader = _Reader([], tmp_path, set(), None, IngestOptions(tiles="2x3"), None, lambda done, total: None)
    detector = reader.detector_for(type("Video", (), {"kind": "video"})())
    assert detector.settings()["tiles"] == "2x3" and detector.settings()["foreground"]


@pytest.mark.parametrize(("layout", "message"), [("yolov8", "gives 8396 classes, so it is not the 'yolov8' layout"),
                                                 ("yolo", "that is the 'yolox' layout")])
def test_a_real_detector_declared_with_the_wrong_layout_is_refused_when_built(layout, message):
    from engine.perception.detection.yolox import shipped_yolox

    with pytest.raises(DetectorError, match=message):
        make_detector(str(shipped_yolox()), layout=layout, input_size=(640, 640))
