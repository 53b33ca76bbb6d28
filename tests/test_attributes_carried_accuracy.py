"""Scoring carried-objects evidence against labels (engine/lab/evaluation/carried_accuracy.py) and the bench that
runs it (bench/attribute_accuracy.py --detector), on a generated clip and world with a fake object detector."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest
from bench_modules import load_bench

from engine.lab.evaluation.carried_accuracy import CarriedRow, labelled_carrying, score_carrying, world_carrying
from engine.perception.detection.detectors import CarriedObjects, Detections
from engine.perception.detection.factory import DETECTORS

PEOPLE = {"p1": [40, 40, 60, 150], "p2": [200, 40, 60, 150], "p3": [330, 40, 50, 150]}


class FakeObjectDetector:
    """A backpack on p1's back in every frame, a handbag beside p2 in three frames of four (a flickering miss),
    nothing near p3; ``objects=False``: a person-only detector."""

    name = "fake-objects"

    def __init__(self, objects: bool = True) -> None:
        self.objects = objects
        self.frames = 0

    def settings(self):
        return {"name": self.name}

    def reset(self):
        self.frames = 0

    def detect(self, frame):
        self.frames += 1
        if not self.objects:
            return Detections()
        boxes, scores, kinds = [[45, 80, 30, 40]], [0.8], ["backpack"]
        if self.frames % 4 != 0:
            boxes.append([255, 120, 20, 25])
            scores.append(0.6)
            kinds.append("handbag")
        return Detections(objects=CarriedObjects(np.array(boxes, np.float32), np.array(scores, np.float32),
                                                 tuple(kinds)))


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    root = tmp_path_factory.mktemp("labelled")
    writer = cv2.VideoWriter(str(root / "clip.avi"), cv2.VideoWriter_fourcc(*"MJPG"), 10, (400, 240))
    for _ in range(12):
        writer.write(np.full((240, 400, 3), 90, np.uint8))
    writer.release()
    truths = {"p1": "backpack", "p2": "handbag", "p3": "none"}
    clips = {"clip.avi": {pid: {"attributes": {"carrying_type": truths[pid]},
                                "boxes": [{"frame": f, "box": box} for f in (0, 3, 6, 9)]}
                          for pid, box in PEOPLE.items()}}
    clips["clip.avi"]["p4"] = {"attributes": {"gender": "male"}, "boxes": [{"frame": 3, "box": [0, 0, 10, 10]}]}
    (root / "people.json").write_text(json.dumps({"clips": clips}), encoding="utf-8")
    return root


def test_labelled_people_get_their_objects_over_their_reference_frames(labelled):
    detector = FakeObjectDetector()
    rows = {r.name: r for r in labelled_carrying(labelled / "people.json", labelled, detector)}
    assert detector.frames == 4  # the reference frames 0, 3, 6, 9, each read once
    assert set(rows) == {"clip.avi:p1", "clip.avi:p2", "clip.avi:p3"}  # p4 states no carrying_type
    p1, p2, p3 = rows["clip.avi:p1"], rows["clip.avi:p2"], rows["clip.avi:p3"]
    assert (p1.predicted, p1.frames, p1.hits, p1.probability_of_truth) == ("backpack", 4, {"backpack": 4}, 1.0)
    assert (p2.predicted, p2.hits) == ("handbag", {"handbag": 3})  # seen at 0.6 in 3 of 4 frames: P = 0.75
    assert p2.probability_of_truth == pytest.approx(0.75)
    assert (p3.predicted, p3.hits, p3.probability_of_truth) == ("none", {}, 1.0)
    table = score_carrying(rows.values())
    assert table["accuracy"] == 1.0 and table["false_alarm_rate"] == 0.0 and table["object_recall"] == 1.0


def test_a_person_only_detector_gives_no_coverage(labelled):
    rows = labelled_carrying(labelled / "people.json", labelled, FakeObjectDetector(objects=False))
    assert [r.predicted for r in rows] == [None, None, None]
    table = score_carrying(rows)
    assert table["coverage"] == 0.0 and table["accuracy"] is None and table["scored"] == 0


def test_score_counts_false_alarms_and_object_recall_by_hand():
    def row(truth, predicted):
        return CarriedRow("x", truth, predicted, None, None, 1, {})

    rows = [row("none", "none"), row("none", "handbag"), row("none", None), row("backpack", "backpack"),
            row("backpack", "none"), row("suitcase", "handbag")]
    table = score_carrying(rows)
    assert (table["n"], table["scored"]) == (6, 5)
    assert table["accuracy"] == pytest.approx(2 / 5)
    assert table["false_alarm_rate"] == pytest.approx(1 / 2) and table["object_recall"] == pytest.approx(1 / 3)
    assert table["confusion"] == {"backpack->backpack": 1, "backpack->none": 1, "none->handbag": 1,
                                  "none->none": 1, "suitcase->handbag": 1}


class WorldDetector:
    """A suitcase on images whose left half is bright, nothing otherwise."""

    name = "fake-world"

    def settings(self):
        return {"name": self.name}

    def reset(self):
        pass

    def detect(self, image):
        if image[:, : image.shape[1] // 2].mean() < 128:
            return Detections(objects=CarriedObjects())
        return Detections(objects=CarriedObjects(np.array([[10, 100, 50, 60]], np.float32),
                                                 np.array([0.9], np.float32), ("suitcase",)))


@pytest.fixture
def world(tmp_path):
    records = []
    shots = [(0, 0, True, "suitcase"), (0, 0, False, "suitcase"), (0, 0, True, "suitcase"), (1, 0, False, "none"),
             (2, 1, True, "none")]
    for k, (identity, outfit, bright, truth) in enumerate(shots):
        image = np.full((256, 128, 3), 200 if bright else 40, np.uint8)
        cv2.imwrite(str(tmp_path / f"{k}.png"), image)
        records.append({"image": f"{k}.png", "identity": identity, "outfit": outfit, "modality": "rgb",
                        "resolution": "HR", "attributes": {"carrying_type": truth}})
    records.append({**records[0], "modality": "ir"})  # not scored
    (tmp_path / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return tmp_path


def test_world_rows_per_image_and_per_outfit(world):
    groups = world_carrying(world, WorldDetector())
    assert [r.predicted for r in groups["image"]] == ["suitcase", "none", "suitcase", "none", "suitcase"]
    outfits = {r.name: r for r in groups["outfit"]}
    assert set(outfits) == {"0/0", "1/0", "2/1"}
    assert outfits["0/0"].predicted == "suitcase" and outfits["0/0"].frames == 3
    assert outfits["0/0"].probability_of_truth == pytest.approx(2 / 3, abs=1e-4)
    table = score_carrying(groups["image"])
    assert table["accuracy"] == pytest.approx(3 / 5) and table["false_alarm_rate"] == pytest.approx(0.5)
    assert table["object_recall"] == pytest.approx(2 / 3)
    with pytest.raises(FileNotFoundError, match="no manifest"):
        world_carrying(world / "nowhere", WorldDetector())


def test_the_bench_takes_its_detector_by_name_with_options(labelled, world, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(DETECTORS, "fake-objects", FakeObjectDetector)
    bench = load_bench("attribute_accuracy")
    out = tmp_path / "real.json"
    assert bench.main(["--real", "--people", str(labelled / "people.json"), "--footage", str(labelled),
                       "--detector", "fake-objects", "--skip-pixels", "--json", str(out)]) == 0
    result = json.loads(out.read_text())["carried_objects"]
    assert result["tables"]["person"]["accuracy"] == 1.0 and len(result["rows"]["person"]) == 3
    assert "clip.avi:p2" in capsys.readouterr().out
    assert bench.main(["--real", "--people", str(labelled / "people.json"), "--footage", str(labelled),
                       "--detector", "fake-objects", "--detector-option", "objects=false", "--skip-pixels",
                       "--json", str(out)]) == 0
    assert json.loads(out.read_text())["carried_objects"]["tables"]["person"]["coverage"] == 0.0
    monkeypatch.setitem(DETECTORS, "fake-world", WorldDetector)
    assert bench.main(["--world", str(world), "--detector", "fake-world", "--skip-pixels", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["carried_objects"]["tables"]["outfit"]["n"] == 3
    with pytest.raises(SystemExit, match="KEY=VALUE"):
        bench.main(["--real", "--detector", "fake-objects", "--detector-option", "oops", "--skip-pixels"])


def test_the_bench_scores_a_checkpoints_attribute_heads_on_the_labelled_crops(labelled, tmp_path, capsys):
    import torch

    from engine.retrieval.models import create, save

    torch.manual_seed(0)
    checkpoint = tmp_path / "tiny"
    save(create("tiny", device="cpu"), checkpoint)
    out = tmp_path / "heads.json"
    bench = load_bench("attribute_accuracy")
    assert bench.main(["--real", "--people", str(labelled / "people.json"), "--footage", str(labelled),
                       "--model", str(checkpoint), "--skip-pixels", "--json", str(out)]) == 0
    heads = json.loads(out.read_text())["model_heads"]
    assert heads["boxes"] > 0 and heads["checkpoint"] == str(checkpoint)
    for row in heads["table"].values():
        assert row["n"] > 0 and 0.0 <= row["accuracy"] <= 1.0 and 0.0 < row["majority_baseline"] <= 1.0
    assert "model heads of" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        bench.main(["--world", str(tmp_path), "--model", str(checkpoint)])
