import math

import pytest
import torch

from engine.lab.losses._checks import LossInputError
from engine.lab.losses.uniat import (
    IR,
    RGB,
    SCENARIOS,
    hdw_loss,
    hdw_weights,
    scenario_id_losses,
    uniat_id_loss,
)

# persons 0 and 1; clothing ids 0, 1 belong to person 0, clothing id 2 to person 1
CLOTHING_PERSON = torch.tensor([0, 0, 1])
PERSON = torch.tensor([0, 0, 1, 1])
CLOTHING = torch.tensor([0, 1, 2, 2])
MODALITY = torch.tensor([RGB, IR, RGB, IR])
ST_LOGITS = torch.tensor(
    [[2.0, 1.0, 0.0], [0.5, 1.5, 0.2], [0.3, 0.1, 1.0], [1.0, 0.0, 0.5]], dtype=torch.float64
)
LT_LOGITS = torch.tensor([[1.0, 0.0], [0.2, 0.4], [0.0, 2.0], [0.7, 0.1]], dtype=torch.float64)


def _ce(row, target):
    return -(row[target] - math.log(sum(math.exp(v) for v in row)))


def _heads():
    return [ST_LOGITS if name.endswith("ST") else LT_LOGITS for name in SCENARIOS]


def test_said_per_sample_losses_by_hand():
    losses = scenario_id_losses(_heads(), PERSON, CLOTHING, MODALITY, CLOTHING_PERSON)
    st = ST_LOGITS.tolist()
    # other outfits of the same person → −10: sample 0 (cid 0) hides cid 1, sample 1 (cid 1) hides cid 0
    st_masked = [[2.0, -10.0, 0.0], [-10.0, 1.5, 0.2], st[2], st[3]]
    lt = LT_LOGITS.tolist()
    st_ce = [_ce(st_masked[i], int(CLOTHING[i])) for i in range(4)]
    lt_ce = [_ce(lt[i], int(PERSON[i])) for i in range(4)]
    expected = {
        "DT-ST": [st_ce[0], st_ce[2]],
        "DT-LT": [lt_ce[0], lt_ce[2]],  # RGB samples 0, 2
        "NT-ST": [st_ce[1], st_ce[3]],
        "NT-LT": [lt_ce[1], lt_ce[3]],  # IR samples 1, 3
        "AD-ST": st_ce,
        "AD-LT": lt_ce,
    }
    for name, got in zip(SCENARIOS, losses, strict=True):
        assert got.tolist() == pytest.approx(expected[name], rel=1e-12), name


def test_baseline_is_plain_person_ce_everywhere():
    heads = [LT_LOGITS] * 6
    losses = scenario_id_losses(heads, PERSON, CLOTHING, MODALITY, CLOTHING_PERSON, said=False)
    lt_ce = [_ce(LT_LOGITS.tolist()[i], int(PERSON[i])) for i in range(4)]
    for got in losses:
        assert got.tolist() == pytest.approx(lt_ce)
    total = uniat_id_loss(heads, PERSON, CLOTHING, MODALITY, CLOTHING_PERSON, said=False, hdw=False)
    assert total.item() == pytest.approx(6 * sum(lt_ce) / 4)


def test_hdw_weights_and_loss_by_hand():
    per_head = [
        torch.tensor(v, dtype=torch.float64)
        for v in ([0.5, 1.0], [0.2], [2.0], [1.5, 0.1], [0.3, 0.3, 0.9], [0.7])
    ]
    by = dict(zip(SCENARIOS, [p.tolist() for p in per_head], strict=True))

    def w(values):
        return math.sqrt(1 - sum(math.exp(-v) for v in values) / len(values))

    task = {t: w(by[f"{t}-ST"] + by[f"{t}-LT"]) for t in ("DT", "NT", "AD")}
    time = {s: w(by[f"DT-{s}"] + by[f"NT-{s}"] + by[f"AD-{s}"]) for s in ("ST", "LT")}
    expected_w = [task[n[:2]] / max(task.values()) * time[n[3:]] / max(time.values()) for n in SCENARIOS]
    got_w = hdw_weights(per_head)
    assert [g.item() for g in got_w] == pytest.approx(expected_w, rel=1e-12)
    expected_loss = sum(wi * sum(by[n]) for wi, n in zip(expected_w, SCENARIOS, strict=True)) / 8
    assert hdw_loss(per_head, batch_size=8).item() == pytest.approx(expected_loss, rel=1e-12)


def test_hdw_weights_get_gradient_unless_detached():
    values = ([0.1, 0.2], [0.3], [1.0, 2.0], [1.5], [0.8, 0.9], [1.2])

    def grads(detach):
        per_head = [torch.tensor(v, requires_grad=True) for v in values]
        hdw_loss(per_head, 12, detach_weights=detach).backward()
        return per_head[0].grad

    detached = grads(True)
    weights = hdw_weights([torch.tensor(v) for v in values])
    assert torch.allclose(detached, torch.full((2,), weights[0].item() / 12))
    assert not torch.allclose(grads(False), detached)


def test_hdw_with_a_missing_modality_has_no_nan():
    modality = torch.full((4,), RGB)
    total = uniat_id_loss(_heads(), PERSON, CLOTHING, modality, CLOTHING_PERSON)
    assert torch.isfinite(total)
    losses = scenario_id_losses(_heads(), PERSON, CLOTHING, modality, CLOTHING_PERSON)
    assert losses[2].numel() == 0 and losses[3].numel() == 0


def test_said_rejects_wrong_head_count_and_width():
    with pytest.raises(LossInputError, match="6 heads"):
        scenario_id_losses(_heads()[:5], PERSON, CLOTHING, MODALITY, CLOTHING_PERSON)
    heads = _heads()
    heads[0] = LT_LOGITS
    with pytest.raises(LossInputError, match="clothing id"):
        scenario_id_losses(heads, PERSON, CLOTHING, MODALITY, CLOTHING_PERSON)


def test_said_rejects_person_ids_beyond_the_head():
    heads = [torch.zeros(4, 3, dtype=torch.float64)] * 6
    with pytest.raises(LossInputError, match="person id"):
        scenario_id_losses(heads, torch.tensor([0, 1, 2, 5]), CLOTHING, MODALITY, CLOTHING_PERSON, said=False)
