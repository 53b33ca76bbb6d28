import math

import pytest
import torch

from engine.lab.losses._checks import LossInputError
from engine.lab.losses.tal import level_margins, soft_tal_loss, soft_tal_rows


def rde_tal_reference(scores, pids, tau, margin, reduction="sum"):
    """RDE TAL per docs/methods.md §1.7, row i: [m − Σ_{j∈P_i} α_ij S_ij + τ log Σ_{k∉P_i} e^{S_ik/τ}]_+
    with α_ij = e^{S_ij/τ} / Σ_{p∈P_i} e^{S_ip/τ}, plus the same on Sᵀ."""

    def direction(matrix):
        costs = []
        n = len(matrix)
        for i in range(n):
            positives = [j for j in range(n) if pids[j] == pids[i]]
            negatives = [k for k in range(n) if pids[k] != pids[i]]
            z = sum(math.exp(matrix[i][p] / tau) for p in positives)
            pos = sum(math.exp(matrix[i][j] / tau) / z * matrix[i][j] for j in positives)
            neg = tau * math.log(sum(math.exp(matrix[i][k] / tau) for k in negatives))
            m = margin[i] if isinstance(margin, list) else margin
            costs.append(max(0.0, m - pos + neg))
        return costs

    s = scores.tolist()
    st = [list(c) for c in zip(*s, strict=True)]
    rows = [a + b for a, b in zip(direction(s), direction(st), strict=True)]
    return sum(rows) if reduction == "sum" else sum(rows) / len(rows)


def _batch(seed=0, n=6):
    g = torch.Generator().manual_seed(seed)
    scores = torch.rand(n, n, generator=g, dtype=torch.float64) * 2 - 1
    pids = [0, 1, 0, 2, 3, 1][:n]
    same = torch.tensor([[1.0 if a == b else 0.0 for b in pids] for a in pids], dtype=torch.float64)
    return scores, pids, same


@pytest.mark.parametrize("reduction", ["sum", "mean"])
@pytest.mark.parametrize("tau", [0.015, 0.1])
def test_soft_tal_reduces_to_rde_tal_for_binary_labels(reduction, tau):
    scores, pids, same = _batch()
    got = soft_tal_loss(scores, same, margins=0.1, tau=tau, reduction=reduction)
    assert got.item() == pytest.approx(rde_tal_reference(scores, pids, tau, 0.1, reduction), rel=1e-9)


def test_soft_tal_uses_per_row_margins():
    scores, pids, same = _batch(seed=3)
    levels = torch.tensor([0, 1, 2, 3, 4, 2])
    margins = level_margins(levels).double()
    got = soft_tal_loss(scores, same, margins=margins, tau=0.1)
    assert got.item() == pytest.approx(rde_tal_reference(scores, pids, 0.1, margins.tolist()), rel=1e-9)


def test_level_margins_per_level():
    assert level_margins(torch.arange(5)).tolist() == pytest.approx([0.05, 0.075, 0.10, 0.125, 0.15])
    assert level_margins(torch.tensor([0, 2]), n_levels=3).tolist() == pytest.approx([0.05, 0.15])
    with pytest.raises(LossInputError, match="levels"):
        level_margins(torch.tensor([5]))


def test_soft_tal_on_hand_2x2_with_soft_label():
    scores = torch.tensor([[0.8, 0.5], [0.3, 0.9]], dtype=torch.float64)
    labels = torch.tensor([[1.0, 0.5], [0.0, 1.0]], dtype=torch.float64)
    tau, m = 0.1, 0.1
    # row 0: α ∝ (1·e^8, 0.5·e^5); negative mass only from column 1 with weight 0.5
    a0 = math.exp(8) / (math.exp(8) + 0.5 * math.exp(5))
    pos0 = a0 * 0.8 + (1 - a0) * 0.5
    row0 = max(0.0, m - pos0 + tau * math.log(0.5 * math.exp(5)))
    # row 1: positive column 1 only, negative column 0
    row1 = max(0.0, m - 0.9 + tau * math.log(math.exp(3)))
    got = soft_tal_rows(scores, labels, m, tau)
    assert got.tolist() == pytest.approx([row0, row1], rel=1e-12)


def test_alpha_is_stop_grad_and_gradient_matches_formula():
    scores = torch.tensor(
        [[0.2, 0.15, -0.1], [0.1, 0.3, 0.25], [0.0, 0.05, 0.1]], dtype=torch.float64, requires_grad=True
    )
    labels = torch.tensor([[1.0, 0.7, 0.0], [0.0, 1.0, 0.0], [0.3, 0.0, 1.0]], dtype=torch.float64)
    tau = 0.2
    rows = soft_tal_rows(scores, labels, 0.5, tau)
    assert (rows > 0).all()
    rows.sum().backward()
    s = scores.detach()
    alpha = labels * torch.exp(s / tau)
    alpha = alpha / alpha.sum(dim=1, keepdim=True)
    neg = (1 - labels) * torch.exp(s / tau)
    neg = neg / neg.sum(dim=1, keepdim=True)
    assert torch.allclose(scores.grad, -alpha + neg)


def test_row_without_negatives_costs_zero_without_nan():
    scores = torch.tensor([[0.5, 0.4], [0.1, 0.2]], requires_grad=True)
    labels = torch.tensor([[1.0, 1.0], [0.0, 1.0]])
    rows = soft_tal_rows(scores, labels, 0.1, 0.015)
    assert rows[0].item() == 0.0
    rows.sum().backward()
    assert torch.isfinite(scores.grad).all()


def test_soft_tal_rejects_rows_without_positive_and_bad_labels():
    with pytest.raises(LossInputError, match="positive"):
        soft_tal_rows(torch.zeros(2, 2), torch.tensor([[0.0, 0.0], [0.0, 1.0]]), 0.1)
    with pytest.raises(LossInputError, match=r"\[0, 1\]"):
        soft_tal_rows(torch.zeros(2, 2), torch.tensor([[1.5, 0.0], [0.0, 1.0]]), 0.1)
