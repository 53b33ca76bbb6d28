import math

import pytest
import torch

from engine.lab.losses._checks import LossInputError
from engine.lab.losses.orthogonality import expert_pair_cosines, orthogonality_loss


def test_vanishes_for_orthogonal_expert_outputs():
    experts = torch.eye(5).unsqueeze(0).repeat(2, 1, 1) * 3.0  # (B=2, G=5, d=5)
    assert orthogonality_loss([experts, experts]).item() == pytest.approx(0.0, abs=1e-12)


def test_positive_for_correlated_experts_hand_value():
    # G=2 at 45°: cos² = 0.5, |cos| = 1/√2
    experts = torch.tensor([[[1.0, 0.0], [1.0, 1.0]]])
    assert orthogonality_loss(experts).item() == pytest.approx(0.5)
    assert orthogonality_loss(experts, absolute=True).item() == pytest.approx(1 / math.sqrt(2))


def test_pairs_layers_and_tokens_average():
    # G=3, pairs (0,1),(0,2),(1,2) with cos 1, 0, 0 → mean cos² 1/3 for layer one; layer two orthogonal
    layer_one = torch.tensor([[[1.0, 0.0], [2.0, 0.0], [0.0, 1.0]]])
    layer_two = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [0.0, -1.0]]])
    # (0,1),(0,2) orthogonal, (1,2) cos −1 → cos² 1: layer mean 1/3 as well
    assert orthogonality_loss([layer_one, layer_two]).item() == pytest.approx(1 / 3)
    # the token mean is taken before the cosine: tokens (1,0) and (0,1) average to (0.5,0.5)
    tokens = torch.tensor([[[[1.0, 0.0], [0.0, 1.0]], [[1.0, 1.0], [1.0, 1.0]]]])  # (B=1, G=2, T=2, d=2)
    assert orthogonality_loss([tokens]).item() == pytest.approx(1.0)
    assert expert_pair_cosines(layer_one).tolist() == [pytest.approx([1.0, 0.0, 0.0])]


def test_gradient_flows_to_experts():
    experts = torch.tensor([[[1.0, 0.2], [0.5, 1.0]]], requires_grad=True)
    orthogonality_loss(experts).backward()
    assert experts.grad.abs().sum() > 0


def test_rejects_single_expert():
    with pytest.raises(LossInputError, match="G≥2"):
        orthogonality_loss(torch.ones(2, 1, 4))
