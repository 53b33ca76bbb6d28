"""Realism augmentation (engine.lab.data.realism): reproducible, each step moves the image statistics the way a
camera does, and in training it reaches RGB and IR images but never sketches, with realism 0 the old batches."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny_training import build_tiny_world, tiny_run

from engine.lab.data.augment import ImageAugment
from engine.lab.data.image_statistics import (
    ImageStatisticsError,
    blockiness,
    brightness,
    crop_statistics,
    high_frequency,
    noise,
    red_share,
    saturation,
)
from engine.lab.data.realism import RealismAugment, RealismConfigError
from engine.lab.train import load_run_config
from engine.lab.train.batches import BatchBuilder
from engine.lab.train.config import TrainConfig, TrainConfigError
from engine.lab.train.data import build_training_data
from engine.retrieval.models import create

STEPS = ("squash", "cast", "tone", "saturation", "defocus", "motion", "lowres", "noise", "jpeg")
NONE = {f"{step}_p": 0.0 for step in STEPS}


def only(step: str, **ranges) -> RealismAugment:
    """The chain with just ``step`` on, always."""
    return RealismAugment(**{**NONE, f"{step}_p": 1.0}, **ranges)


def scenes(count: int = 6, height: int = 96, width: int = 48, seed: int = 0) -> torch.Tensor:
    """uint8 RGB batch of flat coloured rectangles on a mid-grey ground: sharp edges, no noise."""
    rng = np.random.default_rng(seed)
    out = np.full((count, height, width, 3), 128, dtype=np.uint8)
    for image in out:
        for _ in range(12):
            y, x = rng.integers(0, height - 8), rng.integers(0, width - 6)
            h, w = rng.integers(6, height - y + 1), rng.integers(4, width - x + 1)
            image[y:y + h, x:x + w] = rng.integers(20, 236, 3)
    return torch.from_numpy(out).permute(0, 3, 1, 2).contiguous()


def as_arrays(batch: torch.Tensor) -> list[np.ndarray]:
    return list(batch.permute(0, 2, 3, 1).cpu().numpy())


def mean_statistic(function, batch: torch.Tensor) -> float:
    return float(np.mean([function(image) for image in as_arrays(batch)]))


def test_the_same_generator_gives_the_same_batch_and_another_seed_another():
    images = scenes()
    augment = RealismAugment()
    a = augment(images, torch.Generator().manual_seed(4))
    b = augment(images, torch.Generator().manual_seed(4))
    c = augment(images, torch.Generator().manual_seed(5))
    assert torch.equal(a, b) and not torch.equal(a, c) and not torch.equal(a, images)


def test_probability_zero_is_the_identity():
    images = scenes()
    assert torch.equal(RealismAugment(apply_p=0.0)(images, torch.Generator().manual_seed(0)), images)
    assert torch.equal(RealismAugment(**NONE)(images, torch.Generator().manual_seed(0)), images)
    floats = images.float() / 255.0
    assert torch.equal(RealismAugment(apply_p=0.0)(floats, torch.Generator().manual_seed(0)), floats)


def test_apply_p_picks_about_that_share_of_images_and_leaves_the_rest_as_they_were():
    images = scenes(count=200, height=32, width=16)
    out = RealismAugment(apply_p=0.3, tone_p=1.0)(images, torch.Generator().manual_seed(1))
    changed = (out != images).flatten(1).any(dim=1)
    assert 0.2 < changed.float().mean().item() < 0.4


@pytest.mark.parametrize("dtype", [torch.uint8, torch.float32, torch.float64])
def test_shape_dtype_and_value_range_are_kept(dtype):
    images = scenes(count=8)
    batch = images if dtype == torch.uint8 else images.to(dtype) / 255.0
    out = RealismAugment(apply_p=1.0, noise_sigma=(0.2, 0.3))(batch, torch.Generator().manual_seed(2))
    assert out.shape == batch.shape and out.dtype == dtype
    top = 255 if dtype == torch.uint8 else 1.0
    assert out.min() >= 0 and out.max() <= top and out.float().max() > 0.5 * top


def test_blur_steps_lower_the_high_frequency_ratio():
    images = scenes()
    before = mean_statistic(high_frequency, images)
    for augment in (only("defocus"), only("motion", motion_length=(5.0, 6.0)), only("lowres", lowres_factor=(2, 3))):
        after = mean_statistic(high_frequency, augment(images, torch.Generator().manual_seed(0)))
        assert after < 0.7 * before, augment


def test_noise_raises_the_noise_estimate():
    images = scenes()
    out = only("noise", noise_sigma=(0.02, 0.03), noise_shot=(0.001, 0.002))(images, torch.Generator().manual_seed(0))
    assert mean_statistic(noise, out) > mean_statistic(noise, images) + 3.0


def test_low_quality_jpeg_makes_8x8_blocks_on_its_grid():
    images = scenes()
    aligned = only("jpeg", jpeg_quality=(5, 10), jpeg_shift=False)(images, torch.Generator().manual_seed(0))
    assert mean_statistic(blockiness, images) < 1.1 < mean_statistic(blockiness, aligned)
    shifted = only("jpeg", jpeg_quality=(5, 10))(images, torch.Generator().manual_seed(0))
    assert not torch.equal(shifted, images)
    assert mean_statistic(blockiness, shifted) < mean_statistic(blockiness, aligned)


def test_cast_changes_channel_ratios_and_keeps_the_mean_gain():
    images = scenes()
    out = only("cast", cast=(0.6, 1.4))(images, torch.Generator().manual_seed(0))
    shifts = [abs(red_share(a) - red_share(b)) for a, b in zip(as_arrays(out), as_arrays(images), strict=True)]
    assert max(shifts) > 0.03
    assert abs(mean_statistic(brightness, out) - mean_statistic(brightness, images)) < 0.06


def test_tone_and_saturation_move_brightness_and_saturation():
    images = scenes()
    darker = only("tone", brightness=(0.5, 0.5), contrast=(1.0, 1.0), gamma=(1.0, 1.0))(images)
    assert mean_statistic(brightness, darker) == pytest.approx(0.5 * mean_statistic(brightness, images), rel=0.02)
    greyer = only("saturation", saturation=(0.3, 0.3))(images)
    assert mean_statistic(saturation, greyer) < 0.5 * mean_statistic(saturation, images)


def test_squash_moves_content_towards_the_middle_row():
    images = torch.zeros(1, 3, 64, 32, dtype=torch.uint8)
    images[:, :, 8:12] = 255  # a band in the top quarter
    squashed = only("squash", squash=(0.5, 0.5))(images)
    rows = squashed[0, 0].float().mean(dim=1)
    centre = float((rows * torch.arange(64)).sum() / rows.sum())
    assert 20 < centre < 24  # row 9.5 is 22.5 rows above the middle (32); half of that is 21.25 above


def test_infrared_chain_keeps_grey_images_grey():
    grey = scenes().float().mean(dim=1, keepdim=True).expand(-1, 3, -1, -1).round().to(torch.uint8).contiguous()
    every_step = RealismAugment(**{f"{step}_p": 1.0 for step in STEPS}).for_infrared()
    out = every_step(grey, torch.Generator().manual_seed(3)).int()
    assert not torch.equal(out, grey.int())
    assert (out[:, 0] - out[:, 1]).abs().max() <= 2 and (out[:, 2] - out[:, 1]).abs().max() <= 2  # JPEG rounding
    colour = RealismAugment(**{f"{step}_p": 1.0 for step in STEPS})(grey, torch.Generator().manual_seed(3)).int()
    assert (colour[:, 0] - colour[:, 1]).abs().max() > 10


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_batches_match_cpu_batches():
    images = scenes()
    augment = RealismAugment(apply_p=1.0)
    on_cpu = augment(images, torch.Generator().manual_seed(6))
    on_gpu = augment(images.cuda(), torch.Generator().manual_seed(6))
    assert on_gpu.device.type == "cuda"
    assert (on_gpu.cpu().int() - on_cpu.int()).abs().float().mean() < 1.0


@pytest.mark.parametrize(("changes", "named"), [
    ({"noise_p": 1.5}, "noise_p"), ({"jpeg_quality": (0, 50)}, "jpeg_quality"), ({"cast": (1.2, 0.8)}, "cast"),
    ({"defocus_sigma": (0.5, 20.0)}, "defocus_sigma"), ({"lowres_factor": (0.5, 2.0)}, "lowres_factor"),
])
def test_a_bad_realism_setting_is_a_named_error(changes, named):
    with pytest.raises(RealismConfigError, match=named):
        RealismAugment(**changes)


@pytest.mark.parametrize("value", [1.5, -0.1, "often", True, None])
def test_a_bad_training_realism_is_a_named_error(value):
    with pytest.raises(TrainConfigError, match="realism"):
        TrainConfig.from_dict({"realism": value}, "run.json")


def test_wrong_batches_are_named_errors():
    with pytest.raises(ValueError, match="B×3×H×W"):
        RealismAugment()(torch.zeros(3, 8, 8, dtype=torch.uint8))
    with pytest.raises(ValueError, match="uint8 or float"):
        RealismAugment()(torch.zeros(1, 3, 8, 8, dtype=torch.int32))
    with pytest.raises(ImageStatisticsError, match="too small"):
        crop_statistics(np.zeros((8, 8, 3), dtype=np.uint8))


def test_the_training_default_is_off():
    assert TrainConfig().realism == 0.0 and TrainConfig.from_dict({}).to_dict()["realism"] == 0.0


# ------------------------------------------------------------------------------------------- in batches
@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    return build_tiny_world(tmp_path_factory.mktemp("realismworld") / "w")


@pytest.fixture(scope="module")
def parts(world):
    run = load_run_config(tiny_run())
    data = build_training_data(f"world:{world}", run.model, seed=0, validation_identities=2,
                               queries_per_identity=1, identities_per_batch=2)
    data.load_images()
    config = run.model.with_overrides({"scenarios": {"num_person_ids": data.num_identities,
                                                     "num_clothing_ids": data.num_clothing}})
    tokenizer = create(config, device="cpu").tokenizer
    return data, config, run.training.replace(identities_per_batch=2), tokenizer


def _batch(parts, seed: int = 0, **training):
    data, config, base, tokenizer = parts
    builder = BatchBuilder(data, config, base.replace(**training), tokenizer)
    return builder, builder.build(list(range(6)), random.Random(seed), torch.Generator().manual_seed(seed))


def test_realism_reaches_rgb_and_ir_images_but_never_sketches(parts):
    _, plain = _batch(parts, image_augment=False, realism=0.0)
    builder, real = _batch(parts, image_augment=False, realism=1.0)
    assert torch.equal(real.sketch, plain.sketch)
    assert not torch.allclose(real.hr_images, plain.hr_images)
    assert not torch.allclose(real.ir, plain.ir)
    rgb, ir = real.reid_modality == 0, real.reid_modality == 1
    assert not torch.allclose(real.reid_images[rgb], plain.reid_images[rgb])
    assert not torch.allclose(real.reid_images[ir], plain.reid_images[ir])
    grey = real.ir * builder.std + builder.mean  # back to 0–1 intensities: the IR frames stay grey
    assert (grey[:, 0] - grey[:, 1]).abs().max() < 3 / 255 and (grey[:, 2] - grey[:, 1]).abs().max() < 3 / 255


def test_realism_zero_gives_the_batch_of_earlier_runs(parts):
    """The images are the earlier pipeline (cache → normalise → flip / crop / erase) drawn from the same generator,
    and the rest of the batch is what an augmented run gets for the same texts."""
    data, _, _, _ = parts
    builder, batch = _batch(parts, seed=3, realism=0.0)
    rows = torch.tensor([data.pairs[i].row for i in range(6)])
    earlier = (data.images.index_select(0, rows).float() / 255.0 - builder.mean) / builder.std
    expected = ImageAugment()(earlier, torch.Generator().manual_seed(3))
    assert torch.equal(batch.hr_images, expected)
    _, again = _batch(parts, seed=3)  # the run file's default: realism unset
    for name, value in vars(batch).items():
        if isinstance(value, torch.Tensor):
            assert torch.equal(value, getattr(again, name)), name
    _, realistic = _batch(parts, seed=3, realism=1.0)
    assert realistic.texts == batch.texts and not torch.allclose(realistic.hr_images, batch.hr_images)
