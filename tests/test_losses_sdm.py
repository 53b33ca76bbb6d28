import math

import pytest
import torch
import torch.nn.functional as F

from engine.lab.losses._checks import LossInputError
from engine.lab.losses.sdm import identity_target, kl_to_target, sdm_from_logits, sdm_loss

LOGITS = [[2.0, 1.0, 0.0], [0.5, 1.5, -1.0], [0.0, 0.3, 3.0]]
LABELS = [7, 7, 4]  # texts/images 0 and 1 share an identity
EPS = 1e-8


def _softmax(row):
    exps = [math.exp(v) for v in row]
    return [e / sum(exps) for e in exps]


def _hand_direction(matrix, labels):
    total = 0.0
    for j, row in enumerate(matrix):
        same = [1.0 if labels[i] == labels[j] else 0.0 for i in range(len(row))]
        q = [v / sum(same) for v in same]
        p = _softmax(row)
        total += sum(p_i * (math.log(p_i) - math.log(q_i + EPS)) for p_i, q_i in zip(p, q, strict=True))
    return total / len(matrix)


def test_sdm_equals_hand_computed_kl_on_3x3():
    transposed = [list(col) for col in zip(*LOGITS, strict=True)]
    expected = _hand_direction(LOGITS, LABELS) + _hand_direction(transposed, LABELS)
    got = sdm_from_logits(torch.tensor(LOGITS, dtype=torch.float64), torch.tensor(LABELS))
    assert got.item() == pytest.approx(expected, rel=1e-12)


def test_sdm_is_kl_p_to_q_not_q_to_p():
    logits = torch.tensor(LOGITS, dtype=torch.float64)
    labels = torch.tensor(LABELS)
    q = identity_target(labels, labels).double()
    p = logits.softmax(dim=1)
    forward = (p * (p.log() - torch.log(q + EPS))).sum(dim=1).mean()
    reverse = (q * (torch.log(q + EPS) - torch.log(p))).sum(dim=1).mean()
    assert kl_to_target(logits, q).item() == pytest.approx(forward.item(), rel=1e-12)
    assert abs(forward.item() - reverse.item()) > 1e-3
    both = kl_to_target(logits, q) + kl_to_target(logits.t(), q.t())
    assert sdm_from_logits(logits, labels).item() == pytest.approx(both.item(), rel=1e-12)


def test_identity_target_rows_sum_to_one():
    q = identity_target(torch.tensor([1, 1, 2, 1]), torch.tensor([1, 1, 2, 1]))
    assert torch.allclose(q.sum(dim=1), torch.ones(4))
    assert q[0].tolist() == pytest.approx([1 / 3, 1 / 3, 0, 1 / 3])


def test_sdm_loss_on_features_matches_logits_form():
    g = torch.Generator().manual_seed(0)
    text = torch.randn(5, 8, generator=g, dtype=torch.float64)
    image = torch.randn(5, 8, generator=g, dtype=torch.float64)
    labels = torch.tensor([0, 1, 0, 2, 1])
    logits = F.normalize(text, dim=1) @ F.normalize(image, dim=1).t() / 0.02
    assert sdm_loss(text, image, labels, tau=0.02).item() == pytest.approx(
        sdm_from_logits(logits, labels).item()
    )


def test_sdm_falls_as_logits_concentrate_on_identity():
    labels = torch.arange(4)
    weak = sdm_from_logits(torch.eye(4) * 1.0, labels)
    strong = sdm_from_logits(torch.eye(4) * 20.0, labels)
    assert strong < weak
    assert strong.item() < 1e-6


def test_sdm_rejects_mismatched_labels():
    with pytest.raises(LossInputError, match="labels"):
        sdm_from_logits(torch.zeros(3, 3), torch.tensor([0, 1]))
