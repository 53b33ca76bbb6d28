import math

import pytest
import torch

from engine.lab.losses._checks import LossInputError
from engine.lab.losses.gcr import (
    consistency_matching_loss,
    granularity_classification_loss,
    reasoning_loss,
    sample_wrong_levels,
)


def _ce(row, target):
    return -(row[target] - math.log(sum(math.exp(v) for v in row)))


def test_classification_loss_is_sum_of_two_batch_mean_ce():
    visual = [[2.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0, 0.0]]
    text = [[0.5, 0.5, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 3.0]]
    levels = [0, 4]
    expected = (_ce(visual[0], 0) + _ce(visual[1], 4)) / 2 + (_ce(text[0], 0) + _ce(text[1], 4)) / 2
    got = granularity_classification_loss(torch.tensor(visual), torch.tensor(text), torch.tensor(levels))
    assert got.item() == pytest.approx(expected, rel=1e-6)


def test_matching_loss_hand_values():
    assert consistency_matching_loss(torch.zeros(3), torch.zeros(3)).item() == pytest.approx(2 * math.log(2))
    pos, neg = 2.0, -1.0
    expected = -math.log(1 / (1 + math.exp(-pos))) - math.log(1 - 1 / (1 + math.exp(-neg)))
    assert consistency_matching_loss(torch.tensor([pos]), torch.tensor([neg])).item() == pytest.approx(
        expected
    )


def test_reasoning_loss_is_unit_weighted_sum():
    visual, text = torch.randn(4, 5), torch.randn(4, 5)
    levels = torch.tensor([0, 1, 2, 3])
    pos, neg = torch.randn(4), torch.randn(4)
    total = reasoning_loss(visual, text, levels, pos, neg)
    parts = granularity_classification_loss(visual, text, levels) + consistency_matching_loss(pos, neg)
    assert total.item() == pytest.approx(parts.item())


def test_wrong_levels_differ_and_cover_the_others():
    levels = torch.full((2000,), 2)
    wrong = sample_wrong_levels(levels, generator=torch.Generator().manual_seed(0))
    assert not (wrong == levels).any()
    counts = torch.bincount(wrong, minlength=5)
    assert counts[2] == 0 and (counts[[0, 1, 3, 4]] > 400).all()
    again = sample_wrong_levels(levels, generator=torch.Generator().manual_seed(0))
    assert torch.equal(wrong, again)


def test_gcr_rejects_mismatched_inputs():
    with pytest.raises(LossInputError, match="levels"):
        granularity_classification_loss(torch.zeros(2, 5), torch.zeros(2, 5), torch.tensor([0]))
    with pytest.raises(LossInputError, match="mismatched_logits"):
        consistency_matching_loss(torch.zeros(2), torch.zeros(3))
