import math

import pytest
import torch

from engine.lab.losses._checks import LossInputError
from engine.lab.losses.routing import routing_entropy, top_p_gates, top_p_mask


def test_top_one_when_max_reaches_threshold():
    probs = torch.tensor([0.125, 0.5, 0.125, 0.25])
    assert top_p_mask(probs, 0.5).tolist() == [False, True, False, False]
    assert top_p_mask(probs, 0.4).tolist() == [False, True, False, False]


def test_minimal_prefix_including_exact_boundary():
    probs = torch.tensor([0.125, 0.5, 0.125, 0.25])
    assert top_p_mask(probs, 0.75).tolist() == [False, True, False, True]  # 0.5 + 0.25 = 0.75 ≥ T
    assert top_p_mask(probs, 0.76).tolist() == [True, True, False, True]  # ties: lower index first
    assert top_p_mask(probs, 1.0).tolist() == [True, True, True, True]


def test_gates_are_not_renormalised():
    probs = torch.tensor([[0.1, 0.6, 0.3]])
    assert top_p_gates(probs, 0.8).tolist() == [pytest.approx([0.0, 0.6, 0.3])]


def test_random_batches_select_the_shortest_sufficient_prefix():
    g = torch.Generator().manual_seed(0)
    probs = torch.softmax(torch.randn(3, 50, 6, generator=g, dtype=torch.float64) * 2, dim=-1)
    for threshold in (0.2, 0.4, 0.6, 0.9):
        mask = top_p_mask(probs, threshold)
        k = mask.sum(dim=-1)
        top = probs.sort(dim=-1, descending=True).values.cumsum(dim=-1)
        reached = top.gather(-1, (k - 1).unsqueeze(-1)).squeeze(-1)
        before = torch.where(
            k > 1, top.gather(-1, (k - 2).clamp_min(0).unsqueeze(-1)).squeeze(-1), torch.zeros_like(reached)
        )
        assert (reached >= threshold - 1e-12).all()
        assert (before < threshold).all()
        # the kept experts are the most probable ones
        kept_min = torch.where(mask, probs, torch.full_like(probs, 2.0)).min(dim=-1).values
        dropped_max = torch.where(mask, torch.full_like(probs, -1.0), probs).max(dim=-1).values
        assert (kept_min >= dropped_max).all()


def test_entropy_uniform_one_hot_and_layer_average():
    uniform = torch.full((4, 6), 1 / 6)
    one_hot = torch.eye(6)[:3]
    assert routing_entropy([uniform]).item() == pytest.approx(math.log(6))
    assert routing_entropy([one_hot]).item() == pytest.approx(0.0)
    # per-layer token means, then the mean over layers (layers of different token counts weigh equally)
    assert routing_entropy([uniform, one_hot]).item() == pytest.approx(math.log(6) / 2)
    stacked = torch.stack([uniform, uniform])
    assert routing_entropy(stacked).item() == pytest.approx(math.log(6))


def test_bad_threshold_rejected():
    with pytest.raises(LossInputError, match="threshold"):
        top_p_mask(torch.tensor([0.5, 0.5]), 0.0)
