"""The real query encoder and the gallery-side encoding over a tiny PersonSearchModel."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest
import torch

from engine.index import Gallery, GalleryMismatchError
from engine.kernel.ontology import LEVELS
from engine.lab.world.build import build_world
from engine.retrieval.encoding.model_encoder import ModelQueryEncoder, check_gallery, encode_items, model_views
from engine.retrieval.encoding.views import gallery_views
from engine.retrieval.models import create
from engine.retrieval.models.config import load_config
from engine.retrieval.search import QueryEncoder, QueryInputError, SearchSession, StepQuery


def tiny_variant(**changes):
    config = load_config("tiny").to_dict()
    for dotted, value in changes.items():
        *path, last = dotted.split(".")
        node = config
        for part in path:
            node = node[part]
        node[last] = value
    torch.manual_seed(1)
    return create(config, device="cpu")


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return create("tiny", device="cpu")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("world") / "w"
    build_world(root, identities=4, images_per_identity=4, seed=3)
    records = [json.loads(line) for line in (root / "manifest.jsonl").read_text().splitlines()]
    photos = [r for r in records if r["modality"] != "sketch"]
    crops = [cv2.imread(str(root / r["image"]), cv2.IMREAD_COLOR) for r in photos]
    sketch = next(r for r in records if r["modality"] == "sketch")
    return root, photos, crops, root / sketch["image"]


@pytest.fixture(scope="module")
def gallery(model, world, tmp_path_factory):
    _, photos, crops, _ = world
    vectors = encode_items(model, crops, [r["modality"] for r in photos], [r["resolution"] for r in photos])
    store = Gallery.create(tmp_path_factory.mktemp("gallery") / "g", model_views(model),
                           ModelQueryEncoder(model).fingerprint)
    store.add([{"id": r["id"], "source": r["image"], "camera": r["camera"], "identity": str(r["identity"])}
               for r in photos], vectors)
    return store


def test_encode_items_gives_every_view_as_ingest_does(model, world):
    from engine.ingest import ModelEncoder

    _, photos, crops, _ = world
    crops = [*crops, cv2.resize(crops[0], (32, 64), interpolation=cv2.INTER_AREA)]  # a crop of another size
    modalities = [r["modality"] for r in photos] + ["rgb"]
    resolutions = [r["resolution"] for r in photos] + ["mid"]
    assert len(set(modalities)) == 2 and len({c.shape for c in crops}) == 2
    vectors = encode_items(model, crops, modalities, resolutions, batch_size=5)
    assert {v: a.shape[1] for v, a in vectors.items()} == model_views(model) == ModelEncoder(model).views
    assert set(model_views(model)) == set(gallery_views(32, scenarios=["AD-LT"]))
    reference = ModelEncoder(model)(crops, modalities, resolutions)
    for view, array in vectors.items():
        assert array.shape == (len(crops), model_views(model)[view]) and array.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(array, axis=1), 1, atol=1e-4)
        np.testing.assert_allclose(array, reference[view], atol=2e-5, err_msg=view)
    np.testing.assert_array_equal(vectors["rgb"], vectors["text:UF"])  # tiny: image_query_level UF
    whole = encode_items(model, crops, modalities, resolutions, batch_size=64)
    for view in vectors:
        np.testing.assert_allclose(vectors[view], whole[view], atol=2e-5)
    empty = encode_items(model, [], [], [])
    assert {v: a.shape for v, a in empty.items()} == {v: (0, d) for v, d in model_views(model).items()}


def test_encode_items_rejects_bad_crops_and_counts(model, world):
    _, _, crops, _ = world
    with pytest.raises(ValueError, match="crop 1 must be a non-empty BGR uint8"):
        encode_items(model, [crops[0], crops[1][:, :, 0]])
    with pytest.raises(ValueError, match="one modality per crop"):
        encode_items(model, crops[:2], ["rgb"])
    with pytest.raises(ValueError, match="resolution 'huge'"):
        encode_items(model, crops[:1], "rgb", "huge")


def test_level_from_parser_then_classifier(model):
    encoder = ModelQueryEncoder(model)
    assert isinstance(encoder, QueryEncoder)
    assert encoder.level_and_source("a man") == ("UC", "parser")
    long = ("a tall young man of slim build with fair skin, short black hair and a red cap, wearing a long-sleeved "
            "blue shirt, long grey trousers and leather shoes, carrying a black backpack")
    assert encoder.level_and_source(long)[0] in ("F", "UF") and encoder.level_for(long) != "UC"
    _, logits = model.encode_text(["qwerty zxcv"])
    assert encoder.level_and_source("qwerty zxcv") == (LEVELS[int(logits[0].argmax())], "classifier")
    by_classifier = ModelQueryEncoder(model, level_rule="classifier")
    _, logits = model.encode_text(["a man"])
    assert by_classifier.level_and_source("a man") == (LEVELS[int(logits[0].argmax())], "classifier")
    no_gcr = ModelQueryEncoder(tiny_variant(**{"gcr.enabled": False, "losses.gcr": 0.0}))
    assert no_gcr.level_and_source("qwerty zxcv") == (None, "none")
    assert no_gcr.level_and_source("a woman") == ("UC", "parser")
    with pytest.raises(QueryInputError, match="level rule"):
        ModelQueryEncoder(model, level_rule="guess")


def test_fused_and_single_modality_vectors(model, world):
    _, _, _, sketch_path = world
    sketch = cv2.cvtColor(cv2.imread(str(sketch_path)), cv2.COLOR_BGR2RGB)
    encoder = ModelQueryEncoder(model)
    fused = encoder.encode_fused("a woman", sketch, None)
    prepared = model.prepare_images(torch.from_numpy(sketch.transpose(2, 0, 1).copy()).unsqueeze(0))
    expected = model.fuse(text=["a woman"], sketch=prepared)[0].numpy()
    np.testing.assert_allclose(fused, expected, atol=1e-5)
    assert abs(np.linalg.norm(fused) - 1) < 1e-4
    assert not np.allclose(fused, encoder.encode_fused("a woman", None, None), atol=1e-3)
    np.testing.assert_allclose(encoder.encode_text("a woman"), model.encode_text(["a woman"])[0][0].numpy())
    with pytest.raises(QueryInputError, match="IR image must be an RGB uint8"):
        encoder.encode_fused(None, None, sketch[:, :, 0])
    with pytest.raises(QueryInputError, match="empty"):
        encoder.encode_fused(None, None, None)
    plain = ModelQueryEncoder(tiny_variant(**{"fusion.kind": "none", "losses.fusion_sdm": 0.0}))
    alone = plain.encode_fused(None, sketch, None)
    np.testing.assert_allclose(alone, plain.model.encode_images(prepared, modality="sketch")[0].numpy(), atol=1e-5)
    with pytest.raises(QueryInputError, match="no query fusion.*text \\+ sketch"):
        plain.encode_fused("a woman", sketch, None)


def test_session_scores_are_the_models_cosines(model, gallery, world):
    _, _, _, sketch_path = world
    encoder = ModelQueryEncoder(model)
    session = SearchSession(gallery, encoder)
    step = session.step("a woman with a backpack")
    assert step.view == "text:UC" and step.level == "UC"
    expected = gallery.vectors("text:UC") @ encoder.encode_text("a woman with a backpack")
    np.testing.assert_allclose(step.scores, expected[step.rows], atol=2e-3)  # float16 storage
    sketch_step = session.step(StepQuery(text="a woman", sketch=sketch_path))
    assert sketch_step.view == "rgb" and sketch_step.candidates_before == step.candidates_after
    similar = SearchSession(gallery, encoder).step(StepQuery(example=gallery.ids[3]))
    assert similar.view == "rgb" and similar.top(1)[0][0] == gallery.ids[3]


def test_checkpoint_that_did_not_build_the_gallery_is_refused(model, gallery):
    ModelQueryEncoder(model).check_gallery(gallery)
    with pytest.raises(GalleryMismatchError, match="32-dimensional vectors in view 'text:UC'.*gives 16"):
        check_gallery(tiny_variant(embed_dim=16), gallery)
    with pytest.raises(GalleryMismatchError, match="reid:AD-LT.*cannot make"):
        check_gallery(tiny_variant(**{"scenarios.enabled": False, "scenarios.moae": False,
                                      "losses.scenario_id": 0.0, "losses.said": False, "losses.hdw": False}), gallery)
    with pytest.raises(GalleryMismatchError, match="fingerprint"):
        SearchSession(gallery, ModelQueryEncoder(tiny_variant()))
