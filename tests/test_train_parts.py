"""Trainer parts: loss composition, learning-rate schedule, text sampling, batch assembly, captioned data."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import torch
from tiny_training import build_tiny_world, tiny_run

from engine.kernel.ontology import LEVELS, ONTOLOGY
from engine.lab.data.export import export_cuhk_pedes
from engine.lab.train import compose_losses, load_run_config
from engine.lab.train.batches import BatchBuilder
from engine.lab.train.config import TrainConfig, TrainConfigError
from engine.lab.train.data import build_training_data
from engine.lab.train.forward import forward_train
from engine.lab.train.optim import LearningRateFactor, build_optimizer, freeze_all_but, trainable_matcher
from engine.lab.train.texts import TextSource, attribute_token_mask, ordinary_token_mask
from engine.retrieval.models import create
from engine.retrieval.models.names import RESOLUTIONS

ALL_OFF = {
    "granularity": {"enabled": False}, "gcr": {"enabled": False}, "adapters": {"enabled": False},
    "fusion": {"kind": "none"}, "resolution": {"embedding": False}, "crst": {"rcr": False, "tgr": False},
    "scenarios": {"enabled": False, "moae": False}, "attributes": {"image": False, "text": False},
    "losses": {"sdm": 1.0, "tal": 0.0, "pcia": False, "orthogonality": 0.0, "gcr": 0.0, "routing_entropy": 0.0,
               "fusion_sdm": 0.0, "sdm_low_resolution": 0.0, "rcr": 0.0, "tgr": 0.0, "cr_rda": 0.0,
               "scenario_id": 0.0, "said": False, "hdw": False, "attributes": 0.0},
}
EVERY_TERM = {"sdm", "tal", "orthogonality", "gcr", "routing_entropy", "fusion_sdm", "sdm_low_resolution", "rcr",
              "tgr", "cr_rda", "scenario_id", "attributes"}


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    return build_tiny_world(tmp_path_factory.mktemp("partsworld") / "w")


def _merge(base: dict, extra: dict) -> dict:
    out = {k: dict(v) if isinstance(v, dict) else v for k, v in base.items()}
    for key, value in extra.items():
        out[key] = {**out.get(key, {}), **value} if isinstance(value, dict) else value
    return out


def _step_outputs(world: Path, overrides: dict, data_spec: str | None = None, seed: int = 0, **training):
    run = load_run_config(tiny_run(overrides, **training))
    data = build_training_data(data_spec or f"world:{world}", run.model, seed=seed, validation_identities=2,
                               queries_per_identity=1, identities_per_batch=2)
    config = run.model
    if config.scenarios.enabled and config.losses.scenario_id > 0:
        config = config.with_overrides({"scenarios": {"num_person_ids": data.num_identities,
                                                      "num_clothing_ids": data.num_clothing}})
    data.load_images()
    torch.manual_seed(seed)
    model = create(config, device="cpu").train()
    builder = BatchBuilder(data, config, run.training.replace(identities_per_batch=2), model.tokenizer)
    generator = torch.Generator().manual_seed(seed)
    batch = builder.build(list(range(6)), random.Random(seed), generator)
    outputs = forward_train(model, batch.images, batch.token_ids, **batch.forward_kwargs())
    return config, batch, outputs, compose_losses(outputs, batch, config, generator), data, builder


@pytest.mark.parametrize(("overrides", "expected"), [
    (ALL_OFF, {"sdm"}),
    (_merge(ALL_OFF, {"granularity": {"enabled": True}, "gcr": {"enabled": True}, "attributes": {"image": True},
                      "losses": {"tal": 1.0, "pcia": True, "orthogonality": 1.0, "gcr": 1.0, "attributes": 1.0}}),
     {"sdm", "tal", "orthogonality", "gcr", "attributes"}),
    ({}, EVERY_TERM),
    ({"losses": {"routing_entropy": 0.0, "cr_rda": 0.0, "scenario_id": 0.0, "said": False, "hdw": False}},
     EVERY_TERM - {"routing_entropy", "cr_rda", "scenario_id"}),
    (_merge(ALL_OFF, {"fusion": {"kind": "mean"}, "losses": {"fusion_sdm": 1.0}}), {"sdm", "fusion_sdm"}),
    (_merge(ALL_OFF, {"fusion": {"kind": "mean", "keys": "sequence"}, "losses": {"fusion_sdm": 1.0}}),
     {"sdm", "fusion_sdm"}),  # FlexiReID's no-CMQF rows: mean fusion, whatever the recipe's CMQF keys
    (_merge(ALL_OFF, {"fusion": {"kind": "cmqf", "keys": "sequence"}, "losses": {"fusion_sdm": 1.0}}),
     {"sdm", "fusion_sdm"}),
])
def test_loss_composition_has_exactly_the_enabled_terms(world, overrides, expected):
    config, _, _, losses, _, _ = _step_outputs(world, overrides)
    assert set(losses.terms) == expected
    weights = config.losses
    assert losses.weights == {name: getattr(weights, name) for name in expected}
    total = sum(losses.weights[name] * value for name, value in losses.terms.items())
    assert torch.allclose(losses.total, total) and torch.isfinite(losses.total)
    assert all(value.requires_grad for value in losses.terms.values())


def test_sdm_uses_the_hr_view_and_the_lr_terms_the_refined_view(world):
    _, batch, outputs, losses, _, _ = _step_outputs(world, {})
    from engine.lab.losses.sdm import sdm_loss

    tau = 0.02
    expected = sdm_loss(outputs["text_embeds"], outputs["image_embeds_hr"], batch.match_labels, tau)
    assert torch.allclose(losses.terms["sdm"], expected)
    low = sdm_loss(outputs["text_embeds"], outputs["image_embeds_refined"], batch.match_labels, tau)
    assert torch.allclose(losses.terms["sdm_low_resolution"], low)
    assert len(outputs["fused"]) == 7  # every query mode: text, sketch and IR are all present


def test_text_matches_follow_the_outfit_rule(world):
    _, batch, outputs, losses, data, _ = _step_outputs(world, {})
    from engine.lab.losses.sdm import sdm_loss

    items = [data.pairs[i] for i in range(6)]
    assert batch.match_labels.tolist() == [item.clothing for item in items]
    assert len({(i.label, i.clothing) for i in items}) > len({i.label for i in items})  # two outfits of one person
    by_identity = sdm_loss(outputs["text_embeds"], outputs["image_embeds_hr"], batch.labels, 0.02)
    assert not torch.allclose(losses.terms["sdm"], by_identity)
    _, legacy, _, _, _, _ = _step_outputs(world, {}, text_positives="identity")
    assert torch.equal(legacy.match_labels, legacy.labels)


def test_low_resolution_views_at_the_world_sizes(world):
    _, _, _, _, _, builder = _step_outputs(world, {})
    hr = torch.rand(4, 3, 96, 48)
    resolution = torch.tensor([0, 1, 2, 3])  # hr, mild, mid, ultra
    source = torch.tensor([[256, 128]] * 4)
    views = builder.low_resolution_views(hr, resolution, source)
    assert torch.equal(views[0], hr[0]) and torch.equal(views[1], hr[1])  # 128×64 is above the 96×48 input
    for row, small in ((2, (64, 32)), (3, (32, 16))):
        down = torch.nn.functional.interpolate(hr[row:row + 1], size=small, mode="area")
        up = torch.nn.functional.interpolate(down, size=(96, 48), mode="bicubic", align_corners=False)
        assert torch.allclose(views[row], up[0])
    by_input = builder.low_resolution_views(hr, resolution)  # the earlier rule: ×2 of the input already blurs
    assert not torch.allclose(by_input[1], hr[1])


def test_batch_inputs_for_every_component(world):
    config, batch, _, _, data, builder = _step_outputs(world, {}, low_resolution_reference="input")
    assert batch.images.shape == batch.hr_images.shape == (6, 3, 32, 16)
    assert batch.sketch.shape == batch.ir.shape == (6, 3, 32, 16)
    # LR views: the HR rows equal their HR image, the others were down- and up-sampled
    hr_rows = batch.resolution == RESOLUTIONS.index("hr")
    assert torch.equal(batch.images[hr_rows], batch.hr_images[hr_rows])
    assert not torch.allclose(batch.images[~hr_rows], batch.hr_images[~hr_rows])
    # RCR: ~15 % of the ordinary tokens of each text are masked, labels only there
    masked = batch.mlm_labels != -100
    ordinary = ordinary_token_mask(batch.token_ids, builder.tokenizer)
    assert bool((masked <= ordinary).all()) and bool(masked.any(dim=1).all())
    assert torch.equal(batch.mlm_labels[masked], batch.token_ids[masked])
    assert bool((batch.mismatch_levels != batch.levels).all())
    # Uni-AT: RGB and IR images of every batch identity with clothing ids of the right person
    assert set(batch.reid_person.tolist()) == set(batch.labels.tolist())
    assert set(batch.reid_modality.tolist()) == {0, 1}
    assert torch.equal(data.clothing_person[batch.reid_clothing], batch.reid_person)
    # PCIA codes: the text states a subset of the image's attributes
    stated = batch.query_codes >= 0
    assert torch.equal(batch.query_codes[stated], batch.fine_codes[stated])


def test_world_texts_are_fresh_and_match_their_level():
    attributes = {key: values[0] for key, values in ONTOLOGY.attributes.items()}
    attributes.update({"hat_type": "cap", "carrying_type": "backpack"})
    rng = random.Random(0)
    for policy in ("range", "upper"):
        source = TextSource(policy, augment=0.0)
        drawn = [source.world_text(attributes, rng) for _ in range(200)]
        assert {d.level for d in drawn} == set(range(len(LEVELS)))
        for d in drawn:
            bounds = ONTOLOGY.levels[d.level]
            assert bounds.min <= len(d.stated) <= bounds.max
            assert all(attributes[k] == v for k, v in d.stated.items())
            if policy == "upper" and LEVELS[d.level] != "UF":
                assert len(d.stated) == bounds.max
        assert len({d.text for d in drawn}) > 150  # fresh wording every time


def test_attribute_tokens_mark_colours_and_garments():
    from engine.retrieval.models.tokenizer import Tokenizer

    tokenizer = Tokenizer(32)
    ids = tokenizer(["a tall man wearing a red jacket and black jeans"])
    words = [tokenizer.decode([int(i)]) for i in ids[0, 1:11]]
    marked = attribute_token_mask(ids, tokenizer)[0, 1:11].tolist()
    chosen = {w for w, m in zip(words, marked, strict=True) if m}
    assert {"red", "jacket", "black", "jeans"} <= chosen and not {"tall", "man", "wearing", "a", "and"} & chosen


def test_learning_rate_schedule_warms_up_then_decays():
    cosine = LearningRateFactor(TrainConfig(epochs=10, warmup_epochs=2, warmup_start_factor=0.1,
                                            min_lr_factor=0.0), steps_per_epoch=10)
    assert cosine(0) == pytest.approx(0.1) and cosine(10) == pytest.approx(0.55) and cosine(20) == pytest.approx(1)
    assert cosine(60) == pytest.approx(0.5) and cosine(100) == pytest.approx(0.0, abs=1e-12)
    steps = LearningRateFactor(TrainConfig(epochs=30, warmup_epochs=2, schedule="multistep"), steps_per_epoch=4)
    assert steps(20) == 1.0 and steps(40) == pytest.approx(0.1) and steps(100) == pytest.approx(0.01)


def test_optimizer_gives_new_modules_the_higher_rate_and_no_decay_to_norms():
    config = load_run_config(tiny_run()).model
    model = create(config, device="cpu")
    training = TrainConfig(lr=1e-3, new_lr_multiplier=2.0, weight_decay=0.1)
    groups = {g["name"]: g for g in build_optimizer(model, training).param_groups}
    assert groups["pretrained/decay"]["lr"] == 1e-3 and groups["new/decay"]["lr"] == 2e-3
    assert groups["new/no_decay"]["weight_decay"] == 0.0 and groups["pretrained/decay"]["weight_decay"] == 0.1
    in_groups = sum(p.numel() for g in groups.values() for p in g["params"])
    assert in_groups == sum(p.numel() for p in model.parameters() if p.requires_grad)


def test_captioned_data_uses_captions_with_parsed_levels(world, tmp_path):
    exported = tmp_path / "cuhk.json"
    export_cuhk_pedes(world, exported, fractions=(1.0, 0.0, 0.0))
    overrides = _merge(ALL_OFF, {"attributes": {"text": True}, "losses": {"attributes": 1.0}})
    _, batch, _, losses, data, _ = _step_outputs(world, overrides,
                                                  data_spec=f"cuhk-pedes:{exported}?root={tmp_path.parent}")
    assert data.kind == "captions" and all(p.captions for p in data.pairs)
    assert set(losses.terms) == {"sdm", "attributes"} and batch.image_attribute_targets is None
    item = data.pairs[0]
    assert len(item.caption_levels) == len(item.captions) == 5
    levels = [lv for p in data.pairs for lv in p.caption_levels]
    assert len(set(levels)) >= 4  # the UC…UF descriptions parse to different levels
    assert sum(p.caption_levels[-1] >= p.caption_levels[0] for p in data.pairs) == len(data.pairs)
    assert "all" in data.validation.queries


def test_validation_counts_matches_by_the_runs_rule(world):
    from engine.lab.train.validate import evaluate as validate

    config, _, _, _, data, builder = _step_outputs(world, {})
    validation = data.validation
    assert validation.gallery_outfits.shape == validation.gallery_identities.shape
    for level, (texts, identities) in validation.queries.items():
        assert validation.query_outfits[level].shape == identities.shape == (len(texts),)
    model = create(config, device="cpu")
    by_outfit = validate(model, validation, builder)
    legacy = BatchBuilder(data, config, builder.training.replace(text_positives="identity"), model.tokenizer)
    by_identity = validate(model, validation, legacy)
    assert set(by_outfit) == set(by_identity) == {"UF", "UC", "S", "IR"}
    # the same ranking scored against fewer positives: never more of them in the list, so mAP differs
    assert any(by_outfit[lv]["mAP"] != by_identity[lv]["mAP"] for lv in by_outfit)


def test_runs_that_train_sketch_and_ir_queries_validate_them_on_held_out_identities(world):
    from engine.lab.train.validate import evaluate as validate

    config, _, _, _, data, builder = _step_outputs(world, {})
    validation = data.validation
    held_out, gallery = set(validation.gallery_identities.tolist()), set(validation.gallery_rows.tolist())
    seen = set()
    for mode in ("S", "IR"):
        rows, identities, outfits = validation.image_queries[mode]
        assert len(rows) == len(identities) == len(outfits) > 0 and set(identities.tolist()) <= held_out
        assert not set(rows.tolist()) & (gallery | seen)  # query images, not the RGB gallery nor each other
        seen |= set(rows.tolist())
    scores = validate(create(config, device="cpu"), validation, builder)
    assert scores["S"]["queries"] == len(validation.image_queries["S"][0])
    assert 0.0 <= scores["IR"]["R@1"] <= scores["IR"]["R@5"] <= 1.0
    plain, _, _, _, plain_data, plain_builder = _step_outputs(world, ALL_OFF)
    assert plain_data.validation.image_queries == {}
    assert set(validate(create(plain, device="cpu"), plain_data.validation, plain_builder)) == {"UF", "UC"}


def test_sketch_and_ir_attribute_supervision_ignores_colours(world):
    from engine.kernel.ontology import ATTRIBUTE_KEYS, COLOR_KEYS
    from engine.lab.train.losses import _attribute_ce, _without_colours

    config, batch, outputs, losses, _, _ = _step_outputs(world, {"losses": {"query_attributes": 0.5}})
    assert losses.weights["query_attributes"] == 0.5
    shown = _without_colours(batch.image_attribute_targets)
    colour_columns = [ATTRIBUTE_KEYS.index(key) for key in COLOR_KEYS]
    assert bool((shown[:, colour_columns] == -100).all())
    assert torch.equal(shown[:, 0], batch.image_attribute_targets[:, 0])  # gender is kept
    expected = _attribute_ce(outputs["attribute_logits_sketch"], shown) + _attribute_ce(
        outputs["attribute_logits_ir"], shown)
    assert torch.allclose(losses.terms["query_attributes"], expected)
    assert losses.terms["query_attributes"].requires_grad
    _, _, off_outputs, off, _, _ = _step_outputs(world, {})
    assert "query_attributes" not in off.terms and "attribute_logits_sketch" not in off_outputs


def test_sketch_and_ir_attribute_supervision_needs_image_heads():
    from engine.lab.train.config import TrainConfigError

    with pytest.raises(TrainConfigError, match="query_attributes"):
        load_run_config(tiny_run({"attributes": {"image": False}, "losses": {"query_attributes": 1.0}}))


def test_trainable_entries_are_prefixes_where_a_star_is_one_dotted_part():
    adapters = trainable_matcher("blocks.*.adapters")
    assert adapters("blocks.0.adapters.down_weight") and adapters("blocks.11.adapters.router.weight")
    assert adapters("blocks.3.adapters")
    assert not adapters("blocks.0.mlp.weight") and not adapters("blocks.0.1.adapters.weight")
    assert not adapters("head.blocks.0.adapters.weight")
    # a prefix either way: a plain entry, and the last part of a patterned one
    assert trainable_matcher("image_attr")("image_attributes.linear.weight")
    assert trainable_matcher("blocks.*.adapters.down")("blocks.2.adapters.down_weight")
    with pytest.raises(ValueError, match=r"\* only as a whole dotted part"):
        TrainConfig.from_dict({"trainable": ["blocks.res*.adapters"]})


def test_freezing_by_a_pattern_trains_only_the_matched_parameters():
    def block() -> torch.nn.Module:
        return torch.nn.ModuleDict({"mlp": torch.nn.Linear(2, 2), "adapters": torch.nn.Linear(2, 2)})

    model = torch.nn.ModuleDict({"blocks": torch.nn.ModuleList([block() for _ in range(3)]),
                                 "norm": torch.nn.BatchNorm1d(2), "head": torch.nn.Linear(2, 2)})
    freeze_all_but(model, ("blocks.*.adapters", "head"))
    trained = {name for name, param in model.named_parameters() if param.requires_grad}
    assert trained == {f"blocks.{i}.adapters.{p}" for i in range(3) for p in ("weight", "bias")} | {
        "head.weight", "head.bias"}
    model.train()
    model["norm"](torch.randn(4, 2))
    assert not model["norm"].training  # a frozen batch norm keeps its running statistics
    with pytest.raises(TrainConfigError, match=r"\['blocks\.\*\.adaptors'\] name no parameter"):
        freeze_all_but(model, ("blocks.*.adaptors",))
