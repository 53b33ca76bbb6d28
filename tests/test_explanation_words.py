"""Explanations in words, graded against what the evidence read (engine.retrieval.evidence.readings, .wording), and
how far a ranking on real footage can be trusted (engine.retrieval.search.trust), on small real galleries."""

from __future__ import annotations

import json

import numpy as np
import pytest
from fixed_query_encoder import FixedQueryEncoder

from engine.index import Gallery
from engine.index import evidence_table as store
from engine.kernel.ontology import ONTOLOGY, key_label, labels, parse_labels, value_label
from engine.perception.attributes.pretrained import OUTPUTS, evidence_from_outputs
from engine.retrieval.encoding.views import gallery_views
from engine.retrieval.evidence import agreement as agree
from engine.retrieval.evidence.reliability import footage_calibration
from engine.retrieval.evidence.wording import attribute_sentence, explanation_line
from engine.retrieval.search import SearchSession, StepQuery
from engine.retrieval.search.trust import explanation_trust, ranking_trust, step_trust

COLOURS = ONTOLOGY.attributes["top_color"]


def top_colour(shares: dict[str, float], c: float = 1.0) -> dict:
    rest = (1 - sum(shares.values())) / (len(COLOURS) - len(shares))
    return {"version": 1, "probabilities": {"top_color": {v: shares.get(v, rest) for v in COLOURS}},
            "confidence": {"top_color": c}}


def make_gallery(tmp_path, records: list[dict], domain: str | None = None) -> Gallery:
    views = gallery_views(4)
    vectors = np.tile(np.asarray([[0.6, 0.8, 0, 0]], np.float32), (len(records), 1))
    gallery = Gallery.create(tmp_path / "g", views, "ckpt")
    ids = [f"i{k}" for k in range(len(records))]
    gallery.add([{"id": i, "source": "s.mp4", "frame": k} for k, i in enumerate(ids)], {v: vectors for v in views})
    store.append(gallery.root, ids, records)
    if domain is not None:
        gallery.record_ranking(domain, 0.5, "test")
    return gallery


def attribute(explanation: dict, key: str) -> dict:
    return next(a for a in explanation["attributes"] if a["key"] == key)


def network(**outputs: float) -> dict:
    values = [outputs.get(name, 0.5) for name in OUTPUTS]
    return evidence_from_outputs(values).to_dict()


def test_a_colour_both_readers_call_grey_is_a_mismatch_not_a_match(tmp_path):
    grey = top_colour({"gray": 0.45, "white": 0.2})
    gallery = make_gallery(tmp_path, [{"pixels": grey, "model": grey}])
    step = SearchSession(gallery, FixedQueryEncoder(), attribute_weight=0.5).step(StepQuery(text="a white shirt"))
    colour = attribute(step.explain("i0"), "top_color")
    # the ranking's agreement is above chance (0.2 > 1/12): graded against that prior it read as a match
    assert agree.status(colour["agreement"]) == "match"
    assert colour["status"] == "mismatch"
    assert {s: r["verdict"] for s, r in colour["sources"].items()} == {"pixels": "disagrees", "model": "disagrees"}
    assert colour["sources"]["pixels"]["reads"] == "gray"
    sentence = attribute_sentence(colour)
    assert sentence.startswith("✗ colour of the top: grey by the pixels (0.45); grey by the model heads (0.45)")
    assert sentence.endswith("the description says white")
    assert step.explain("i0")["mismatched"] == ["top_color=white"]


def test_a_reading_of_the_stated_colour_is_a_match_and_an_undecided_one_is_unsure(tmp_path):
    gallery = make_gallery(tmp_path, [{"pixels": top_colour({"white": 0.6})},
                                      {"pixels": top_colour({"white": 0.3, "gray": 0.28})}])
    step = SearchSession(gallery, FixedQueryEncoder(), attribute_weight=0.5).step(StepQuery(text="a white shirt"))
    assert attribute(step.explain("i0"), "top_color")["status"] == "match"
    unsure = attribute(step.explain("i1"), "top_color")
    assert unsure["status"] == "unsure" and unsure["sources"]["pixels"]["verdict"] == "undecided"
    assert attribute_sentence(unsure).startswith("~ colour of the top: undecided by the pixels (at most white")


def test_a_value_only_a_prior_share_picks_is_not_read(tmp_path):
    hat = network(has_hat=0.95)
    bare = network(has_hat=0.05)
    gallery = make_gallery(tmp_path, [{"pretrained": hat}, {"pretrained": bare}])
    def step(text):
        return SearchSession(gallery, FixedQueryEncoder(), attribute_weight=0.5).step(StepQuery(text=text))

    hood = step("a person wearing a hood")
    # the network reads "a hat", and splits it among cap, hood, … by fixed shares: which one is a prior
    read = attribute(hood.explain("i0"), "hat_type")
    assert read["status"] == "not read" and read["sources"]["pretrained"]["verdict"] == "group"
    assert set(read["sources"]["pretrained"]["reads"]) == {"cap", "beanie", "brimmed_hat", "helmet", "hood"}
    sentence = attribute_sentence(read)
    assert sentence.startswith("– headwear: one of cap, beanie, brimmed hat, helmet, hood by the attribute network")
    assert "which one not read" in sentence and "✓" not in sentence
    # "no hat at all" is a reading: a hood is then contradicted
    assert attribute(hood.explain("i1"), "hat_type")["status"] == "mismatch"
    none = step("a person with no hat")
    assert attribute(none.explain("i0"), "hat_type")["status"] == "mismatch"
    assert attribute(none.explain("i1"), "hat_type")["status"] == "match"
    assert "no headwear by the attribute network" in attribute_sentence(attribute(none.explain("i1"), "hat_type"))


def test_an_even_split_of_the_pixels_is_a_prior_too(tmp_path):
    hat_types = [v for v in ONTOLOGY.attributes["hat_type"] if v != "none"]
    pixels = {"version": 1, "probabilities": {"hat_type": {"none": 0.1, **{t: 0.9 / len(hat_types)
                                                                         for t in hat_types}}},
              "confidence": {"hat_type": 0.8}}
    gallery = make_gallery(tmp_path, [{"pixels": pixels}])
    step = SearchSession(gallery, FixedQueryEncoder(), attribute_weight=0.5).step(
        StepQuery(text="a person wearing a hood"))
    assert attribute(step.explain("i0"), "hat_type")["status"] == "not read"


def test_a_source_not_trusted_on_footage_does_not_grade(tmp_path):
    model = {"version": 1, "probabilities": {"carrying_type": {v: (0.9 if v == "backpack" else 0.1 / 6)
                                                               for v in ONTOLOGY.attributes["carrying_type"]}},
             "confidence": {"carrying_type": 1.0}}
    footage = make_gallery(tmp_path, [{"model": model}], domain="footage")
    _, data = footage_calibration()
    assert data["reliability"]["model"]["carrying_type"]["r"] == 0.0  # measured: no better than no idea
    step = SearchSession(footage, FixedQueryEncoder(), attribute_weight=0.5).step(
        StepQuery(text="a woman with a backpack"))
    carried = attribute(step.explain("i0"), "carrying_type")
    assert carried["status"] == "not read" and carried["sources"]["model"]["verdict"] == "untrusted"
    assert "the model heads: not trusted on this gallery" in attribute_sentence(carried)


def test_explanation_lines_use_words_never_field_names(tmp_path):
    gallery = make_gallery(tmp_path, [{"pixels": top_colour({"red": 0.9})}])
    step = SearchSession(gallery, FixedQueryEncoder(), attribute_weight=0.5).step(
        StepQuery(text="a man in a red shirt"))
    line = explanation_line(step.explain("i0"))
    assert "✓ colour of the top: red by the pixels (0.90); the description says red" in line
    assert "? gender: not read for this item; the description says male" in line
    assert not [key for key in ONTOLOGY.keys if "_" in key and key in line]
    assert "_" not in line and "=" not in line.split("·", 1)[1]


def test_the_label_table_words_every_key_and_only_ontology_values():
    assert key_label("top_color") == "colour of the top" and value_label("top_color", "gray") == "grey"
    assert value_label("hat_type", "none") == "no headwear" and value_label("carrying_type", "none") == \
        "nothing carried"
    assert value_label("top_type", "t_shirt") == "T-shirt" and value_label("age", "young") == "young"
    assert set(labels().keys) == set(ONTOLOGY.keys)
    shipped = {"keys": dict(labels().keys)}
    with pytest.raises(ValueError, match="missing \\['gender'\\]"):
        parse_labels({"keys": {k: v for k, v in shipped["keys"].items() if k != "gender"}}, ONTOLOGY)
    with pytest.raises(ValueError, match="hat_type=fedora"):
        parse_labels({**shipped, "values_by_key": {"hat_type": {"fedora": "fedora"}}}, ONTOLOGY)


def calibration_accuracy(source: str, keys: list[str]) -> tuple[float, float]:
    _, data = footage_calibration()
    rows = [data["reliability"][source][k] for k in keys if k in data["reliability"][source]]
    return (sum(r["accuracy"] for r in rows) / len(rows), sum(r["majority"] for r in rows) / len(rows))


def test_footage_trust_states_each_sources_measured_accuracy_and_warns_where_weak():
    keys = ["gender", "top_color", "carrying_type"]
    trust = ranking_trust("footage", ["model", "pixels", "pretrained", "objects"], keys)
    assert [s.source for s in trust.sources] == ["pixels", "model", "objects", "pretrained"]
    by = {s.source: s for s in trust.sources}
    accuracy, majority = calibration_accuracy("model", keys)
    assert by["model"].accuracy == pytest.approx(accuracy) and by["model"].majority == pytest.approx(majority)
    assert by["model"].weak and accuracy < majority  # the heads read these worse than guessing the commonest value
    assert not by["objects"].measured and not by["objects"].weak
    assert set(by["pretrained"].auc) == {"is_male", "has_backpack"}  # has_bag had no positives: no AUC
    _, data = footage_calibration()
    crops = data["measured_on"]["crops"]
    assert f"Measured on {crops} hand-labelled real crops" in trust.sentence
    assert f"the model heads right {100 * accuracy:.0f}% of the time (guessing the commonest value: " \
           f"{100 * majority:.0f}%)" in trust.sentence
    assert "the carried objects: not measured on these attributes" in trust.sentence
    assert trust.weak and trust.warning.startswith("Scores on real footage are weak: the model heads read")
    assert json.loads(json.dumps(trust.to_dict()))["sources"][1]["weak"] is True

    strong = ranking_trust("footage", ["pretrained"], ["gender"])
    assert not strong.weak and strong.warning is None
    world = ranking_trust("world", ["model"], ["gender"])
    assert world is not None and not world.weak and world.warning is None and "world" in world.sentence
    assert ranking_trust(None, ["model"], ["gender"]) is None


def test_step_and_explanation_trust_read_the_gallerys_domain_and_sources(tmp_path):
    model = {"version": 1, "probabilities": {"gender": {"male": 0.8, "female": 0.2}},
             "confidence": {"gender": 1.0}}
    gallery = make_gallery(tmp_path, [{"model": model, "pixels": top_colour({"red": 0.9})}], domain="footage")
    step = SearchSession(gallery, FixedQueryEncoder(), attribute_weight=0.5).step(
        StepQuery(text="a man in a red shirt"))
    trust = step_trust(step, gallery)
    assert trust.domain == "footage" and trust.keys == ("gender", "top_type", "top_color")
    assert [s.source for s in trust.sources] == ["pixels", "model"]  # the sources this gallery holds
    one = explanation_trust(step.explain("i0"), gallery)
    assert [s.source for s in one.sources] == ["pixels", "model"] and one.sentence == trust.sentence
