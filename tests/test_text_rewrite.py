"""Queries restated in the generator's words: the rewrite (``engine.retrieval.text.rewrite``), the blend of text vectors
(``engine.retrieval.encoding.text_rewrite``), the checkpoint's weight, and where the search and the evaluation use
it."""

from __future__ import annotations

import json
import random

import pytest
import torch
from bench_modules import load_bench
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from engine.kernel.ontology import ONTOLOGY
from engine.retrieval.encoding.model_encoder import ModelQueryEncoder
from engine.retrieval.encoding.text_rewrite import (
    METADATA_KEY,
    check_rewrite_weight,
    checkpoint_rewrite_weight,
    encode_rewritten,
)
from engine.retrieval.search.errors import QueryInputError
from engine.retrieval.search.opening import query_encoder
from engine.retrieval.text.generator import describe, random_key_subset
from engine.retrieval.text.parser import parse
from engine.retrieval.text.rewrite import canonical_text

# ------------------------------------------------------------------------------------------- rewrite


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_rewrite_states_what_the_parser_reads(seed):
    rng = random.Random(seed)
    person = ONTOLOGY.counted({k: rng.choice(v) for k, v in ONTOLOGY.attributes.items()})
    text = describe(person, random_key_subset(person, rng), rng)
    rewrite = canonical_text(text)
    assert rewrite is not None
    assert parse(rewrite).attributes == parse(text).attributes


def test_rewrite_maps_unseen_words_and_is_deterministic():
    text = "Be on the lookout for a towering lad clad in a ruby anorak"
    rewrite = canonical_text(text)
    assert rewrite == canonical_text(text)
    assert "ruby" not in rewrite and "anorak" not in rewrite
    assert parse(rewrite).attributes == parse(text).attributes
    assert {"gender", "height", "top_color"} <= set(parse(rewrite).attributes)


@pytest.mark.parametrize("text", ["", "   ", "hello there", "12345", "a person"])
def test_rewrite_of_a_text_without_attributes_is_none(text):
    assert parse(text).attributes == {}
    assert canonical_text(text) is None


def test_rewrite_drops_a_colour_whose_item_is_not_stated(monkeypatch):
    import engine.retrieval.text.rewrite as rewrite_module
    from engine.retrieval.text.parser import ParseResult

    read = {"gender": "male", "carrying_color": "red", "hat_type": "none", "hat_color": "blue"}
    monkeypatch.setattr(rewrite_module, "parse", lambda text: ParseResult(dict(read), len(read), None))
    assert parse(canonical_text("anything")).attributes == {"gender": "male", "hat_type": "none"}


# --------------------------------------------------------------------------------------------- blend


def _fake_encode(calls):
    """An encoder whose vector is a fixed function of the text: a seeded random unit vector; logits from len."""

    def encode(texts):
        calls.append(list(texts))
        rows = []
        for text in texts:
            g = torch.Generator().manual_seed(sum(map(ord, text)) % (2**31))
            rows.append(torch.nn.functional.normalize(torch.randn(8, generator=g), dim=0))
        return torch.stack(rows), torch.tensor([[float(len(t))] for t in texts])

    return encode


def test_weight_zero_is_the_plain_encoding_with_one_call():
    calls = []
    texts = ["a man in a red jacket", "hello"]
    vectors, logits = encode_rewritten(_fake_encode(calls), texts, 0.0)
    plain, plain_logits = _fake_encode([])(texts)
    assert torch.equal(vectors, plain) and torch.equal(logits, plain_logits)
    assert calls == [texts]


def test_weight_one_is_the_rewrite_and_texts_without_one_keep_their_vector():
    calls = []
    texts = ["a man in a red jacket", "hello"]
    vectors, logits = encode_rewritten(_fake_encode(calls), texts, 1.0)
    plain, plain_logits = _fake_encode([])(texts)
    rewritten, _ = _fake_encode([])([canonical_text(texts[0])])
    assert torch.allclose(vectors[0], rewritten[0], atol=1e-6)
    assert torch.equal(vectors[1], plain[1])
    assert torch.equal(logits, plain_logits)  # the level logits stay the texts' own
    assert calls == [texts, [canonical_text(texts[0])]]


def test_a_blend_is_the_normalised_weighted_sum():
    text = "a woman in a blue dress with a black handbag"
    vectors, _ = encode_rewritten(_fake_encode([]), [text], 0.25)
    plain, _ = _fake_encode([])([text])
    rewritten, _ = _fake_encode([])([canonical_text(text)])
    expected = torch.nn.functional.normalize(0.75 * plain[0] + 0.25 * rewritten[0], dim=0)
    assert torch.allclose(vectors[0], expected, atol=1e-6)
    assert abs(float(vectors[0].norm()) - 1) < 1e-5


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), float("inf"), True, "0.5", None])
def test_weights_outside_zero_to_one_are_named_errors(bad):
    with pytest.raises(ValueError, match="text rewrite weight must be a number from 0 to 1"):
        check_rewrite_weight(bad)


# ------------------------------------------------------------------------------------- checkpoint weight


def _with_metadata(folder, **entries):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "metadata.json").write_text(json.dumps(entries), encoding="utf-8")
    return folder


def test_checkpoint_weight_recorded_absent_unreadable_and_invalid(tmp_path):
    assert checkpoint_rewrite_weight(_with_metadata(tmp_path / "a", **{METADATA_KEY: 0.5})) == 0.5
    assert checkpoint_rewrite_weight(_with_metadata(tmp_path / "b", other=1)) == 0.0
    broken = tmp_path / "c"
    broken.mkdir()
    (broken / "metadata.json").write_text("{not json", encoding="utf-8")
    assert checkpoint_rewrite_weight(broken) == 0.0
    assert checkpoint_rewrite_weight(tmp_path / "missing") == 0.0
    with pytest.raises(ValueError, match=r"metadata\.json: text_rewrite_weight must be a number from 0 to 1"):
        checkpoint_rewrite_weight(_with_metadata(tmp_path / "d", **{METADATA_KEY: 3}))


# ----------------------------------------------------------------------------------- search and eval


@pytest.fixture(scope="module")
def tiny_model(tiny_checkpoint):
    from engine.retrieval.models import load

    return load(tiny_checkpoint, device="cpu")


def test_query_encoder_blends_at_the_checkpoint_weight(tiny_checkpoint, tiny_model):
    text = "a man in a red jacket and blue jeans"
    metadata_file = tiny_checkpoint / "metadata.json"
    original = metadata_file.read_text(encoding="utf-8")
    try:
        plain = query_encoder(tiny_model, tiny_checkpoint).encode_text(text)
        metadata = json.loads(original)
        metadata[METADATA_KEY] = 1.0
        metadata_file.write_text(json.dumps(metadata), encoding="utf-8")
        encoder = query_encoder(tiny_model, tiny_checkpoint)
        assert encoder.text_rewrite == 1.0
        rewritten = ModelQueryEncoder(tiny_model).encode_text(canonical_text(text))
        assert encoder.encode_text(text) == pytest.approx(rewritten, abs=1e-5)
        assert abs(encoder.encode_text(text) - plain).max() > 1e-3
        metadata[METADATA_KEY] = "lots"
        metadata_file.write_text(json.dumps(metadata), encoding="utf-8")
        with pytest.raises(QueryInputError, match="text_rewrite_weight"):
            query_encoder(tiny_model, tiny_checkpoint)
    finally:
        metadata_file.write_text(original, encoding="utf-8")


def test_query_encoder_rejects_a_bad_weight(tiny_model):
    with pytest.raises(QueryInputError, match="from 0 to 1"):
        ModelQueryEncoder(tiny_model, text_rewrite=2.0)


@pytest.fixture(scope="module")
def small_world(tmp_path_factory):
    from engine.lab.world.build import build_world

    return build_world(tmp_path_factory.mktemp("rewrite") / "world", identities=6, images_per_identity=3,
                       seed=11).parent


def test_evaluation_records_and_applies_the_weight(tiny_model, small_world):
    from engine.lab.evaluation import evaluate

    plain = evaluate(tiny_model, small_world, "mg-separate", texts="both")
    blended = evaluate(tiny_model, small_world, "mg-separate", texts="both", text_rewrite=1.0)
    assert plain["text_rewrite"] == 0.0 and blended["text_rewrite"] == 1.0
    assert plain["gallery"] == blended["gallery"]
    differs = [name for name in plain["text_sets"]
               if plain["text_sets"][name]["overall"] != blended["text_sets"][name]["overall"]]
    assert differs, "a rewrite of every query changed no ranking"


def test_eval_command_rejects_a_bad_weight_by_name(tiny_checkpoint, small_world):
    from lineup.cli import app

    result = CliRunner().invoke(app, ["eval", "--checkpoint", str(tiny_checkpoint), "--world", str(small_world),
                                      "--protocol", "mg-separate", "--text-rewrite", "1.5"])
    assert result.exit_code != 0
    assert "text rewrite weight must be a number from 0 to 1, got 1.5" in result.output
    assert "Traceback" not in result.output


def test_parse_command_shows_the_rewrite():
    from lineup.cli import app

    text = "a bloke in a ruby anorak"
    result = CliRunner().invoke(app, ["parse", text, "--json"])
    assert result.exit_code == 0
    out = json.loads(result.output)
    assert out["rewrite"] == canonical_text(text)
    assert out["attributes"] == parse(text).attributes
    empty = json.loads(CliRunner().invoke(app, ["parse", "hello", "--json"]).output)
    assert empty["rewrite"] is None


def test_bench_chooses_the_best_held_out_weight_that_costs_no_set_more_than_the_tolerance():
    bench = load_bench("text_rewrite")

    def row(w, generated, reframed, paraphrased, handwritten):
        values = {"generated": generated, "reframed": reframed, "paraphrased": paraphrased,
                  "handwritten": handwritten}
        return {"weight": w, "sets": {name: {"mAP": v} for name, v in values.items()}}

    rows = [row(0.0, 0.64, 0.58, 0.01, 0.31), row(0.5, 0.65, 0.59, 0.12, 0.37), row(1.0, 0.64, 0.55, 0.20, 0.39)]
    assert bench.choose(rows)["weight"] == 0.5  # w 1 has the best held-out mean but costs reframed 0.03
    assert [r["largest_loss"] for r in rows] == [0.0, -0.01, 0.03]
    worse = [row(0.0, 0.64, 0.58, 0.01, 0.31), row(1.0, 0.60, 0.58, 0.30, 0.40)]
    assert bench.choose(worse)["weight"] == 0.0


def test_bench_writes_the_chosen_weight(tmp_path, small_world):
    import torch

    from engine.retrieval.models import create, save

    torch.manual_seed(0)
    checkpoint = save(create("tiny", device="cpu"), tmp_path / "checkpoint")
    bench = load_bench("text_rewrite")
    assert bench.main(["--world", str(small_world), "--checkpoint", str(checkpoint), "--weights", "0.5,1",
                       "--write", "--json", str(tmp_path / "out.json")]) == 0
    report = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert [r["weight"] for r in report["world_sweep"]] == [0.0, 0.5, 1.0]
    metadata = json.loads((checkpoint / "metadata.json").read_text(encoding="utf-8"))
    assert metadata[METADATA_KEY] == report["chosen"]
    assert checkpoint_rewrite_weight(checkpoint) == report["chosen"]
    assert metadata["text_rewrite_calibration"]["world_sweep"] == report["world_sweep"]


def test_checkpoint_info_shows_the_query_weights(tmp_path):
    from engine.retrieval.models import create, save
    from lineup.cli import app

    checkpoint = save(create("tiny", device="cpu"), tmp_path / "checkpoint")
    info = json.loads(CliRunner().invoke(app, ["checkpoint", "info", str(checkpoint), "--json"]).output)
    assert info["text_rewrite_weight"] == 0.0 and set(info["attribute_weights"]) >= {"world", "footage"}
    metadata = json.loads((checkpoint / "metadata.json").read_text(encoding="utf-8"))
    metadata.update({METADATA_KEY: 0.75, "attribute_weights": {"footage": 2.0, "world": 0.5}})
    (checkpoint / "metadata.json").write_text(json.dumps(metadata), encoding="utf-8")
    info = json.loads(CliRunner().invoke(app, ["checkpoint", "info", str(checkpoint), "--json"]).output)
    assert info["text_rewrite_weight"] == 0.75 and info["attribute_weights"] == {"footage": 2.0, "world": 0.5}
    metadata[METADATA_KEY] = -1
    (checkpoint / "metadata.json").write_text(json.dumps(metadata), encoding="utf-8")
    result = CliRunner().invoke(app, ["checkpoint", "info", str(checkpoint)])
    assert result.exit_code != 0 and "text_rewrite_weight must be a number from 0 to 1" in result.output
    assert "Traceback" not in result.output
