"""Find similar across an outfit change: the step mixes the embedding with the biometric likeness of the stored
model evidence, checked by hand; colours drop out with infrared, candidates without evidence get likeness 0,
and bad requests are refused with the reason."""

from __future__ import annotations

import math

import numpy as np
import pytest
from similarity_gallery import DIM, similarity_gallery

from engine.index import Gallery
from engine.kernel.ontology import BIOMETRIC_KEYS, COLOR_KEYS, ONTOLOGY
from engine.retrieval.encoding.views import BIOMETRICS_VIEW, gallery_views
from engine.retrieval.evidence.likeness import EPSILON
from engine.retrieval.search import QueryInputError, SearchSession, StepQuery
from engine.retrieval.search.outfit_change import LIKENESS_WEIGHT

#: Embedding similarity to the example i0: i1 wears the same clothes (nearest), i2 is the same person in others.
SIMILARITY = [1.0, 0.95, 0.3, 0.5, 0.4, 0.2]
PERSON = {"gender": "male", "skin_color": "light", "age": "young", "height": "tall", "physique": "slim",
          "hairstyle": "short", "hair_color": "black"}


def dist(key, value, p):
    values = ONTOLOGY.attributes[key]
    rest = (1 - p) / (len(values) - 1)
    return {v: (p if v == value else rest) for v in values}


def model_evidence(person, p=0.9):
    probabilities = {key: dist(key, value, p) for key, value in person.items()}
    return {"version": 1, "probabilities": probabilities, "confidence": dict.fromkeys(person, 0.5)}


OTHER = PERSON | {"gender": "female", "age": "elderly", "height": "short", "hairstyle": "long", "hair_color": "blonde"}
EVIDENCE = {
    "i0": {"model": model_evidence(PERSON)},
    "i1": {"model": model_evidence(OTHER)},
    "i2": {"model": model_evidence(PERSON, p=0.8)},
    "i3": {"model": model_evidence(PERSON | {"hair_color": "blonde"})},
    "i4": {"pixels": {"version": 1, "probabilities": {"top_color": dist("top_color", "red", 1.0)},
                      "confidence": {"top_color": 1.0}}},
    # i5 has no evidence row at all
}
MODALITY = {"i3": "ir"}


def same_value(first, second):
    return sum(first[v] * second[v] for v in first)


def key_score(a):
    return (math.log(a + EPSILON) - math.log(EPSILON)) / (math.log(1 + EPSILON) - math.log(EPSILON))


def likeness(example, candidate, keys=BIOMETRIC_KEYS):
    if "model" not in EVIDENCE.get(candidate, {}):
        return 0.0
    e, c = EVIDENCE[example]["model"]["probabilities"], EVIDENCE[candidate]["model"]["probabilities"]
    return sum(key_score(same_value(e[key], c[key])) for key in keys) / len(keys)


def by_hand(candidate, keys=BIOMETRIC_KEYS):
    """The step's score against example i0: (cosine + λ·likeness) / (1 + λ)."""
    similarity = SIMILARITY[int(candidate[1:])]
    return (similarity + LIKENESS_WEIGHT * likeness("i0", candidate, keys)) / (1 + LIKENESS_WEIGHT)


@pytest.fixture
def gallery(tmp_path):
    return similarity_gallery(tmp_path / "g", SIMILARITY, EVIDENCE, MODALITY)


def scores_of(step):
    return {step.item_ids[int(r)]: float(s) for r, s in zip(step.rows, step.scores, strict=True)}


def test_the_step_ranks_by_biometric_likeness_not_by_the_embedding(gallery):
    session = SearchSession(gallery, rho=1.0)
    plain = session.step(StepQuery(example="i0"))
    assert plain.kept_ids[:2] == ["i0", "i1"]  # the embedding finds the same clothes first
    session.undo()
    step = session.step(StepQuery(example="i0", outfit_changed=True))
    scores = scores_of(step)
    assert step.view == BIOMETRICS_VIEW and step.record().view == BIOMETRICS_VIEW
    for item in ("i0", "i1", "i2", "i4", "i5"):  # i4 and i5: no model evidence, likeness 0
        assert scores[item] == pytest.approx(by_hand(item), abs=2e-3)  # vectors and evidence are float16
    rgb_keys = [key for key in BIOMETRIC_KEYS if key not in COLOR_KEYS]
    assert scores["i3"] == pytest.approx(by_hand("i3", rgb_keys), abs=2e-3)  # IR: colours do not count
    assert step.kept_ids == ["i0", "i3", "i2", "i1", "i4", "i5"]  # the same person rises above the same clothes


def test_explanations_name_each_biometric_and_what_the_candidate_shows(gallery):
    session = SearchSession(gallery, rho=1.0)
    step = session.step(StepQuery(example="i0", outfit_changed=True))
    other = step.explain("i1")
    assert other["rule"] == "biometrics" and other["score"] == pytest.approx(scores_of(step)["i1"], abs=1e-6)
    assert other["similarity"] == pytest.approx(SIMILARITY[1], abs=2e-3)
    assert other["likeness"] == pytest.approx(likeness("i0", "i1"), abs=2e-3)
    assert other["likeness_weight"] == LIKENESS_WEIGHT
    by_key = {entry["key"]: entry for entry in other["attributes"]}
    assert list(by_key) == list(BIOMETRIC_KEYS)
    assert by_key["gender"]["value"] == "male" and by_key["gender"]["status"] == "mismatch"
    assert by_key["gender"]["sources"]["model"]["best"] == "female"
    assert by_key["skin_color"]["status"] == "match" and by_key["age"]["status"] == "mismatch"
    infrared = {entry["key"]: entry for entry in step.explain("i3")["attributes"]}
    assert not infrared["hair_color"]["counted"] and infrared["hair_color"]["status"] == "no evidence"
    assert infrared["gender"]["counted"]
    assert step.explain("i5")["evidence"] == "none for this item"
    top = step.explanations(2)
    assert list(top) == ["i0", "i3"] and all(x["rule"] == "biometrics" for x in top.values())


def test_requests_the_mode_cannot_answer_are_refused_with_the_reason(gallery, tmp_path):
    with pytest.raises(QueryInputError, match="example-item"):
        StepQuery(text="a man", outfit_changed=True)
    with pytest.raises(QueryInputError, match="give one of"):
        StepQuery(example="i0", outfit_changed=True, scenario="DT-LT")
    with pytest.raises(QueryInputError, match="true or false"):
        StepQuery(example="i0", outfit_changed="yes")
    session = SearchSession(gallery, rho=1.0)
    with pytest.raises(QueryInputError, match="i4.*no model evidence"):
        session.step(StepQuery(example="i4", outfit_changed=True))
    with pytest.raises(QueryInputError, match="not in the gallery"):
        session.step(StepQuery(example="nobody", outfit_changed=True))
    bare = Gallery.create(tmp_path / "bare", gallery_views(DIM), "ckpt")
    bare.add([{"id": "a", "source": "s.mp4", "frame": 0}], {v: np.eye(1, DIM, dtype=np.float32)
                                                           for v in gallery_views(DIM)})
    with pytest.raises(QueryInputError, match="no model evidence.*rebuild --attributes"):
        SearchSession(bare).step(StepQuery(example="a", outfit_changed=True))
    assert not session.steps


def test_later_steps_keep_narrowing_the_survivors(gallery):
    session = SearchSession(gallery)
    session.reject("i3")
    step = session.step(StepQuery(example="i0", outfit_changed=True, k=3))
    assert step.kept_ids == ["i0", "i2", "i1"]
    assert 3 not in step.rows.tolist()
    follow = session.step(StepQuery(example="i2", k=1))
    assert follow.candidates_before == 3


def test_the_prompt_searches_across_an_outfit_change_end_to_end(tmp_path):
    """Ingest crops with a checkpoint that has attribute heads, then ``:similar ID --outfit-changed``."""
    import json

    import cv2
    from typer.testing import CliRunner

    from engine.retrieval.models import create, save
    from lineup.cli import app

    rng = np.random.default_rng(0)
    crops = tmp_path / "crops"
    crops.mkdir()
    for k in range(5):
        image = np.full((96, 48, 3), 40 * k, np.uint8)
        image[20:80, 10:38] = rng.integers(0, 255, (60, 28, 3), dtype=np.uint8)
        cv2.imwrite(str(crops / f"p{k}.png"), image)
    checkpoint = save(create("tiny", device="cpu"), tmp_path / "ck")
    runner = CliRunner()
    made = runner.invoke(app, ["ingest", str(crops), "--gallery", str(tmp_path / "g"), "--crops", "--checkpoint",
                               str(checkpoint), "--device", "cpu", "--reid", "none", "--json"])
    assert made.exit_code == 0, made.output
    example = Gallery.open(tmp_path / "g").ids[0]
    found = runner.invoke(app, ["search", "--gallery", str(tmp_path / "g"), "--checkpoint", str(checkpoint),
                                "--device", "cpu", "--interactive", "--json", "--keep", "3"],
                          input=f":similar {example} --outfit-changed\n:similar {example}\n")
    assert found.exit_code == 0, found.output
    changed, plain = (json.loads(line) for line in found.stdout.strip().splitlines()[:2])
    assert changed["view"] == BIOMETRICS_VIEW and changed["example"] == example
    assert plain["view"] != BIOMETRICS_VIEW
    assert changed["candidates_after"] == 3 and len(changed["top"]) == 5
    assert all(0.0 <= item["score"] <= 1.0 and item["explanation"]["rule"] == "biometrics" for item in changed["top"])


def test_the_explanation_reads_as_biometrics_in_the_prompt_and_the_detail_pane(gallery):
    from app.views.detail import explanation_html
    from engine.retrieval.evidence.ranking import explanation_line

    step = SearchSession(gallery, rho=1.0).step(StepQuery(example="i0", outfit_changed=True))
    explanation = step.explain("i1")
    line = explanation_line(explanation)
    assert line.startswith(f"score {explanation['score']:.3f} = (similarity 0.950 + {LIKENESS_WEIGHT:g} × likeness")
    assert "✗ gender: female by the model heads (0.90); the example says male" in line
    html = explanation_html({**explanation, "view": step.view})
    assert "likeness of what a change of clothes leaves" in html and "clothing not compared" in html
    assert "gender: female by the model heads (0.90); the example says male" in html


def test_the_similarity_mixed_in_is_the_appearance_view_when_the_gallery_has_one():
    from engine.retrieval.encoding.views import route
    from engine.retrieval.search.outfit_change import similarity_view

    assert similarity_view({"rgb": 8, "appearance": 256}) == "appearance"
    assert similarity_view({"rgb": 8}) == "rgb"
    assert route(has_text=False, has_image=False, example=True, scenario=None, level=None,
                 available={"appearance": 256}, outfit_changed=True).view == "biometrics"
