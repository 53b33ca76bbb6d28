"""Follow a sighting to the next camera (engine/retrieval/search/follow.py): the follow step's query, a step over
the whole gallery (``StepQuery.whole_gallery``), the proposals grouped into sightings with their direction,
and attribute agreement breaking near-ties only."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.index import Gallery, evidence_table
from engine.index.sightings import Sighting, group_sightings
from engine.kernel.ontology import ATTRIBUTE_KEYS, ONTOLOGY
from engine.retrieval.search import NoCandidatesError, QueryInputError, SearchSession, StepQuery
from engine.retrieval.search.follow import (
    FOLLOW_KEEP,
    MAX_WINDOW,
    TIE_WEIGHT,
    attribute_agreement,
    duration,
    follow_query,
    gallery_cameras,
    proposals,
)

DIM = 8
HOUR = 3600.0
T0 = 1_700_000_000.0


def unit(x):
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def make_gallery(root, rows, *, vectors=None, seed=3):
    """``rows``: (id, camera, time, identity); each identity's items share a direction plus a little noise."""
    rng = np.random.default_rng(seed)
    people = sorted({r[3] for r in rows})
    centres = {p: unit(rng.standard_normal(DIM)) for p in people}
    if vectors is None:
        vectors = unit(np.stack([centres[r[3]] + 0.1 * rng.standard_normal(DIM) for r in rows]))
    gallery = Gallery.create(root, {"rgb": DIM}, "ckpt-follow")
    gallery.add([{"id": i, "source": f"{c}.mp4", "frame": k, "time": t, "camera": c, "identity": p}
                 for k, (i, c, t, p) in enumerate(rows)], {"rgb": vectors})
    return gallery


#: the person followed (p0) on cam0, seen again on cam1 an hour later, on cam2 half an hour before, and on cam1
#: three days later (outside a 12-hour window); others around them
ROWS = [
    ("a1", "cam0", T0, "p0"), ("a2", "cam0", T0 + 4, "p0"),
    ("b1", "cam1", T0 + HOUR, "p0"), ("b2", "cam1", T0 + HOUR + 3, "p0"),
    ("c1", "cam2", T0 - HOUR / 2, "p0"),
    ("d1", "cam1", T0 + 72 * HOUR, "p0"),
    ("e1", "cam0", T0 + 60, "p1"), ("e2", "cam1", T0 + 2 * HOUR, "p1"), ("e3", "cam2", T0 + 3 * HOUR, "p1"),
    ("f1", "cam1", T0 + 5 * HOUR, "p2"), ("f2", "cam2", T0 - 4 * HOUR, "p2"), ("f3", "cam0", T0 + HOUR, "p2"),
]


@pytest.fixture
def gallery(tmp_path):
    return make_gallery(tmp_path / "gallery", ROWS)


def followed(gallery) -> Sighting:
    return group_sightings([gallery.item("a1"), gallery.item("a2")], {"a1": 1.0, "a2": 0.5})[0]


def test_the_follow_query_looks_on_the_other_cameras_within_the_window_over_the_whole_gallery(gallery):
    sighting = followed(gallery)
    query = follow_query(gallery, sighting, window=12 * HOUR)
    assert gallery_cameras(gallery) == ["cam0", "cam1", "cam2"]
    assert query.example == "a1" and query.cameras == frozenset({"cam1", "cam2"})
    assert query.time_range == (T0 - 12 * HOUR, T0 + 4 + 12 * HOUR)
    assert query.whole_gallery and query.k == FOLLOW_KEEP and query.scenario is None
    assert follow_query(gallery, sighting, window=HOUR, rho=0.5).k is None
    assert [duration(s) for s in (36.0, 2700.0, 12 * HOUR, 3 * 86400.0)] == ["36 s", "45 min", "12 h", "3 days"]


@pytest.mark.parametrize("window", [0, -5.0, math.nan, math.inf, MAX_WINDOW * 2, True, "12h"])
def test_a_bad_window_is_refused_by_name(gallery, window):
    with pytest.raises(QueryInputError, match="follow window"):
        follow_query(gallery, followed(gallery), window=window)


def test_sightings_without_camera_or_time_and_single_camera_galleries_are_refused(gallery, tmp_path):
    with pytest.raises(QueryInputError, match="no camera"):
        follow_query(gallery, Sighting(None, T0, T0, ("a1",), "a1", None, (None, None)), window=HOUR)
    with pytest.raises(QueryInputError, match="no time"):
        follow_query(gallery, Sighting("cam0", None, None, ("a1",), "a1", None, (None, None)), window=HOUR)
    with pytest.raises(QueryInputError, match="not in the gallery"):
        follow_query(gallery, Sighting("cam0", T0, T0, ("zz",), "zz", None, (None, None)), window=HOUR)
    with pytest.raises(QueryInputError, match="needs a sighting"):
        follow_query(gallery, "a1", window=HOUR)
    with pytest.raises(NoCandidatesError, match=r"no item of another camera \(cam1, cam2\) was seen within 36 s"):
        follow_query(gallery, followed(gallery), window=36.0)
    lonely = make_gallery(tmp_path / "lonely", [("x1", "cam0", T0, "p0"), ("x2", "cam0", T0 + 9, "p1")])
    with pytest.raises(QueryInputError, match="one camera only"):
        follow_query(lonely, Sighting("cam0", T0, T0, ("x1",), "x1", None, (None, None)), window=HOUR)


def test_whole_gallery_must_be_a_flag():
    with pytest.raises(QueryInputError, match="whole_gallery"):
        StepQuery(example="a1", whole_gallery="yes")


def test_a_whole_gallery_step_scores_every_item_but_the_rejected_after_a_narrowing_step(gallery):
    session = SearchSession(gallery)
    first = session.step(StepQuery(example="a1", cameras=frozenset({"cam0"}), k=2))
    assert {gallery.ids[r] for r in first.kept} == {"a1", "a2"}
    session.reject("f1")
    session.confirm("a2")
    assert set(session.candidates().tolist()) == set(first.kept.tolist())
    everything = session.candidates(whole_gallery=True)
    assert {gallery.ids[r] for r in everything} == set(gallery.ids) - {"f1"}
    step = session.step(follow_query(gallery, followed(gallery), window=12 * HOUR))
    assert step.candidates_before == len(gallery) - 1 and step.record().whole_gallery
    scored = {gallery.ids[r] for r in step.rows}
    assert scored == {"b1", "b2", "c1", "e2", "e3", "f2", "a2"}  # other cameras in the window, plus the confirmed
    narrow = session.branch(0).step(StepQuery(example="a1", k=2))
    assert narrow.candidates_before == 2  # without whole_gallery: the items step 1 kept


def test_proposals_are_the_other_cameras_sightings_best_first_with_their_direction(gallery):
    session = SearchSession(gallery)
    session.confirm("a2")
    step = session.step(follow_query(gallery, followed(gallery), window=12 * HOUR))
    found = proposals(step, gallery, count=10)
    assert found[0].sighting.items == ("b1", "b2") and found[0].direction == "after"
    assert found[0].sighting.camera == "cam1" and found[0].sighting.best in ("b1", "b2")
    assert found[0].score == max(step.score_of(gallery.row(i))[0] for i in ("b1", "b2"))
    by_items = {p.sighting.items: p for p in found}
    assert by_items[("c1",)].direction == "before" and by_items[("f2",)].direction == "before"
    assert by_items[("e2",)].direction == "after"
    proposed = {i for p in found for i in p.sighting.items}
    assert "d1" not in proposed  # three days later: outside the window
    assert not proposed & {"a1", "a2", "e1", "f3"}  # the followed camera, confirmed or not
    assert [p.score for p in found] == sorted((p.score for p in found), reverse=True)  # no evidence: by score
    assert all(p.agreement is None for p in found)
    assert len(proposals(step, gallery)) == 5 and len(proposals(step, gallery, count=2)) == 2
    without = proposals(step, gallery, count=10, exclude={"b1", "b2"})
    assert ("b1", "b2") not in {p.sighting.items for p in without}
    assert found[0].to_dict()["direction"] == "after" and found[0].to_dict()["items"] == ["b1", "b2"]


def test_proposals_need_a_follow_step_and_a_whole_count(gallery):
    session = SearchSession(gallery)
    plain = session.step(StepQuery(example="a1", k=5))
    with pytest.raises(QueryInputError, match="not a follow step"):
        proposals(plain, gallery)
    step = session.step(follow_query(gallery, followed(gallery), window=HOUR))
    with pytest.raises(QueryInputError, match="count"):
        proposals(step, gallery, count=0)


def reading(values: dict[str, str]) -> dict:
    probabilities = {key: {v: (0.9 if v == value else 0.1 / (len(ONTOLOGY.attributes[key]) - 1))
                           for v in ONTOLOGY.attributes[key]} for key, value in values.items()}
    return {"model": {"version": 1, "probabilities": probabilities, "confidence": dict.fromkeys(values, 0.8)}}


def test_attribute_agreement_breaks_near_ties_but_never_overturns_a_clear_match(tmp_path):
    rows = [("x", "cam0", T0, "p0"), ("same", "cam1", T0 + HOUR, "p0"), ("other", "cam2", T0 + HOUR, "p1"),
            ("far", "cam1", T0 + 2 * HOUR, "p2"), ("blank", "cam2", T0 + 3 * HOUR, "p3")]
    rng = np.random.default_rng(0)
    base = unit(rng.standard_normal(DIM))
    off = unit(base + 2.0 * unit(rng.standard_normal(DIM)))
    # "other" looks exactly like the example, "same" a hair less: a near-tie; "far" is clearly less alike
    vectors = np.stack([base, unit(base + 0.01 * off), base, off, unit(base + 0.5 * off)])
    gallery = make_gallery(tmp_path / "g", rows, vectors=unit(vectors))
    person = {key: ONTOLOGY.attributes[key][0] for key in ATTRIBUTE_KEYS}
    stranger = {key: ONTOLOGY.attributes[key][-1] for key in ATTRIBUTE_KEYS}
    evidence_table.append(gallery.root, ["x", "same", "other", "far"],
                          [reading(person), reading(person), reading(stranger), reading(person)],
                          model_fingerprint="ckpt-follow")
    agreement = attribute_agreement(gallery, "x", ["same", "other", "blank"])
    assert agreement[0] > 0.9 and agreement[1] < 0.5 and math.isnan(agreement[2])
    step = SearchSession(gallery).step(follow_query(gallery, group_sightings([gallery.item("x")])[0], window=HOUR * 6))
    found = proposals(step, gallery)
    order = [p.sighting.items[0] for p in found]
    scores = {p.sighting.items[0]: p.score for p in found}
    assert scores["other"] > scores["same"] and scores["other"] - scores["same"] < TIE_WEIGHT
    assert order[:2] == ["same", "other"]  # the near-tie goes to the agreeing attributes
    assert scores["far"] < scores["blank"] < scores["same"] - TIE_WEIGHT
    assert order.index("blank") < order.index("far")  # agreement does not lift a clearly worse match
    assert next(p for p in found if p.sighting.items == ("blank",)).agreement is None
