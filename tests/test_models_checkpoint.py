"""Checkpoint folders (save/load) and loading an open_clip CLIP state dict into the backbone (no downloads)."""

import json
import warnings

import pytest
import torch
import torch.nn.functional as F
from open_clip.model import CLIP, CLIPTextCfg, CLIPVisionCfg
from safetensors.torch import save_file

from engine.retrieval.models import (
    CheckpointError,
    create,
    load,
    load_backbone_weights,
    load_config,
    model_fingerprint,
    read_metadata,
    save,
)

IMAGES = torch.randn(2, 3, 32, 16, generator=torch.Generator().manual_seed(0))
TEXTS = ["a woman in a red coat", "a man with a backpack"]


def _open_clip(image_size) -> CLIP:
    torch.manual_seed(3)
    return CLIP(
        embed_dim=32,
        vision_cfg=CLIPVisionCfg(layers=2, width=32, head_width=16, mlp_ratio=2.0, patch_size=8, image_size=image_size),
        text_cfg=CLIPTextCfg(context_length=24, vocab_size=49408, width=32, heads=2, layers=2, mlp_ratio=2.0),
    ).eval()


def _patch_tiny():
    return load_config("tiny").with_overrides({"vision": {"stem": "patch", "stem_channels": []}})


def test_save_and_load_round_trip(tmp_path):
    model = create("tiny", device="cpu")
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.01 * torch.randn_like(p))
    target = tmp_path / "ckpt"
    save(model, target, {"training_command": "lineup train --config tiny", "data_fingerprint": "abc", "epoch": 3})
    assert sorted(p.name for p in target.iterdir()) == ["config.json", "metadata.json", "weights.safetensors"]
    meta = read_metadata(target)
    assert meta["training_command"] == "lineup train --config tiny" and meta["epoch"] == 3
    assert meta["eval_report"] is None and meta["config_name"] == "tiny"
    assert meta["parameters"] == sum(p.numel() for p in model.parameters())
    loaded = load(target, device="cpu")
    assert loaded.config == model.config and not loaded.training
    torch.testing.assert_close(loaded.encode_images(IMAGES, level="C"), model.encode_images(IMAGES, level="C"))
    torch.testing.assert_close(loaded.encode_text(TEXTS)[0], model.encode_text(TEXTS)[0])
    # saving again replaces the folder and leaves no temporary siblings
    save(loaded, target)
    assert read_metadata(target)["training_command"] is None
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt"]


def test_fingerprint_survives_save_and_load_and_follows_weights_and_config(tmp_path):
    model = create("tiny", device="cpu")
    fingerprint = model_fingerprint(model)
    assert len(fingerprint) == 64 and int(fingerprint, 16) >= 0
    assert model_fingerprint(load(save(model, tmp_path / "ckpt"), device="cpu")) == fingerprint
    with torch.no_grad():
        next(model.parameters()).view(-1)[0] += 1.0
    changed = model_fingerprint(model)
    assert changed != fingerprint
    renamed = create(load_config("tiny").with_overrides({"name": "tiny-copy"}), device="cpu")
    renamed.load_state_dict(model.state_dict())
    assert model_fingerprint(renamed) != changed


def test_bad_checkpoints_are_reported(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere"):
        load(tmp_path / "nowhere")
    model = create("tiny", device="cpu")
    with pytest.raises(ValueError, match="JSON"):
        save(model, tmp_path / "x", {"bad": object()})
    assert not (tmp_path / "x").exists() and list(tmp_path.iterdir()) == []
    target = save(model, tmp_path / "ckpt")
    config = json.loads((target / "config.json").read_text())
    config["vision"]["layers"] = 1
    (target / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="unexpected"):
        load(target)
    (target / "weights.safetensors").unlink()
    with pytest.raises(CheckpointError, match="weights.safetensors"):
        load(target)


def test_backbone_weights_reproduce_the_open_clip_model(tmp_path):
    reference = _open_clip((32, 16))
    path = tmp_path / "clip.pt"
    torch.save(reference.state_dict(), path)
    model = create(_patch_tiny(), device="cpu")
    report = load_backbone_weights(model, path)
    assert report.missing_backbone == [] and not report.skipped
    assert "backbone.visual.transformer.resblocks.0.mlp.c_fc.weight" in report.loaded
    assert any("token_embedding" in key for key, _ in report.adapted)  # <mask> row added
    assert any(key == "backbone.positional_embedding" for key, _ in report.adapted)  # context 24 → 32
    # new components start neutral, so the model computes what the pretrained CLIP computes
    with torch.no_grad():
        expected_image = F.normalize(reference.encode_image(IMAGES), dim=-1)
        ids = model.tokenizer(TEXTS)
        expected_text = F.normalize(reference.encode_text(ids[:, :24]), dim=-1)
    for level in ("UC", "UF"):
        torch.testing.assert_close(model.encode_images(IMAGES, level=level), expected_image, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(model.encode_text(TEXTS)[0], expected_text, atol=1e-5, rtol=1e-4)
    # papers' initialisation of new components: MoAE from fc1/fc2, scenario tokens from the class token
    block, pretrained_mlp = model.visual_blocks[1], reference.visual.transformer.resblocks[1].mlp
    assert torch.equal(block.scenario_experts.up["NT"].weight, pretrained_mlp.c_fc.weight)
    assert torch.equal(block.scenario_experts.down["LT"].bias, pretrained_mlp.c_proj.bias)
    assert torch.equal(model.scenario_tokens[5], reference.visual.class_embedding)
    assert torch.equal(model.scenario_positions[0], reference.visual.positional_embedding[0])
    text = report.summary()
    assert "new      backbone.visual.transformer.resblocks.*.granularity_experts" in text and "(×2)" in text


def test_positional_grid_is_resampled_and_conv_stem_weights_are_skipped(tmp_path):
    square = _open_clip(16)  # 2×2 patch grid
    path = tmp_path / "clip.safetensors"
    save_file({k: v.contiguous() for k, v in square.state_dict().items()}, str(path))
    model = create(_patch_tiny(), device="cpu")
    report = load_backbone_weights(model, path)
    assert ("backbone.visual.positional_embedding", "patch grid resampled to 4×2 (bicubic)") in report.adapted
    torch.testing.assert_close(model.backbone.visual.positional_embedding[0], square.visual.positional_embedding[0])
    stem_model = create("tiny", device="cpu")
    wrapped = tmp_path / "wrapped.pt"
    torch.save({"state_dict": {f"module.{k}": v for k, v in square.state_dict().items()}, "epoch": 1}, wrapped)
    report = load_backbone_weights(stem_model, wrapped)
    assert [key for key, _ in report.skipped] == ["visual.conv1.weight"]
    assert report.missing_backbone == []
    assert torch.equal(stem_model.backbone.ln_final.weight, square.ln_final.weight)


def test_torchscript_archive_as_released_by_openai_loads(tmp_path):
    reference = _open_clip((32, 16))
    path = tmp_path / "ViT-tiny.pt"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracing is deprecated in torch, but OpenAI ships such archives
        traced = torch.jit.trace(
            reference, (IMAGES[:1], torch.zeros(1, 24, dtype=torch.long)), strict=False, check_trace=False
        )
        torch.jit.save(traced, str(path))
    model = create(_patch_tiny(), device="cpu")
    report = load_backbone_weights(model, path)
    assert report.missing_backbone == [] and [key for key, _ in report.skipped] == ["attn_mask"]
    with torch.no_grad():
        expected = F.normalize(reference.encode_image(IMAGES), dim=-1)
    torch.testing.assert_close(model.encode_images(IMAGES), expected, atol=1e-5, rtol=1e-4)


def test_missing_or_unreadable_backbone_file(tmp_path):
    model = create("tiny", device="cpu")
    with pytest.raises(FileNotFoundError, match="no_clip.pt"):
        load_backbone_weights(model, tmp_path / "no_clip.pt")
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="junk.pt"):
        load_backbone_weights(model, junk)


def test_half_precision_weights_halve_the_file_and_load_back_close(tmp_path):
    model = create("tiny", device="cpu")
    full, half = tmp_path / "full", tmp_path / "half"
    save(model, full)
    save(model, half, weights_dtype=torch.float16)
    full_size = (full / "weights.safetensors").stat().st_size
    half_size = (half / "weights.safetensors").stat().st_size
    assert half_size < 0.55 * full_size
    assert read_metadata(half)["weights_dtype"] == "float16"
    loaded = load(half, device="cpu")
    assert all(p.dtype == torch.float32 for p in loaded.parameters())
    torch.testing.assert_close(loaded.encode_text(TEXTS)[0], model.encode_text(TEXTS)[0], atol=5e-3, rtol=0)


def test_export_to_fp16_halves_the_weights_and_keeps_the_metadata(tmp_path):
    import torch
    from typer.testing import CliRunner

    from engine.retrieval.models import create, load, read_metadata, save
    from engine.retrieval.models.checkpoint import export_checkpoint
    from lineup.cli import app

    torch.manual_seed(0)
    source = save(create("tiny", device="cpu"), tmp_path / "run" / "model",
                  extra_metadata={"training_command": "lineup train …", "seed": 4})
    out = export_checkpoint(source, tmp_path / "shipped", weights_dtype=torch.float16, extra_metadata={"note": "x"})
    metadata = read_metadata(out)
    assert metadata["weights_dtype"] == "float16" and metadata["training_command"] == "lineup train …"
    assert metadata["seed"] == 4 and metadata["note"] == "x" and metadata["exported_from"] == str(source)
    size = lambda folder: (folder / "weights.safetensors").stat().st_size  # noqa: E731
    assert size(out) < 0.6 * size(source)
    original, copy = load(source, device="cpu"), load(out, device="cpu")
    for (name, a), (_, b) in zip(original.state_dict().items(), copy.state_dict().items(), strict=True):
        assert a.dtype == b.dtype, name
        if a.is_floating_point():
            assert torch.allclose(a, b, rtol=1e-3, atol=1e-4), name
    result = CliRunner().invoke(app, ["checkpoint", "info", str(out), "--json"])
    assert result.exit_code == 0 and '"weights_dtype": "float16"' in result.output
    result = CliRunner().invoke(app, ["checkpoint", "export", str(tmp_path / "none"), str(tmp_path / "x")])
    assert result.exit_code != 0 and "not found" in result.output
