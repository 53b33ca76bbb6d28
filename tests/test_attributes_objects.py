"""Carried objects as attribute evidence (engine/perception/attributes/objects.py): assigning detected bags to people,
the evidence a track's sightings give, the "objects" source in the store, the ranking and its explanations,
keeping it through a refresh, and ingest end to end with a detector that reports objects."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from fixed_query_encoder import FixedQueryEncoder

from engine.index import Gallery
from engine.index import evidence_table as store
from engine.ingest import IngestOptions, ingest
from engine.kernel.ontology import ONTOLOGY
from engine.lab.world.identities import make_identity
from engine.lab.world.render import render_sample
from engine.perception.attributes.objects import (
    HALF_FRAMES,
    NONE_TRUST,
    CarriedObjectsError,
    CarriedTally,
    assign_objects,
    objects_by_person,
)
from engine.perception.detection.detectors import CarriedObjects, Detections
from engine.retrieval.encoding.views import gallery_views
from engine.retrieval.evidence.agreement import key_agreement
from engine.retrieval.evidence.items import refresh_evidence
from engine.retrieval.evidence.ranking import explanation_line
from engine.retrieval.search import SearchSession

KINDS = ONTOLOGY.attributes["carrying_type"]

# --------------------------------------------------------------------------------------------- assignment


def test_an_object_inside_a_person_is_theirs_and_one_far_away_is_nobodys():
    people = np.array([[100, 50, 60, 160], [400, 40, 60, 170]], np.float32)
    objects = np.array([[110, 90, 30, 40],     # on person 0's back
                        [250, 100, 30, 30],    # in the empty middle of the frame
                        [455, 150, 30, 40]],   # mostly outside person 1's right edge, inside the expansion
                       np.float32)
    assert assign_objects(people, objects).tolist() == [0, -1, 1]
    assert assign_objects(people, np.zeros((0, 4))).tolist() == []
    assert assign_objects(np.zeros((0, 4)), objects).tolist() == [-1, -1, -1]


def test_an_object_between_two_people_goes_to_the_better_overlap_and_ties_to_the_higher_score():
    people = np.array([[100, 50, 60, 160], [150, 50, 60, 160]], np.float32)  # person 1 starts where 0 ends - 10
    between = np.array([[140, 100, 30, 30]], np.float32)  # x 140..170: 20 px inside person 0, 20 px inside 1
    more_in_one = np.array([[152, 100, 30, 30]], np.float32)  # 8 px inside person 0, 30 inside person 1
    assert assign_objects(people, more_in_one).tolist() == [1]
    assert assign_objects(people, between, np.array([0.9, 0.4])).tolist() == [0]
    assert assign_objects(people, between, np.array([0.4, 0.9])).tolist() == [1]


def test_each_object_goes_to_one_person_and_a_person_keeps_the_best_score_per_kind():
    people = np.array([[100, 50, 60, 160], [400, 40, 60, 170]], np.float32)
    objects = CarriedObjects(np.array([[110, 90, 30, 40], [112, 92, 30, 40], [420, 160, 30, 40],
                                       [600, 10, 20, 20]], np.float32),
                             np.array([0.4, 0.7, 0.6, 0.9], np.float32),
                             ("backpack", "backpack", "handbag", "umbrella"))
    assert objects_by_person(people, objects) == [{"backpack": pytest.approx(0.7)}, {"handbag": pytest.approx(0.6)}]
    assert objects_by_person(people, CarriedObjects()) == [{}, {}]
    assert objects_by_person(people, None) is None  # no object detector: no evidence, not "nothing carried"


def test_bad_boxes_are_named():
    with pytest.raises(CarriedObjectsError, match="person boxes must be an \\[N, 4\\]"):
        assign_objects(np.zeros((2, 3)), np.zeros((1, 4)))
    with pytest.raises(CarriedObjectsError, match="object boxes must be finite"):
        assign_objects(np.zeros((1, 4)), np.array([[0, 0, np.nan, 1]]))
    with pytest.raises(CarriedObjectsError, match="person scores must be one per person box"):
        assign_objects(np.ones((2, 4)), np.ones((1, 4)), np.ones(3))
    with pytest.raises(CarriedObjectsError, match="'bicycle'"):
        CarriedTally().observe({"bicycle": 0.9})


# ------------------------------------------------------------------------------------------------ evidence


def tally(sightings: list[dict[str, float] | None]) -> CarriedTally:
    out = CarriedTally()
    for seen in sightings:
        out.observe(seen)
    return out


def test_a_bag_seen_in_most_frames_is_strong_evidence():
    evidence = tally([{"backpack": 0.8}] * 30 + [{}] * 10).evidence()
    dist, confidence = evidence.probabilities["carrying_type"], evidence.confidence["carrying_type"]
    assert evidence.best("carrying_type") == "backpack"
    assert dist["backpack"] == pytest.approx(0.75) and dist["none"] == pytest.approx(0.25)
    assert confidence == pytest.approx(40 / (40 + HALF_FRAMES) * (0.75 + 0.25 * NONE_TRUST))
    assert sum(dist.values()) == pytest.approx(1.0) and set(dist) == set(KINDS)
    assert evidence.info["frames"] == 40 and evidence.info["hits"] == {"backpack": 30}
    assert key_agreement(dist["backpack"], confidence, len(KINDS)) > 0.6


def test_one_weak_sighting_in_many_frames_is_weak_and_absence_is_only_weak_evidence_for_none():
    weak = tally([{"backpack": 0.3}] + [{}] * 39).evidence()
    nothing = tally([{}] * 40).evidence()
    strong = tally([{"backpack": 0.8}] * 30 + [{}] * 10).evidence()
    for evidence in (weak, nothing):
        assert evidence.best("carrying_type") == "none"
        assert evidence.confidence["carrying_type"] <= NONE_TRUST + 0.02
        a = key_agreement(evidence.probabilities["carrying_type"]["backpack"], evidence.confidence["carrying_type"],
                          len(KINDS))
        assert -0.2 < a < 0  # a small penalty for "with a backpack", nothing like a mismatch
    assert nothing.probabilities["carrying_type"]["none"] == 1.0
    assert weak.probabilities["carrying_type"]["backpack"] == pytest.approx(0.6 / 40)
    assert weak.confidence["carrying_type"] < strong.confidence["carrying_type"] / 2


def test_few_frames_give_less_confidence_and_mixed_kinds_share_the_presence():
    few = tally([{"suitcase": 0.9}]).evidence()
    many = tally([{"suitcase": 0.9}] * 20).evidence()
    assert few.best("carrying_type") == many.best("carrying_type") == "suitcase"
    assert few.confidence["carrying_type"] == pytest.approx(1 / (1 + HALF_FRAMES))
    assert many.confidence["carrying_type"] > 3 * few.confidence["carrying_type"]
    mixed = tally([{"handbag": 1.0}, {"handbag": 1.0, "backpack": 0.25}, {"handbag": 0.5}]).evidence()
    dist = mixed.probabilities["carrying_type"]
    assert dist["none"] == pytest.approx(0.0) and dist["handbag"] == pytest.approx(3 / 3.5)
    assert dist["backpack"] == pytest.approx(0.5 / 3.5)


def test_no_object_detector_means_no_evidence():
    assert tally([None] * 10).evidence() is None
    assert tally([None, {"umbrella": 0.9}, None]).evidence().info["frames"] == 1


# ----------------------------------------------------------------------------------- store, ranking, refresh


def carried(kind: str, seen: int = 30, frames: int = 40, score: float = 0.8) -> dict:
    """A track of ``frames`` observations with ``kind`` seen in ``seen`` of them (``"none"``: nothing seen)."""
    seen = 0 if kind == "none" else seen
    return tally([{kind: score}] * seen + [{}] * (frames - seen)).evidence().to_dict()


def male(p: float = 0.9, c: float = 0.8) -> dict:
    return {"version": 1, "probabilities": {"gender": {"male": p, "female": 1 - p}}, "confidence": {"gender": c}}


def test_store_round_trip_with_three_sources_and_an_old_two_source_table(tmp_path):
    old = tmp_path / "old"
    store.append(old, ["a", "b"], [{"pixels": male(), "model": male(0.8)}, {"model": male(0.7)}],
                 model_fingerprint="ckpt")
    table = store.EvidenceTable.read(old)
    assert set(table.sources) == {"pixels", "model"} and "objects" not in table.record(0)
    store.append(old, ["c"], [{"model": male(), "objects": carried("backpack")}], model_fingerprint="ckpt")
    table = store.EvidenceTable.read(old)
    assert set(table.sources) == {"pixels", "model", "objects"} and table.covered("objects") == {"carrying_type"}
    assert "objects" not in table.record(0) and "objects" not in table.record(1)  # back-filled as "no evidence"
    back = table.record(2)["objects"]
    assert back.best("carrying_type") == "backpack"
    assert back.probabilities["carrying_type"]["backpack"] == pytest.approx(0.75, abs=1e-3)
    assert back.confidence["carrying_type"] == pytest.approx(carried("backpack")["confidence"]["carrying_type"],
                                                             abs=1e-3)


@pytest.fixture
def gallery(tmp_path):
    """Four items with the same vector and the same pixel/model evidence (a man); their carried objects
    differ: a backpack seen, nothing seen in many frames, no object evidence, a handbag seen."""
    views = gallery_views(4)
    vectors = np.tile(np.array([[0.8, 0.6, 0, 0]], np.float32), (4, 1))
    g = Gallery.create(tmp_path / "g", views, "ckpt")
    ids = ["nothing", "unknown", "bag", "backpack"]
    g.add([{"id": i, "source": "s.mp4", "frame": k} for k, i in enumerate(ids)], {v: vectors for v in views})
    records = {"nothing": {"objects": carried("none")}, "unknown": {}, "bag": {"objects": carried("handbag")},
               "backpack": {"objects": carried("backpack")}}
    for record in records.values():
        record.update(pixels=male(), model=male(0.8))
    store.append(g.root, ids, [records[i] for i in ids], model_fingerprint="ckpt")
    return g


class Encoder(FixedQueryEncoder):
    level = "UC"


def ranked(result) -> list[str]:
    rows, _ = result.ranked()
    return [result.item_ids[int(r)] for r in rows]


def test_a_backpack_query_promotes_the_item_whose_objects_show_a_backpack(gallery):
    result = SearchSession(gallery, Encoder(), attribute_weight=0.5).step("a man with a backpack")
    order = ranked(result)
    assert order[0] == "backpack" and order[-1] in ("bag", "nothing")
    assert order.index("unknown") < order.index("nothing")  # no evidence is not evidence of no bag
    scores = {result.item_ids[int(r)]: float(s) for r, s in zip(result.rows, result.scores, strict=True)}
    assert scores["backpack"] - scores["unknown"] > 0.1
    plain = SearchSession(gallery, Encoder(), attribute_weight=0.5, attribute_sources=("pixels", "model"))
    flat = plain.step("a man with a backpack")
    assert np.ptp(flat.scores) < 2e-3  # without the objects source the four items are alike


def test_explanations_name_the_objects_source(gallery):
    result = SearchSession(gallery, Encoder(), attribute_weight=0.5).step("a man with a backpack")
    explained = result.explain("backpack")
    entry = next(a for a in explained["attributes"] if a["key"] == "carrying_type")
    assert entry["status"] == "match" and entry["value"] == "backpack"
    assert set(entry["sources"]) == {"objects"}
    assert entry["sources"]["objects"]["best"] == "backpack"
    assert entry["sources"]["objects"]["probability"] == pytest.approx(0.75, abs=1e-3)
    assert "✓ carried item: backpack by the carried objects (0.75); the description says backpack" in \
        explanation_line(explained)
    other = result.explain("bag")
    entry = next(a for a in other["attributes"] if a["key"] == "carrying_type")
    assert entry["status"] == "mismatch" and entry["sources"]["objects"]["best"] == "handbag"


def test_refresh_keeps_the_stored_objects_evidence(gallery, tmp_path):
    # items without crops: the refresh cannot read pixels, and must still keep what the detector saw
    counts = refresh_evidence(gallery, None, scenes=False)
    assert counts["objects"] == 3 and counts["no_crop"] == 4
    table = store.EvidenceTable.read(gallery.root)
    row = table.row_of["backpack"]
    assert table.record(row)["objects"].best("carrying_type") == "backpack"
    assert table.record(table.row_of["nothing"])["objects"].best("carrying_type") == "none"
    assert "unknown" not in table.row_of


# ----------------------------------------------------------------------------------------- ingest end to end

FRAME_W, FRAME_H, BACKGROUND, FRAMES = 560, 300, 110, 12


def walkers() -> list[np.ndarray]:
    """Two rendered people walking right on a plain background."""
    rng = np.random.default_rng(3)
    people = [cv2.cvtColor(render_sample(make_identity(0, i, 1).outfits[0], "rgb", "HR", "front", "cam01", rng),
                           cv2.COLOR_RGB2BGR) for i in (1, 2)]
    images = []
    for t in range(FRAMES):
        image = np.full((FRAME_H, FRAME_W, 3), BACKGROUND, np.uint8)
        for k, person in enumerate(people):
            x, y = 10 + 8 * t + 280 * k, 20 + 10 * k
            image[y : y + 256, x : x + 128] = person
        images.append(image)
    return images


class BackpackDetector:
    """Test double of a COCO detector: the boxes of whatever differs from the background, and a backpack box on
    the back of the leftmost person (``with_objects=False``: a person-only detector, ``objects`` None)."""

    name = "backpack-double"

    def __init__(self, with_objects: bool = True) -> None:
        self.with_objects = with_objects

    def settings(self):
        return {"name": self.name, "objects": self.with_objects}

    def reset(self):
        pass

    def detect(self, frame):
        mask = (np.abs(frame.astype(np.int16) - BACKGROUND).max(axis=2) > 30).astype(np.uint8)
        mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((9, 9), np.uint8))
        count, _, stats, _ = cv2.connectedComponentsWithStats(mask)
        boxes = sorted(stats[i, :4].tolist() for i in range(1, count) if stats[i, 4] > 2000)
        found = np.array(boxes, np.float32).reshape(-1, 4)
        if not self.with_objects:
            return Detections(found, np.full(len(found), 0.9, np.float32))
        x, y, w, h = boxes[0]
        backpack = [x + 0.1 * w, y + 0.3 * h, 0.45 * w, 0.3 * h]
        objects = CarriedObjects(np.array([backpack], np.float32), np.array([0.7], np.float32), ("backpack",))
        return Detections(found, np.full(len(found), 0.9, np.float32), objects=objects)


class FakeEncoder:
    views = {"rgb": 4}
    fingerprint = "fake-model"

    def __call__(self, crops, modalities, resolutions):
        rows = np.array([[*c.reshape(-1, 3).mean(0), c.std()] for c in crops], np.float32)
        return {"rgb": rows / np.linalg.norm(rows, axis=1, keepdims=True)}


@pytest.fixture(scope="module")
def video(tmp_path_factory):
    path = tmp_path_factory.mktemp("objects") / "cam01_20240506T101530.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (FRAME_W, FRAME_H))
    for image in walkers():
        writer.write(image)
    writer.release()
    return path


def test_ingest_gives_every_item_of_the_backpack_track_objects_evidence(video, tmp_path):
    summary = ingest(video, tmp_path / "g", FakeEncoder(), BackpackDetector(), IngestOptions(samples_per_track=3))
    assert summary.sources[0].tracks == 2
    gallery = Gallery.open(tmp_path / "g")
    table = store.EvidenceTable.read(gallery.root)
    assert "objects" in table.sources
    by_track: dict[int, set[str]] = {}
    for item in gallery.iter_items():
        found = table.record(table.row_of[item.id])["objects"]
        by_track.setdefault(item.track, set()).add(found.best("carrying_type"))
        dist, confidence = found.probabilities["carrying_type"], found.confidence["carrying_type"]
        if found.best("carrying_type") == "backpack":
            # seen in every one of the 12 frames at 0.7 ≥ the sure score: P = 1, confidence 12 / 16
            assert dist["backpack"] == pytest.approx(1.0, abs=1e-3)
            assert confidence == pytest.approx(FRAMES / (FRAMES + HALF_FRAMES), abs=2e-3)
        else:
            assert dist["none"] == pytest.approx(1.0, abs=1e-3)
            assert confidence == pytest.approx(FRAMES / (FRAMES + HALF_FRAMES) * NONE_TRUST, abs=2e-3)
    assert sorted(by_track.values(), key=sorted) == [{"backpack"}, {"none"}]
    assert len(gallery) == 6 and all(len(v) == 1 for v in by_track.values())


def test_ingest_with_a_person_only_detector_stores_no_objects_evidence(video, tmp_path):
    ingest(video, tmp_path / "g", FakeEncoder(), BackpackDetector(with_objects=False))
    table = store.EvidenceTable.read(tmp_path / "g")
    assert len(table) > 0 and "objects" not in table.sources
    assert math.isclose(len(table), len(Gallery.open(tmp_path / "g")))


def test_cli_search_explains_and_rebuild_keeps_the_objects_evidence(tmp_path):
    import json

    import torch
    from typer.testing import CliRunner

    from engine.index import GalleryItem
    from engine.retrieval.encoding.model_encoder import encode_items, model_views
    from engine.retrieval.models import create, model_fingerprint, save
    from lineup.cli import app

    torch.manual_seed(0)
    model = create("tiny", device="cpu")
    checkpoint = save(model, tmp_path / "checkpoint")
    frame = walkers()[0]
    crops = [np.ascontiguousarray(frame[20:276, 10:138]), np.ascontiguousarray(frame[30:286, 290:418])]
    gallery = Gallery.create(tmp_path / "g", model_views(model), model_fingerprint(model))
    items = []
    for k, crop in enumerate(crops):
        relative, digest = gallery.put_crop(cv2.imencode(".png", crop)[1].tobytes())
        items.append(GalleryItem(id=f"p{k}", source=str(tmp_path / "gone.avi"), frame=0, box=(0, 0, 128, 256),
                                 crop=relative, crop_sha256=digest, modality="rgb", resolution="HR"))
    gallery.add(items, encode_items(model, crops))
    store.append(gallery.root, ["p0", "p1"], [{"objects": carried("backpack")}, {"objects": carried("none")}])

    runner = CliRunner()
    base = ["search", "--gallery", str(gallery.root), "--checkpoint", str(checkpoint), "--device", "cpu",
            "--text", "a man with a backpack"]
    result = runner.invoke(app, [*base, "--json"])
    assert result.exit_code == 0, result.output
    top = {item["id"]: item["explanation"] for item in json.loads(result.stdout)["steps"][0]["top"]}
    entry = next(a for a in top["p0"]["attributes"] if a["key"] == "carrying_type")
    assert entry["status"] == "match" and entry["sources"]["objects"]["best"] == "backpack"
    text = runner.invoke(app, base)
    assert text.exit_code == 0 and "✓ carried item: backpack by the carried objects (0.75)" in text.stdout

    rebuilt = runner.invoke(app, ["gallery", "rebuild", str(gallery.root), "--attributes"])
    assert rebuilt.exit_code == 0, rebuilt.output
    assert "2 with carried objects kept" in rebuilt.stdout
    table = store.EvidenceTable.read(gallery.root)
    assert table.record(table.row_of["p0"])["objects"].best("carrying_type") == "backpack"
    assert "pixels" in table.record(table.row_of["p0"])  # the pixels were recomputed beside it
