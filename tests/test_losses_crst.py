import math

import pytest
import torch
import torch.nn.functional as F

from engine.lab.losses._checks import LossInputError
from engine.lab.losses.crst import (
    IGNORE_INDEX,
    cr_rda_loss,
    masked_token_loss,
    ranking_distillation_from_logits,
    resolution_masking,
    tgr_loss,
)


def test_masked_token_loss_ignores_unmasked_positions():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 4, 7, generator=g, dtype=torch.float64)
    targets = torch.tensor([[1, 2, 3, 4], [5, 6, 0, 1]])
    masked = torch.tensor([[True, False, False, True], [False, False, True, False]])
    positions = [(0, 0), (0, 3), (1, 2)]
    expected = sum(-F.log_softmax(logits[b, t], dim=0)[targets[b, t]].item() for b, t in positions) / 3
    assert masked_token_loss(logits, targets, masked).item() == pytest.approx(expected, rel=1e-12)
    changed = targets.clone()
    changed[~masked] = 0
    assert masked_token_loss(logits, changed, masked).item() == pytest.approx(expected, rel=1e-12)
    assert masked_token_loss(logits, targets, torch.zeros_like(masked)).item() == 0.0


def test_tgr_is_two_minus_two_cos_with_stopped_hr():
    refined = torch.tensor([[1.0, 0.0], [1.0, 1.0]], requires_grad=True)
    hr = torch.tensor([[0.0, 2.0], [3.0, 3.0]], requires_grad=True)
    loss = tgr_loss(refined, hr)
    assert loss.item() == pytest.approx(((2 - 0) + (2 - 2)) / 2)
    loss.backward()
    assert hr.grad is None
    assert refined.grad.abs().sum() > 0
    assert tgr_loss(refined, hr, mse=True).item() == pytest.approx(F.mse_loss(refined, hr).item())


def test_ranking_distillation_gradient_is_pl_minus_ph_over_n():
    g = torch.Generator().manual_seed(3)
    hr = torch.randn(4, 4, generator=g, dtype=torch.float64, requires_grad=True)
    lr = torch.randn(4, 4, generator=g, dtype=torch.float64, requires_grad=True)
    loss = ranking_distillation_from_logits(hr, lr)
    loss.backward()
    expected = (lr.detach().softmax(dim=1) - hr.detach().softmax(dim=1)) / 4
    assert torch.allclose(lr.grad, expected, atol=1e-12)
    assert hr.grad is None
    p = hr.detach().softmax(dim=1)
    q = lr.detach().softmax(dim=1)
    assert loss.item() == pytest.approx((p * (p.log() - q.log())).sum(dim=1).mean().item())


def test_cr_rda_sums_both_directions_and_vanishes_when_lr_equals_hr():
    g = torch.Generator().manual_seed(4)
    text = torch.randn(3, 5, generator=g, dtype=torch.float64)
    hr = torch.randn(3, 5, generator=g, dtype=torch.float64)
    lr = torch.randn(3, 5, generator=g, dtype=torch.float64)
    tau = 0.1
    h = F.normalize(text, dim=1) @ F.normalize(hr, dim=1).t() / tau
    low = F.normalize(text, dim=1) @ F.normalize(lr, dim=1).t() / tau
    expected = ranking_distillation_from_logits(h, low) + ranking_distillation_from_logits(h.t(), low.t())
    assert cr_rda_loss(text, hr, lr, tau).item() == pytest.approx(expected.item(), rel=1e-12)
    assert cr_rda_loss(text, hr, hr.clone(), tau).item() == pytest.approx(0.0, abs=1e-12)


def _tokens(n_attr, n_coarse, length=77, batch=1):
    ids = torch.arange(1000, 1000 + length).repeat(batch, 1)
    eligible = torch.zeros(batch, length, dtype=torch.bool)
    eligible[:, 1 : 1 + n_attr + n_coarse] = True
    attribute = torch.zeros(batch, length, dtype=torch.bool)
    attribute[:, 1 : 1 + n_attr] = True
    return ids, attribute, eligible


@pytest.mark.parametrize(
    ("resolution", "n_attribute"), [("hr", 6), ("mild_lr", 5), ("mid_lr", 4), ("ultra_lr", 3)]
)
def test_masking_policy_counts_by_resolution(resolution, n_attribute):
    ids, attribute, eligible = _tokens(n_attr=30, n_coarse=30)  # 60 eligible → 9 masked
    out = resolution_masking(
        ids,
        attribute,
        eligible,
        resolution,
        mask_token_id=7,
        random_token_range=(1, 50),
        generator=torch.Generator().manual_seed(0),
    )
    assert int(out.masked.sum()) == round(0.15 * 60) == 9
    assert int(out.attribute_masked.sum()) == n_attribute == int((out.masked & attribute).sum())
    assert not (out.masked & ~eligible).any()
    assert torch.equal(out.labels[out.masked], ids[out.masked])
    assert (out.labels[~out.masked] == IGNORE_INDEX).all()
    assert torch.equal(out.input_ids[~out.masked], ids[~out.masked])


def test_masking_fills_a_short_group_from_the_other():
    ids, attribute, eligible = _tokens(n_attr=2, n_coarse=58)
    out = resolution_masking(ids, attribute, eligible, "hr", 7, (1, 50), torch.Generator().manual_seed(1))
    assert int(out.masked.sum()) == 9 and int(out.attribute_masked.sum()) == 2


def test_masking_is_deterministic_by_generator_and_replaces_80_10_10():
    ids, attribute, eligible = _tokens(n_attr=30, n_coarse=30, batch=400)
    args = (ids, attribute, eligible, torch.tensor([0, 1, 2, 3]).repeat(100), 7, (1, 50))
    a = resolution_masking(*args, generator=torch.Generator().manual_seed(9))
    b = resolution_masking(*args, generator=torch.Generator().manual_seed(9))
    c = resolution_masking(*args, generator=torch.Generator().manual_seed(10))
    assert torch.equal(a.input_ids, b.input_ids) and torch.equal(a.masked, b.masked)
    assert not torch.equal(a.masked, c.masked)
    n = int(a.masked.sum())
    to_mask = int((a.input_ids[a.masked] == 7).sum()) / n
    kept = int((a.input_ids[a.masked] == ids[a.masked]).sum()) / n
    assert to_mask == pytest.approx(0.8, abs=0.04)
    assert kept == pytest.approx(0.1, abs=0.03)
    assert math.isclose(a.attribute_masked[0::4].sum(dim=1).float().mean().item(), 6.0)
    assert math.isclose(a.attribute_masked[3::4].sum(dim=1).float().mean().item(), 3.0)


def test_masking_rejects_bad_resolution():
    ids, attribute, eligible = _tokens(3, 3)
    with pytest.raises(LossInputError, match="resolution"):
        resolution_masking(ids, attribute, eligible, "low", 7, (1, 50))
