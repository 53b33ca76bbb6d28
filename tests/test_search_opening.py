"""``engine.retrieval.search.opening``: the one way the CLI and the app assemble a search. The query encoder carries the
checkpoint's attribute weight, the session takes the weight by step > session > gallery > checkpoint > default,
and every step records which rule gave its level, so transcripts and the case store need not ask the encoder."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from engine.index import Gallery
from engine.retrieval.encoding.model_encoder import ModelQueryEncoder, encode_items, model_views
from engine.retrieval.evidence.ranking import DEFAULT_ATTRIBUTE_WEIGHT
from engine.retrieval.models import create
from engine.retrieval.search import QueryInputError, StepQuery
from engine.retrieval.search.opening import open_search, query_encoder
from engine.retrieval.search.transcript import step_record


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return create("tiny", device="cpu")


@pytest.fixture(scope="module")
def gallery(model, tmp_path_factory):
    rng = np.random.default_rng(5)
    crops = [rng.integers(0, 256, (64, 32, 3), dtype=np.uint8) for _ in range(6)]
    vectors = encode_items(model, crops, ["rgb"] * 6, ["HR"] * 6)
    store = Gallery.create(tmp_path_factory.mktemp("opening") / "g", model_views(model),
                           ModelQueryEncoder(model).fingerprint)
    store.add([{"id": f"i{k}", "source": f"s{k}.png", "camera": "c1"} for k in range(6)], vectors)
    return store


def checkpoint_folder(tmp_path, weight) -> str:
    folder = tmp_path / "ckpt"
    folder.mkdir(exist_ok=True)
    (folder / "metadata.json").write_text(json.dumps({"attribute_weight": weight}), encoding="utf-8")
    return str(folder)


def test_the_query_encoder_carries_the_checkpoints_weight(model, tmp_path):
    encoder = query_encoder(model, checkpoint_folder(tmp_path, 0.7), level_rule="classifier")
    assert isinstance(encoder, ModelQueryEncoder)
    assert encoder.attribute_weight == 0.7 and encoder.level_rule == "classifier"
    with pytest.raises(QueryInputError, match="attribute_weight"):
        query_encoder(model, checkpoint_folder(tmp_path, "lots"))


def test_weight_precedence_step_session_gallery_checkpoint_default(model, gallery, tmp_path):
    encoder = query_encoder(model, checkpoint_folder(tmp_path, 0.7))
    assert open_search(gallery, encoder).attribute_weight == 0.7
    assert open_search(gallery, encoder).weight_origin == "checkpoint"
    assert open_search(gallery, encoder, attribute_weight=0.2).attribute_weight == 0.2
    plain = ModelQueryEncoder(model)
    assert open_search(gallery, plain).attribute_weight == DEFAULT_ATTRIBUTE_WEIGHT
    step = open_search(gallery, encoder, attribute_weight=0.2).step(StepQuery(text="a man in a red top",
                                                                                 attribute_weight=1.25))
    assert step.attribute_term.weight == 1.25
    gallery.record_ranking("footage", 2.5, "calibrated for footage")
    reopened = Gallery.open(gallery.root)
    assert open_search(reopened, encoder).attribute_weight == 2.5
    assert open_search(reopened, encoder, attribute_weight=0.2).attribute_weight == 0.2


def test_each_step_records_the_rule_that_gave_its_level(model, gallery):
    for rule in ("parser", "classifier"):
        encoder = ModelQueryEncoder(model, level_rule=rule)
        session = open_search(gallery, encoder, rho=0.5)
        step = session.step("a man in a red top and blue jeans")
        expected_level, expected_rule = encoder.level_and_source("a man in a red top and blue jeans")
        assert step.level == expected_level and step.level_source == "encoder"
        assert step.level_rule == expected_rule and step.level_origin == expected_rule
        assert step_record(gallery, step, 3)["level_source"] == expected_rule
    overridden = open_search(gallery, ModelQueryEncoder(model)).step(StepQuery(text="a man", level="F"))
    assert overridden.level_rule is None and overridden.level_origin == "override"
