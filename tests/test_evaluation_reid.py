"""The ``reid`` protocol on real-dataset layouts: find-similar's rankings scored under the dataset's protocol,
checked with painted images and a lookup model, and the errors it names."""

from __future__ import annotations

import pytest
from evaluation_data import LookupModel, one_hot, write_image

from engine.ingest.datasets import read_dataset
from engine.kernel.ontology import BIOMETRIC_KEYS, ONTOLOGY
from engine.lab.evaluation import EvaluationError, evaluate
from engine.retrieval.encoding.resolution import level_of_height

# person → Market-1501 images (camera, code painted); code = the image's "look" the double's embedding reads
QUERY = {1: (1, 1), 3: (5, 3)}
GALLERY = [(1, 2, 1), (1, 3, 6), (3, 4, 8), (3, 6, 3), (0, 1, 0)]  # (person, camera, code)


@pytest.fixture
def market(tmp_path):
    root = tmp_path / "Market-1501"
    (root / "bounding_box_train").mkdir(parents=True)
    for person, (camera, code) in QUERY.items():
        write_image(root / "query" / f"{person:04d}_c{camera}s1_000001_00.jpg", code, (128, 64))
    for n, (person, camera, code) in enumerate(GALLERY):
        write_image(root / "bounding_box_test" / f"{person:04d}_c{camera}s1_{n:06d}_01.jpg", code, (128, 64))
    return root


def looks(code: int, level, modality):
    """The double's embedding of an image painted with ``code``."""
    return one_hot(code % 5)  # codes 1 and 6 look alike (same clothes), 3 and 8 too


def test_find_similar_is_scored_under_the_dataset_protocol(market):
    report = evaluate(LookupModel({}, looks), f"market1501:{market}", "reid")
    assert report["protocol"] == "reid" and report["source"]["reader"] == "market1501"
    assert report["queries"] == 2 and report["gallery"] == 5
    found = report["by"]["checkpoint find similar (rgb)"]
    assert found["R@1"] == 1.0 and found["mAP"] == 1.0  # each query's person looks the same on other cameras
    assert report["overall"] == report["by"]["find similar"] and "checkpoint reid:AD-LT" in report["by"]
    assert report["network"]["name"] == "person-reidentification-retail-0287"  # the footage default
    assert report["views"] == {"find similar": ["appearance"], "checkpoint find similar (rgb)": ["rgb"]}
    assert "checkpoint clothes may have changed" not in report["by"] and any("no image attribute heads" in n
                                                                              for n in report["notes"])
    assert report["resolutions"] == {level_of_height(128): 7}  # labelled by height, as ingest labels crops


def test_the_heads_join_the_ranking_when_the_model_has_them(market):
    people = {1: "male", 6: "male", 3: "female", 8: "female", 0: "female"}

    def read(code):
        return {"gender": people[code]} | {key: ONTOLOGY.attributes[key][0] for key in BIOMETRIC_KEYS[1:]}

    report = evaluate(LookupModel({}, looks, read_attributes=read), f"market1501:{market}", "reid")
    assert report["by"]["checkpoint clothes may have changed"]["R@1"] == 1.0 and report["outfit_change_weight"] > 0


def test_datasets_without_a_reid_protocol_are_refused_by_name(tmp_path):
    from evaluation_data import write_cuhk

    write_cuhk(tmp_path / "cuhk")
    with pytest.raises(EvaluationError, match="re-identification dataset.*cuhk-pedes"):
        evaluate(LookupModel({}, looks), read_dataset("cuhk-pedes", tmp_path / "cuhk"), "reid")
    with pytest.raises(EvaluationError, match="runs on a real dataset"):
        evaluate(LookupModel({}, looks), tmp_path, "reid")
