"""Hybrid ranking in the search session: similarity + w·agreement checked by hand, attribute requirements as
filters, explanations, weight sources, and a step's evidence cost proportional to its candidates."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from fixed_query_encoder import FixedQueryEncoder
from similarity_gallery import DIM, similarity_gallery

from engine.index import Gallery, GalleryInputError
from engine.index import evidence_table as store
from engine.kernel.ontology import ONTOLOGY
from engine.retrieval.encoding.views import gallery_views
from engine.retrieval.evidence.ranking import (
    DEFAULT_ATTRIBUTE_WEIGHT,
    DomainWeights,
    checkpoint_attribute_weight,
    evidence_for,
    explanation_line,
)
from engine.retrieval.search import QueryInputError, SearchSession, StepQuery

SIMILARITY = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
TOL = 2e-3  # gallery vectors are float16
TEXT = "a man in a red shirt"  # gender=male, top_type=shirt, top_color=red


Encoder = FixedQueryEncoder


def dist(key, value, p, c):
    values = ONTOLOGY.attributes[key]
    rest = (1 - p) / (len(values) - 1)
    return {"probabilities": {v: (p if v == value else rest) for v in values}, "confidence": c}


def evidence(**keys):
    out = {"version": 1, "probabilities": {}, "confidence": {}}
    for key, (value, p, c) in keys.items():
        entry = dist(key, value, p, c)
        out["probabilities"][key], out["confidence"][key] = entry["probabilities"], entry["confidence"]
    return out


EVIDENCE = {
    "i0": {"pixels": evidence(top_color=("red", 0.0, 1.0)), "model": evidence(gender=("male", 1.0, 1.0))},
    "i1": {"pixels": evidence(top_color=("red", 1.0, 1.0))},
    "i3": {"pixels": evidence(top_color=("red", 0.5, 0.5))},
    "i4": {"pixels": evidence(top_color=("red", 0.0, 0.5))},
    "i5": {"pixels": evidence(top_color=("red", 0.25, 1.0))},
}


def expected_agreement():
    """By hand: K = {gender (model), top_color (pixels)}; top_type has no evidence anywhere → |K| = 2."""
    def a(p, c):
        return max(-1.0, min(1.0, math.log(12 * (c * p + (1 - c) / 12)) / math.log(12)))

    return {"i0": (1.0 + -1.0) / 2, "i1": (0 + 1.0) / 2, "i2": 0.0, "i3": a(0.5, 0.5) / 2, "i4": a(0.0, 0.5) / 2,
            "i5": a(0.25, 1.0) / 2}


@pytest.fixture
def gallery(tmp_path):
    return similarity_gallery(tmp_path / "g", SIMILARITY, EVIDENCE)


def ranked_ids(result):
    rows, _ = result.ranked()
    return [result.item_ids[int(r)] for r in rows]


def scores_by_id(result):
    return {result.item_ids[int(r)]: float(s) for r, s in zip(result.rows, result.scores, strict=True)}


def test_scores_are_similarity_plus_weighted_agreement(gallery):
    expected = expected_agreement()
    for weight in (0.0, 0.3, 2.0):
        result = SearchSession(gallery, Encoder(), attribute_weight=weight).step(TEXT)
        scores = scores_by_id(result)
        for k, item in enumerate(scores):
            assert scores[item] == pytest.approx(SIMILARITY[k] + weight * expected[item], abs=TOL)
    plain = SearchSession(gallery, Encoder(), attribute_weight=0.0).step(TEXT)
    hybrid = SearchSession(gallery, Encoder(), attribute_weight=0.3).step(TEXT)
    assert ranked_ids(plain) == ["i0", "i1", "i2", "i3", "i4", "i5"]
    assert ranked_ids(hybrid)[:2] == ["i1", "i0"]  # the confident red top overtakes the red-contradicting item


def test_weight_comes_from_step_session_encoder_or_default(gallery, tmp_path):
    encoder = Encoder()
    assert SearchSession(gallery, encoder).attribute_weight == DEFAULT_ATTRIBUTE_WEIGHT
    encoder.attribute_weight = 1.5
    assert SearchSession(gallery, encoder).attribute_weight == 1.5
    session = SearchSession(gallery, encoder, attribute_weight=0.0)
    result = session.step(StepQuery(text=TEXT, attribute_weight=1.0))
    assert scores_by_id(result)["i1"] == pytest.approx(0.8 + 0.5, abs=TOL)
    with pytest.raises(QueryInputError, match="≥ 0"):
        SearchSession(gallery, encoder, attribute_weight=-1)
    with pytest.raises(QueryInputError, match="attribute_weight"):
        StepQuery(text=TEXT, attribute_weight=-0.5)
    with pytest.raises(QueryInputError, match="sources"):
        SearchSession(gallery, encoder, attribute_sources=("eyes",))
    folder = tmp_path / "ckpt"
    folder.mkdir()
    assert checkpoint_attribute_weight(folder) == DEFAULT_ATTRIBUTE_WEIGHT  # no metadata
    (folder / "metadata.json").write_text(json.dumps({"attribute_weight": 0.7}))
    assert checkpoint_attribute_weight(folder) == 0.7
    (folder / "metadata.json").write_text(json.dumps({"attribute_weight": "lots"}))
    with pytest.raises(ValueError, match="attribute_weight"):
        checkpoint_attribute_weight(folder)


def test_a_gallery_recorded_weight_beats_the_encoder_and_names_its_origin(gallery, tmp_path):
    encoder = Encoder()
    encoder.attribute_weight = 1.5
    gallery.record_ranking("footage", 2.5, "checkpoint calibration for footage galleries")
    reopened = Gallery.open(gallery.root)
    assert reopened.ranking == {"domain": "footage", "attribute_weight": 2.5,
                                "origin": "checkpoint calibration for footage galleries"}
    session = SearchSession(reopened, encoder)
    assert session.attribute_weight == 2.5 and session.weight_origin.startswith("gallery (footage")
    assert SearchSession(reopened, encoder, attribute_weight=0.1).attribute_weight == 0.1
    for bad in (("street", 1.0, "x"), ("world", -1.0, "x"), ("world", float("nan"), "x"), ("world", 1.0, " ")):
        with pytest.raises(GalleryInputError):
            reopened.record_ranking(*bad)
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "metadata.json").write_text(json.dumps({"attribute_weight": 0.7, "attribute_weights": {"footage": 3}}))
    weights = DomainWeights.of_checkpoint(folder)
    assert weights.for_domain("footage") == (3.0, "checkpoint calibration for footage galleries")
    assert weights.for_domain("world") == (0.7, "checkpoint weight (no calibration per domain)")
    assert checkpoint_attribute_weight(folder, "footage") == 3.0 and checkpoint_attribute_weight(folder) == 0.7


def test_sources_can_be_restricted(gallery):
    pixels_only = SearchSession(gallery, Encoder(), attribute_weight=1.0, attribute_sources=("pixels",)).step(TEXT)
    # K = {top_color} only: i0's model evidence for gender no longer counts
    assert scores_by_id(pixels_only)["i0"] == pytest.approx(0.9 - 1.0, abs=TOL)
    assert scores_by_id(pixels_only)["i1"] == pytest.approx(0.8 + 1.0, abs=TOL)


def test_required_attributes_filter_like_camera_filters(gallery):
    session = SearchSession(gallery, Encoder(), attribute_weight=0.0)
    result = session.step(StepQuery(text=TEXT, require=["top_color"], k=3))
    filtered = [result.item_ids[int(r)] for r in result.filtered_rows]
    # i0: p̃ = 0 and i5: p̃ = 0.25 > 0.5/12 → only i0 fails; i4 (p̃ = 0.5/12 exactly) and i2 (no evidence) pass
    assert filtered == ["i0"]
    assert result.candidates_before == 6 and result.candidates_after == 3
    assert ranked_ids(result)[:3] == ["i1", "i2", "i3"]
    explained = result.explain("i0")
    assert explained["filtered"] is True
    colour = next(a for a in explained["attributes"] if a["key"] == "top_color")
    assert colour["required"] and colour["failed_requirement"] and colour["status"] == "mismatch"
    session.confirm("i0")  # a confirmed item is never filtered out
    again = session.step(StepQuery(text=TEXT, require={"top_color": "red"}))
    assert "i0" in [again.item_ids[int(r)] for r in again.rows]
    sketchless = SearchSession(gallery, Encoder(), attribute_weight=0.0).step(
        StepQuery(text="a person", require={"top_color": "red"}))
    assert [sketchless.item_ids[int(r)] for r in sketchless.filtered_rows] == ["i0"]


def test_requirement_errors_name_the_problem(gallery):
    session = SearchSession(gallery, Encoder())
    with pytest.raises(QueryInputError, match="does not state hair_color"):
        session.step(StepQuery(text=TEXT, require=["hair_color"]))
    with pytest.raises(QueryInputError, match="query says top_color=red"):
        session.step(StepQuery(text=TEXT, require={"top_color": "green"}))
    with pytest.raises(QueryInputError, match="no attribute evidence"):
        session.step(StepQuery(text=TEXT, require=["top_type"]))
    with pytest.raises(QueryInputError, match="not an attribute"):
        StepQuery(text=TEXT, require=["colour"])
    with pytest.raises(QueryInputError, match="not one of"):
        StepQuery(text=TEXT, require={"top_color": "scarlet"})


def test_explanation_splits_the_score(gallery):
    result = SearchSession(gallery, Encoder(), attribute_weight=0.3).step(TEXT)
    explained = result.explain("i1")
    assert explained["item"] == "i1" and explained["filtered"] is False
    assert explained["similarity"] == pytest.approx(0.8, abs=TOL)
    assert explained["agreement"] == pytest.approx(0.5, abs=TOL)
    assert explained["attribute_contribution"] == pytest.approx(0.15, abs=TOL)
    assert explained["score"] == pytest.approx(0.95, abs=TOL) and explained["attribute_weight"] == 0.3
    by_key = {a["key"]: a for a in explained["attributes"]}
    assert list(by_key) == ["gender", "top_type", "top_color"]
    assert by_key["top_color"]["status"] == "match" and by_key["top_color"]["counted"]
    assert by_key["top_color"]["sources"] == {"pixels": {"probability": 1.0, "confidence": 1.0, "best": "red",
                                                         "best_probability": 1.0, "verdict": "agrees",
                                                         "reads": "red", "reads_probability": 1.0}}
    assert by_key["gender"]["status"] == "no evidence" and by_key["gender"]["counted"]
    assert by_key["top_type"]["status"] == "no evidence" and not by_key["top_type"]["counted"]
    assert explained["matched"] == ["top_color=red"] and explained["mismatched"] == []
    assert explained["evidence"] == "stored"
    mixed = result.explain(0)  # by gallery row: i0, model says male, pixels contradict red
    assert mixed["matched"] == ["gender=male"] and mixed["mismatched"] == ["top_color=red"]
    assert result.explain("i2")["evidence"] == "none for this item"
    line = explanation_line(explained)
    assert line.startswith("score 0.950 = similarity 0.800 + 0.3 × agreement with the description +0.50")
    assert "✓ colour of the top: red by the pixels (1.00); the description says red" in line
    assert "? gender: not read for this item; the description says male" in line
    assert "top_color" not in line and "=" not in line.split("·", 1)[1]
    with pytest.raises(QueryInputError, match="not in the gallery"):
        result.explain("nobody")


def test_steps_without_attributes_or_evidence_are_similarity_only(gallery, tmp_path):
    session = SearchSession(gallery, Encoder())
    similar = session.step(StepQuery(example="i2"))
    assert similar.explain("i2")["attributes"] == [] and similar.explain("i2")["attribute_contribution"] == 0
    second = session.step(StepQuery(text=TEXT, k=1))
    third = session.step(StepQuery(text=TEXT))
    outside = next(i for i in gallery.ids if i not in second.kept_ids)
    with pytest.raises(QueryInputError, match="not a candidate"):
        third.explain(outside)
    bare = Gallery.create(tmp_path / "bare", gallery_views(DIM), "ckpt")
    bare.add([{"id": "x", "source": "s"}], {v: np.eye(DIM, dtype=np.float32)[:1] for v in gallery_views(DIM)})
    result = SearchSession(bare, Encoder(), attribute_weight=5.0).step(TEXT)
    assert float(result.scores[0]) == pytest.approx(1.0)
    assert result.explain("x")["evidence"] == "none in this gallery"


def test_a_step_gathers_evidence_for_its_candidates_only(gallery, monkeypatch):
    sizes = []
    original = store.EvidenceTable.gather

    def spy(self, source, rows, columns):
        sizes.append(len(rows))
        return original(self, source, rows, columns)

    monkeypatch.setattr(store.EvidenceTable, "gather", spy)
    session = SearchSession(gallery, Encoder(), attribute_weight=0.3)
    session.step(StepQuery(text=TEXT, k=2))
    assert sizes and set(sizes) == {6}
    sizes.clear()
    session.step(StepQuery(text=TEXT))
    assert set(sizes) == {2}
    sizes.clear()
    SearchSession(gallery, Encoder(), attribute_weight=0.0).step(TEXT)  # nothing to add, nothing to filter
    assert sizes == []


def test_evidence_follows_the_gallery_when_it_changes(gallery):
    first = evidence_for(gallery)
    assert first is evidence_for(gallery)  # cached while nothing changes
    store.append(gallery.root, ["i2"], [{"pixels": evidence(top_color=("red", 1.0, 1.0))}])
    assert evidence_for(gallery) is not first
    gallery.remove(["i0"])
    result = SearchSession(gallery, Encoder(), attribute_weight=1.0).step(TEXT)
    scores = scores_by_id(result)
    assert "i0" not in scores
    assert scores["i1"] == pytest.approx(0.8 + 0.5, abs=TOL) and scores["i2"] == pytest.approx(0.7 + 0.5, abs=TOL)


def test_explanations_of_the_best_items_match_single_explanations(gallery):
    result = SearchSession(gallery, Encoder(), attribute_weight=0.3).step(TEXT)
    batch = result.explanations(3)
    assert list(batch) == ranked_ids(result)[:3]
    for item_id, explained in batch.items():
        single = result.explain(item_id)
        for entry in single["attributes"]:
            for reading in entry["sources"].values():
                reading.pop("best", None), reading.pop("best_probability", None)
        assert explained == single
    assert result.explanations(0) == {}
