import random
from collections import Counter

import pytest
import torch

from engine.lab.data.augment import ImageAugment, TextAugment
from engine.lab.data.sampler import IdentityBalancedBatches


def test_batches_hold_p_identities_times_k_samples_and_cover_each_identity_once():
    labels = [i // 5 for i in range(40)] + [8, 9]  # identities 0..7 with 5 samples, 8 and 9 with one
    sampler = IdentityBalancedBatches(labels, identities_per_batch=2, samples_per_identity=3, seed=1)
    batches = list(sampler.epoch(0))
    assert len(batches) == len(sampler) == 5
    seen = Counter()
    for batch in batches:
        ids = Counter(labels[i] for i in batch)
        assert len(ids) == 2 and set(ids.values()) == {3}
        seen.update(ids.keys())
    assert set(seen.values()) == {1}
    assert list(sampler.epoch(0)) == batches
    assert list(sampler.epoch(1)) != batches


def test_too_few_identities_is_an_error():
    with pytest.raises(ValueError, match="2 identities"):
        IdentityBalancedBatches([0, 0, 1], identities_per_batch=4, samples_per_identity=2)


def test_image_augment_keeps_shape_and_is_reproducible():
    images = torch.rand(6, 3, 32, 16)
    aug = ImageAugment()
    a = aug(images, torch.Generator().manual_seed(3))
    b = aug(images, torch.Generator().manual_seed(3))
    assert a.shape == images.shape and torch.equal(a, b)
    assert not torch.equal(a, images)


def test_image_augment_without_operations_is_identity():
    images = torch.rand(2, 3, 8, 4)
    aug = ImageAugment(flip_p=0.0, pad=0, erase_p=0.0)
    assert torch.equal(aug(images), images)


def test_text_augment_rates():
    aug = TextAugment(pick_p=1.0, mask_share=1.0, replace_share=0.0)
    assert aug("a red coat", ["x"], random.Random(0)) == "something something something"
    keep = TextAugment(pick_p=0.0)
    assert keep("a red coat", ["x"], random.Random(0)) == "a red coat"
    rng = random.Random(5)
    words = " ".join(["w"] * 2000)
    out = TextAugment()(words, ["v"], rng).split()
    assert 0.15 < out.count("something") / 2000 * (1 / 0.6) < 0.25
