"""PersonSearchModel on the tiny config: inference surface, routing, training outputs, switches."""

import pytest
import torch

from engine.lab.train.forward import forward_train
from engine.retrieval.models import LEVELS, SCENARIOS, create, load_config


def _perturb(model):
    """Give zero-initialised components (experts, adapters, embeddings, TGR) non-zero values."""
    torch.manual_seed(0)
    with torch.no_grad():
        for param in model.parameters():
            if param.requires_grad and param.abs().max() == 0:
                param.normal_(std=0.2)
    return model


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return _perturb(create("tiny", device="cpu"))


def _images(batch: int, seed: int = 1) -> torch.Tensor:
    torch.manual_seed(seed)
    return torch.randn(batch, 3, 32, 16)


TEXTS = ["a woman in a red coat", "a tall man with short black hair, a blue shirt and gray trousers", "a child"]


def test_inference_surface_shapes_and_unit_vectors(model):
    images = _images(3)
    vectors, level_logits = model.encode_text(TEXTS)
    assert vectors.shape == (3, 32) and level_logits.shape == (3, len(LEVELS))
    for out in (
        vectors,
        model.encode_images(images, "rgb", "M", "hr"),
        model.encode_images(images, "ir", torch.tensor([0, 1, 4]), "mid_lr"),
        model.fuse(text=TEXTS, sketch=images, ir=images),
        model.fuse(sketch=images),
        model.encode_reid(images, "NT-LT"),
    ):
        assert torch.allclose(out.norm(dim=-1), torch.ones(out.shape[0]), atol=1e-5)
    assert model.encode_reid(images, "AD-ST").shape == (3, 32)
    assert model.encode_images_all_levels(images).shape == (3, len(LEVELS), 32)
    assert model.device.type == "cpu" and not model.training


def test_mixed_level_batch_equals_one_sample_at_a_time(model):
    images = _images(5)
    levels = torch.tensor([4, 0, 2, 2, 1])
    batched = model.encode_images(images, level=levels)
    for b in range(5):
        alone = model.encode_images(images[b : b + 1], level=LEVELS[int(levels[b])])
        torch.testing.assert_close(batched[b : b + 1], alone, atol=1e-5, rtol=1e-4)
    assert not torch.allclose(batched[2], model.encode_images(images[2:3], level="UC")[0], atol=1e-3)


def test_all_level_views_equal_per_level_encoding(model):
    images = _images(2)
    views = model.encode_images_all_levels(images, modality="rgb", resolution="hr")
    for g, level in enumerate(LEVELS):
        torch.testing.assert_close(views[:, g], model.encode_images(images, level=level), atol=1e-5, rtol=1e-4)


def test_vectors_with_attributes_equal_the_two_separate_calls(model):
    images = _images(3)
    vectors, logits = model.encode_images_with_attributes(images, ["rgb", "ir", "rgb"], None, ["hr", "hr", "mid_lr"])
    assert torch.allclose(vectors, model.encode_images(images, ["rgb", "ir", "rgb"], None, ["hr", "hr", "mid_lr"]),
                          atol=1e-6)
    alone = model.image_attribute_logits(images, ["rgb", "ir", "rgb"], None, ["hr", "hr", "mid_lr"])
    assert set(logits) == set(alone) and all(torch.allclose(logits[k], alone[k], atol=1e-5) for k in alone)


def test_modality_and_resolution_change_the_vector(model):
    images = _images(2)
    rgb = model.encode_images(images, "rgb", "M", "hr")
    assert not torch.allclose(rgb, model.encode_images(images, "sketch", "M", "hr"), atol=1e-3)
    assert not torch.allclose(rgb, model.encode_images(images, "rgb", "M", "ultra_lr"), atol=1e-3)


def test_isolated_scenario_tokens_leave_retrieval_vectors_unchanged(model):
    images = _images(2)
    idx = torch.zeros(2, dtype=torch.long)
    level = torch.full((2,), 4)
    with torch.no_grad():
        plain = model.visual_pass(images, idx, level, idx, scenarios=False)
        with_tokens = model.visual_pass(images, idx, level, idx, scenarios=True)
    assert plain.scenario is None and with_tokens.scenario.shape == (2, len(SCENARIOS), 32)
    torch.testing.assert_close(plain.embedding, with_tokens.embedding, atol=1e-5, rtol=1e-4)
    open_model = _perturb(create(load_config("tiny").with_overrides({"scenarios": {"isolate": False}}), "cpu"))
    with torch.no_grad():
        a = open_model.visual_pass(images, idx, level, idx, scenarios=True)
        b = open_model.visual_pass(images, idx, level, idx, scenarios=False)
    torch.testing.assert_close(a.embedding, b.embedding)  # not isolated: tokens are always present
    assert b.scenario is not None


def test_text_vectors_do_not_depend_on_batch_padding(model):
    together, _ = model.encode_text(TEXTS)
    for i, text in enumerate(TEXTS):
        alone, _ = model.encode_text([text])
        torch.testing.assert_close(together[i : i + 1], alone, atol=1e-5, rtol=1e-4)


def test_forward_train_returns_what_every_loss_needs(model):
    model.train()
    try:
        batch = 4
        images = _images(batch)
        ids = model.tokenizer(TEXTS + ["a man"])
        labels = torch.full_like(ids, -100)
        labels[:, 1:3] = ids[:, 1:3]
        masked_ids = torch.where(labels != -100, torch.full_like(ids, model.tokenizer.mask_id), ids)
        levels = torch.tensor([0, 1, 3, 4])
        out = forward_train(
            model, images, ids, levels=levels, resolution="mid_lr", hr_images=_images(batch, 2), mlm_ids=masked_ids,
            mlm_labels=labels, sketch=_images(batch, 3), ir=_images(batch, 4), reid_images=_images(batch, 5),
            reid_modality=torch.tensor([0, 1, 0, 1]),
        )
        for key in ("image_embeds", "text_embeds", "image_embeds_hr", "image_embeds_refined", "sketch_embeds",
                    "ir_embeds"):
            assert out[key].shape == (batch, 32)
            assert torch.allclose(out[key].norm(dim=-1), torch.ones(batch), atol=1e-5)
        assert len(out["expert_means"]) == 2 and out["expert_means"][0].shape == (batch, len(LEVELS), 32)
        assert out["image_level_logits"].shape == out["text_level_logits"].shape == (batch, len(LEVELS))
        assert out["match_logits"].shape == out["mismatch_logits"].shape == (batch,)
        assert (out["mismatch_levels"] != levels).all()
        assert len(out["router_probs"]) == 4  # 2 visual + 2 text blocks
        tokens_per_image = 1 + (32 // 8) * (16 // 8)
        assert out["router_probs"][0].shape == (3 * batch * tokens_per_image, 6)  # main, sketch, IR segments
        valid_text = int((ids == model.tokenizer.eot_id).int().argmax(dim=1).add(1).sum())
        assert out["router_probs"][2].shape == (valid_text, 6)
        assert list(out["fused"]) == ["T", "S", "IR", "T+S", "T+IR", "S+IR", "T+S+IR"]
        assert out["mlm_logits"].shape == (2 * batch, model.tokenizer.vocab_size)
        assert torch.equal(out["mlm_targets"], ids[:, 1:3].reshape(-1))
        assert out["reliability"].shape == (batch, tokens_per_image)
        assert out["reid_features"].shape == (batch, 6, 32) and len(out["reid_logits"]) == 6
        assert [t.shape[1] for t in out["reid_logits"]] == [8, 4, 8, 4, 8, 4]
        assert len(out["scenario_gates"]) == 2 and set(out["attribute_logits_image"]) == set(
            out["attribute_logits_text"]
        )
        total = sum(
            v.float().mean() for v in _tensors(out) if v.requires_grad and v.dtype.is_floating_point
        )
        total.backward()
        for name in ("granularity_experts", "adapters", "scenario_experts", "fusion", "masked_grounding",
                     "refinement", "level_classifier", "consistency_matcher", "scenario_heads", "image_attributes"):
            grads = [p.grad for n, p in model.named_parameters() if name in n and p.requires_grad]
            assert grads and any(g is not None and g.abs().sum() > 0 for g in grads), name
    finally:
        model.zero_grad(set_to_none=True)
        model.eval()


def _tensors(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)
    elif isinstance(value, list):
        for v in value:
            yield from _tensors(v)


def test_switched_off_components_are_absent():
    off = load_config("ablation_base").to_dict()
    tiny = load_config("tiny").to_dict()
    for section in ("granularity", "gcr", "adapters", "fusion", "resolution", "crst", "scenarios", "losses"):
        tiny[section] = off[section]
    plain = create(tiny, device="cpu")
    names = {n.split(".")[0] for n, _ in plain.named_parameters()}
    assert names == {"backbone", "modality_embedding", "image_attributes", "text_attributes"}
    images = _images(2)
    out = forward_train(plain, images, TEXTS[:2])
    assert {"expert_means", "router_probs", "fused", "mismatch_logits", "reid_features"}.isdisjoint(out)
    vectors, logits = plain.encode_text(TEXTS[:2])
    assert logits is None
    views = plain.encode_images_all_levels(images)
    torch.testing.assert_close(views[:, 0], views[:, 4])
    with pytest.raises(RuntimeError, match="fusion"):
        plain.fuse(text=TEXTS[:1])
    with pytest.raises(RuntimeError, match="scenario"):
        plain.encode_reid(images, "DT-ST")


def test_bad_inputs_are_named(model):
    with pytest.raises(ValueError, match="prepare_images"):
        model.encode_images(torch.randn(1, 3, 64, 32))
    with pytest.raises(ValueError, match="level"):
        model.encode_images(_images(1), level="XL")
    with pytest.raises(ValueError, match="modality"):
        model.encode_images(_images(1), modality="thermal")
    with pytest.raises(ValueError, match="one per sample"):
        model.encode_images(_images(2), level=torch.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="levels are required"):
        forward_train(model, _images(2), TEXTS[:2])
    with pytest.raises(ValueError, match="rows"):
        forward_train(model, _images(2), TEXTS, levels="UC")
    with pytest.raises(ValueError, match="same number of rows"):
        model.fuse(text=TEXTS, sketch=_images(2))
    with pytest.raises(ValueError, match="scenario"):
        model.encode_reid(_images(1), "DT-XX")


def test_prepare_images_resizes_and_normalises(model):
    raw = torch.full((2, 3, 100, 50), 255, dtype=torch.uint8)
    prepared = model.prepare_images(raw)
    assert prepared.shape == (2, 3, 32, 16)
    mean, std = torch.tensor(model.config.vision.mean), torch.tensor(model.config.vision.std)
    torch.testing.assert_close(prepared[0, :, 5, 5], (1 - mean) / std)
    assert model.encode_images(prepared).shape == (2, 32)


def test_parameter_groups_split_pretrained_layout_from_new_components(model):
    groups = model.parameter_groups()
    named = dict(model.named_parameters())
    pretrained = {id(p) for p in groups["pretrained"]}
    assert id(named["backbone.visual.transformer.resblocks.0.attn.in_proj_weight"]) in pretrained
    assert id(named["backbone.token_embedding.weight"]) in pretrained
    expert = named["backbone.visual.transformer.resblocks.0.granularity_experts.experts.0.fc1.weight"]
    assert id(expert) not in pretrained
    assert id(named["backbone.visual.conv1.layers.0.weight"]) not in pretrained  # conv stem replaces conv1
    assert len(groups["pretrained"]) + len(groups["new"]) == len(named)


def test_runs_under_bf16_autocast_as_on_cuda():
    """CUDA runs use bf16 autocast; CPU autocast exercises the same mixed-dtype paths here."""
    model = _perturb(create("tiny", device="cpu"))
    images = _images(4)
    ids = model.tokenizer(TEXTS + ["a man"])
    labels = torch.full_like(ids, -100)
    labels[:, 1] = ids[:, 1]
    full = model.encode_images(images, level=torch.tensor([0, 1, 2, 3]))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        mixed = model.encode_images(images, level=torch.tensor([0, 1, 2, 3]))
        assert mixed.dtype == torch.float32
        assert model.encode_images_all_levels(images).shape == (4, 5, 32)
        assert model.fuse(text=TEXTS[:1], sketch=images[:1]).dtype == torch.float32
        model.train()
        out = forward_train(
            model, images, ids, levels=torch.tensor([0, 1, 2, 3]), resolution="mild_lr", hr_images=images,
            sketch=images, ir=images, mlm_ids=ids, mlm_labels=labels, reid_images=images,
        )
    assert out["image_embeds"].dtype == torch.float32 and out["mlm_logits"].dtype == torch.float32
    (out["image_embeds"].sum() + out["mlm_logits"].mean() + out["fused"]["T+S+IR"].sum()).backward()
    assert ((mixed * full).sum(dim=-1) > 0.99).all()  # bf16 vectors point where the float32 ones do


def test_sequence_key_fusion_runs_in_inference_and_training():
    torch.manual_seed(0)
    config = load_config("tiny").with_overrides({"fusion": {"kind": "cmqf", "keys": "sequence"}})
    model = _perturb(create(config, device="cpu"))
    images = _images(2)
    fused = model.fuse(text=TEXTS[:2], sketch=images)
    assert torch.allclose(fused.norm(dim=-1), torch.ones(2), atol=1e-5)
    longer = model.fuse(text=[TEXTS[0], TEXTS[1] + " and a long grey scarf"], sketch=images)
    torch.testing.assert_close(fused[0], longer[0], atol=1e-5, rtol=1e-4)  # a batch-mate's length changes nothing
    token = create(load_config("tiny").with_overrides({"fusion": {"kind": "cmqf"}}), device="cpu")
    token.load_state_dict(model.state_dict())  # same parameters: a token-key checkpoint warm-starts it
    assert not torch.allclose(fused, token.fuse(text=TEXTS[:2], sketch=images), atol=1e-4)
    model.train()
    out = forward_train(model, images, TEXTS[:2], levels=["UF", "M"], sketch=images, ir=_images(2, seed=3))
    assert set(out["fused"]) == {"T", "S", "IR", "T+S", "T+IR", "S+IR", "T+S+IR"}
    sum(v.sum() for v in out["fused"].values()).backward()
    assert model.fusion.cross["sketch"][0].attn.in_proj_weight.grad.abs().sum() > 0
