"""The next question to ask the witness: expected information gain per unstated key
(engine/retrieval/evidence/next_question.py), its wiring after a session's step and the CLI's step JSON."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from engine.kernel.ontology import ONTOLOGY
from engine.retrieval.evidence.next_question import (
    MIN_COVERAGE,
    KeyReading,
    WitnessPrior,
    candidate_weights,
    expected_gain,
    load_prior,
    open_keys,
    parse_prior,
    question_text,
    rank_questions,
)

EVERYONE_KNOWS = WitnessPrior({key: 1.0 for key in ONTOLOGY.keys}, {})


def sure(key: str, values: list[str], confidence: float = 1.0) -> KeyReading:
    """Each candidate read as one value, surely."""
    options = ONTOLOGY.attributes[key]
    p = np.zeros((len(values), len(options)))
    for i, value in enumerate(values):
        p[i, options.index(value)] = 1.0
    return KeyReading(p, np.full(len(values), confidence))


def test_a_key_that_splits_the_candidates_outranks_one_they_all_agree_on():
    even = sure("top_color", ["red", "blue", "black", "white"] * 5)
    agreed = sure("bottom_color", ["blue"] * 20)
    weights = candidate_weights(np.zeros(20))
    assert expected_gain(even, weights) == pytest.approx(2.0, abs=1e-9)  # four equal groups: two bits
    assert expected_gain(agreed, weights) == pytest.approx(0.0, abs=1e-9)
    ranked = rank_questions({"bottom_color": agreed, "top_color": even}, weights, EVERYONE_KNOWS)
    assert [q["key"] for q in ranked] == ["top_color", "bottom_color"]
    first = ranked[0]
    assert list(first["values"].items()) == [("black", 0.25), ("white", 0.25), ("red", 0.25), ("blue", 0.25)]
    assert first["question"] == "Was the top black, white or red?"  # ties in ontology order
    assert "reason" not in first and "one value (blue)" in ranked[1]["reason"]


def test_unreliable_readings_give_less():
    weights = candidate_weights(np.zeros(12))
    values = ["red", "blue", "black"] * 4
    assert expected_gain(sure("top_color", values, 0.3), weights) < expected_gain(sure("top_color", values), weights)


def test_missing_evidence_ranks_low_and_says_why():
    n = 20
    weights = candidate_weights(np.zeros(n))
    rare = sure("top_color", ["red", "blue"] * 10)
    rare.c[4:] = np.nan  # only 4 of 20 candidates read
    rare.p[4:] = np.nan
    weak_but_read = sure("gender", ["male"] * 14 + ["female"] * 6, confidence=0.4)
    ranked = rank_questions({"top_color": rare, "gender": weak_but_read}, weights, EVERYONE_KNOWS)
    assert [q["key"] for q in ranked] == ["gender", "top_color"]
    assert ranked[1]["reason"].startswith("no evidence on 80 % of the candidates")
    assert ranked[1]["values"] == {"red": 0.1, "blue": 0.1}  # shares of all candidates
    assert 4 / n < MIN_COVERAGE


def test_the_witness_prior_discounts_and_conditions_apply():
    weights = candidate_weights(np.zeros(8))
    shoes = sure("shoe_type", ["sneakers", "boots"] * 4)
    top = sure("top_type", ["jacket", "coat"] * 4)
    prior = WitnessPrior({**EVERYONE_KNOWS.knows, "shoe_type": 0.25}, {"night": {"top_type": 0.1}})
    ranked = rank_questions({"shoe_type": shoes, "top_type": top}, weights, prior)
    assert [(q["key"], q["gain"]) for q in ranked] == [("top_type", 1.0), ("shoe_type", 0.25)]
    assert "witnesses often do not know it (25 % do)" in ranked[1]["reason"]
    at_night = rank_questions({"shoe_type": shoes, "top_type": top}, weights, prior, condition="night")
    assert [(q["key"], q["gain"]) for q in at_night] == [("shoe_type", 0.25), ("top_type", 0.1)]
    with pytest.raises(ValueError, match="unknown witness condition 'fog'"):
        rank_questions({"top_type": top}, weights, prior, condition="fog")


def test_scores_weight_the_candidates():
    # the best-scored half all read red: the answer hardly splits the likely targets
    reading = sure("top_color", ["red"] * 10 + ["blue", "black", "white", "green", "pink"] * 2)
    flat = expected_gain(reading, candidate_weights(np.zeros(20)))
    peaked = expected_gain(reading, candidate_weights(np.r_[np.full(10, 1.0), np.zeros(10)]))
    assert peaked < flat
    assert candidate_weights(np.array([0.3, 0.3])).tolist() == [0.5, 0.5]
    with pytest.raises(ValueError, match="finite"):
        candidate_weights(np.array([0.1, np.nan]))


def test_shipped_prior_covers_every_key_and_bad_tables_are_named():
    prior = load_prior()
    assert set(prior.knows) == set(ONTOLOGY.keys)
    assert prior.knows_key("top_color") > prior.knows_key("shoe_type")
    assert prior.knows_key("top_color", "night") < prior.knows_key("top_color")
    with pytest.raises(ValueError, match="prior.json: 'knows' must give every ontology key"):
        parse_prior({"version": 1, "knows": {"gender": 1.0}}, "prior.json")
    with pytest.raises(ValueError, match=r"knows.gender must be a number in \[0, 1\]"):
        parse_prior({"version": 1, "knows": {**prior.knows, "gender": 2}}, "p")


def test_viewing_conditions_and_their_labels_come_from_the_prior_data():
    from engine.kernel.resources import resource_path
    from engine.kernel.witness_prior import UnknownConditionError

    data = json.loads(resource_path("witness_prior.json").read_text(encoding="utf-8"))
    prior = load_prior()
    assert prior.choices == ("ordinary", *data["conditions"])
    assert [prior.label(c) for c in prior.choices] == [data["labels"][c] for c in prior.choices]
    assert prior.condition("ordinary") is None and prior.condition(None) is None
    assert prior.condition("night") == "night"
    # another table's conditions are its own: a condition added in the data is a choice, labelled by its name
    rain = parse_prior({**data, "conditions": {**data["conditions"], "rain": {"top_color": 0.8}}}, "p")
    assert rain.choices[-1] == "rain" and rain.label("rain") == "rain"
    assert rain.knows_key("top_color", "rain") == pytest.approx(0.8 * rain.knows["top_color"])
    with pytest.raises(UnknownConditionError, match="unknown witness condition 'dusk'; choose one of "
                                                    "ordinary, night, far"):
        prior.condition("dusk")
    with pytest.raises(ValueError, match="choose one of ordinary, night, far"):
        rank_questions({}, np.zeros(0), prior, condition="dusk")  # refused even with nothing to rank
    with pytest.raises(ValueError, match="may not be called 'ordinary'"):
        parse_prior({**data, "conditions": {"ordinary": {}}}, "p")
    with pytest.raises(ValueError, match="'labels' must map some of"):
        parse_prior({**data, "labels": {"fog": "in fog"}}, "p")
    with pytest.raises(ValueError, match="'labels' must map some of"):
        parse_prior({**data, "labels": {"night": ""}}, "p")


def test_questions_are_worded_from_the_ontology():
    assert question_text("top_color", ["red", "blue", "black"]) == "Was the top red, blue or black?"
    assert question_text("bottom_color", ["gray"]) == "Were the bottoms grey?"
    assert question_text("hair_color", ["brown", "blonde"]) == "Was the hair brown or blonde?"
    assert question_text("physique", ["slim", "heavy"]) == "Build: slim or heavy?"
    # every other key reads as its label and the choices, whatever the label's grammar
    assert question_text("bottom_type", ["jeans", "shorts"]) == "Kind of bottoms: jeans or shorts?"
    assert question_text("hat_type", ["none", "cap"]) == "Headwear: no headwear or cap?"
    assert question_text("age", []) == "What was the age?"
    with pytest.raises(ValueError, match="unknown attribute key 'shoe_color'"):
        question_text("shoe_color", ["red"])


def test_open_keys_leave_out_stated_hidden_and_colours_of_absent_items():
    keys = open_keys({"gender": "male", "hat_type": "none"}, hidden=["top_color"])
    assert "gender" not in keys and "top_color" not in keys and "hat_color" not in keys
    assert "carrying_color" in keys and len(keys) == len(ONTOLOGY.keys) - 4
    with pytest.raises(ValueError, match="not ontology keys"):
        open_keys({}, hidden=["shoe_colour"])


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(
    hnp.arrays(np.float64, (n, 3), elements=st.floats(0, 1) | st.just(float("nan"))),
    hnp.arrays(np.float64, (n,), elements=st.floats(0, 1) | st.just(float("nan"))),
    hnp.arrays(np.float64, (n,), elements=st.floats(-50, 50)))))
def test_gains_are_finite_and_never_negative(case):
    p, c, scores = case
    reading = KeyReading(p, c)
    gain = expected_gain(reading, candidate_weights(scores))
    assert math.isfinite(gain) and gain >= 0.0
    ranked = rank_questions({"skin_color": reading}, candidate_weights(scores), EVERYONE_KNOWS)
    assert math.isfinite(ranked[0]["gain"]) and ranked[0]["gain"] >= 0.0


# ------------------------------------------------------------------------------------------- a real session


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    import torch

    from engine.ingest import ModelEncoder, ingest
    from engine.lab.world.build import build_world
    from engine.retrieval.models import create, save

    root = tmp_path_factory.mktemp("next_question")
    build_world(root / "world", identities=6, images_per_identity=4, seed=4)
    torch.manual_seed(0)
    model = create("tiny", device="cpu")
    checkpoint = save(model, root / "checkpoint")
    ingest(root / "world", root / "gallery", ModelEncoder(model))
    return root / "gallery", checkpoint


def test_cli_steps_carry_the_next_questions(built):
    from typer.testing import CliRunner

    from lineup.cli import app

    gallery, checkpoint = built
    args = ["search", "--gallery", str(gallery), "--checkpoint", str(checkpoint), "--device", "cpu",
            "--text", "a man", "--then", "a man in a red jacket"]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    first, second = json.loads(result.stdout)["steps"]
    for step, stated in ((first, {"gender"}), (second, {"gender", "top_type", "top_color"})):
        questions = step["next_questions"]
        assert 1 <= len(questions) <= 3
        assert not {q["key"] for q in questions} & stated
        gains = [q["gain"] for q in questions]
        assert all(g >= 0 for g in gains)
        for q in questions:
            assert q["question"].endswith("?") and set(q["values"]) <= set(ONTOLOGY.attributes[q["key"]])
            assert sum(q["values"].values()) <= 1.0 + 1e-6
    text = CliRunner().invoke(app, args)
    assert text.exit_code == 0 and "  ask 1: " in text.stdout and " bits " in text.stdout


def test_questions_after_a_step_use_the_chain_and_hidden_keys(built):
    from engine.index import Gallery
    from engine.retrieval.models.discovery import load_model
    from engine.retrieval.search.opening import open_search, query_encoder
    from engine.retrieval.search.questions import questions_after, stated_in_chain

    gallery, checkpoint = built
    session = open_search(Gallery.open(gallery), query_encoder(load_model(checkpoint, device="cpu"), checkpoint))
    first = session.step("a woman")
    second = session.step("a person in a blue coat")
    assert stated_in_chain(session.steps) == {"gender": "female", "top_type": "coat", "top_color": "blue"}
    after_second = questions_after(session, top=None)
    assert {q["key"] for q in after_second}.isdisjoint({"gender", "top_type", "top_color"})
    assert "top_color" in {q["key"] for q in questions_after(session, first, top=None)}
    best = after_second[0]["key"]
    assert best not in {q["key"] for q in questions_after(session, second, hidden=[best], top=None)}


def test_the_bench_oracle_and_witnesses():
    from types import SimpleNamespace

    from bench_modules import load_bench

    bench = load_bench("next_question")
    people = [{"top_color": c, "gender": "male", "age": a} for c, a in
              (("red", "young"), ("blue", "young"), ("black", "young"), ("white", "elderly"))]
    gallery = SimpleNamespace(item=lambda row: SimpleNamespace(attributes=people[row]))
    assert bench.true_split(gallery, np.arange(4), ["gender", "age", "top_color"]) == ["top_color", "age", "gender"]
    rng = np.random.default_rng(0)
    truth = {"top_color": "red"}
    assert bench.answer(truth, "top_color", 0.0, rng) == "red"
    assert bench.answer(truth, "top_color", 1.0, rng) != "red"  # always wrong: another value
    assert bench.answer(truth, "hat_color", 0.0, rng) is None  # no value: "don't know"
    assert bench.SEED == 86421


def test_cli_witness_saw_reranks_for_the_condition(built):
    from typer.testing import CliRunner

    from lineup.cli import app

    gallery, checkpoint = built
    args = ["search", "--gallery", str(gallery), "--checkpoint", str(checkpoint), "--device", "cpu",
            "--text", "a man", "--json"]
    runs = {}
    for saw in ("ordinary", "night"):
        result = CliRunner().invoke(app, [*args, "--witness-saw", saw])
        assert result.exit_code == 0, result.output
        (step,) = json.loads(result.stdout)["steps"]
        assert step["witness_saw"] == saw
        runs[saw] = {q["key"]: q["gain"] for q in step["next_questions"]}
    night_factors = load_prior().conditions["night"]
    both = runs["ordinary"].keys() & runs["night"].keys()
    colours = [key for key in both if key in night_factors and key.endswith("_color") and runs["ordinary"][key] > 0]
    assert colours, runs  # a colour key is asked either way, and worth less from a witness who saw at night
    assert all(runs["night"][key] < runs["ordinary"][key] for key in colours)
    assert all(runs["night"][key] == runs["ordinary"][key] for key in both if key not in night_factors)
    assert runs["night"] != runs["ordinary"]
    default = CliRunner().invoke(app, args)
    assert {q["key"]: q["gain"] for q in json.loads(default.stdout)["steps"][0]["next_questions"]} == runs["ordinary"]
    text = CliRunner().invoke(app, [*args[:-1], "--witness-saw", "night"])
    assert "questions for a witness who saw the person at night:" in text.stdout
    wrong = CliRunner().invoke(app, [*args, "--witness-saw", "dusk"])
    said = " ".join(re.sub("[│╭╮╰╯─]", " ", wrong.output).split())  # the words, out of the error's box
    assert wrong.exit_code == 2 and "'dusk' is not one of 'ordinary', 'night', 'far'" in said


def test_the_console_sets_how_the_witness_saw(built):
    from typer.testing import CliRunner

    from lineup.cli import app

    gallery, checkpoint = built
    lines = "a man\n:saw\n:saw night\n:saw dusk\n:saw night far\na man in a coat\n"
    result = CliRunner().invoke(app, ["search", "--gallery", str(gallery), "--checkpoint", str(checkpoint),
                                      "--device", "cpu", "--interactive", "--json"], input=lines)
    assert result.exit_code == 0, result.output
    step, listed, saw, second = [json.loads(line) for line in result.stdout.splitlines()]
    assert step["witness_saw"] == "ordinary"
    assert listed["witness_conditions"] == [{"name": "ordinary", "label": "normally", "current": True},
                                            {"name": "night", "label": "at night", "current": False},
                                            {"name": "far", "label": "from far", "current": False}]
    assert saw["witness_saw"] == "night"
    ordinary = {q["key"]: q["gain"] for q in step["next_questions"]}
    night = {q["key"]: q["gain"] for q in saw["next_questions"]}
    assert night != ordinary and all(night[k] <= ordinary[k] for k in night.keys() & ordinary.keys())
    assert second["witness_saw"] == "night"  # the next steps keep it
    assert ":saw dusk: unknown witness condition 'dusk'; choose one of ordinary, night, far" in result.stderr
    assert ":saw needs one condition (ordinary, night, far), got night far" in result.stderr
