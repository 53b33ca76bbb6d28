import math

import pytest
import torch

from engine.lab.losses._checks import LossInputError
from engine.lab.losses.contrastive import info_nce_from_similarity, info_nce_loss


def test_info_nce_hand_2x2():
    sims = torch.tensor([[0.9, 0.1], [0.3, 0.7]], dtype=torch.float64)
    tau = 0.5

    def log_softmax_at(row, index):
        return row[index] / tau - math.log(sum(math.exp(v / tau) for v in row))

    rows = sims.tolist()
    cols = sims.t().tolist()
    expected = (
        -(
            log_softmax_at(rows[0], 0)
            + log_softmax_at(rows[1], 1)
            + log_softmax_at(cols[0], 0)
            + log_softmax_at(cols[1], 1)
        )
        / 4
    )
    assert info_nce_from_similarity(sims, tau).item() == pytest.approx(expected, rel=1e-12)


def test_info_nce_gradient_is_p_minus_delta_over_n_tau():
    sims = torch.tensor([[0.9, 0.1, 0.2], [0.3, 0.7, 0.0], [0.1, 0.2, 0.5]], requires_grad=True)
    tau = 0.1
    info_nce_from_similarity(sims, tau).backward()
    p_rows = (sims.detach() / tau).softmax(dim=1)
    p_cols = (sims.detach() / tau).softmax(dim=0)
    expected = ((p_rows - torch.eye(3)) + (p_cols - torch.eye(3))) / (2 * 3 * tau)
    assert torch.allclose(sims.grad, expected, atol=1e-6)


def test_info_nce_features_are_normalised():
    g = torch.Generator().manual_seed(1)
    image, text = torch.randn(4, 6, generator=g), torch.randn(4, 6, generator=g)
    assert info_nce_loss(image, text).item() == pytest.approx(
        info_nce_loss(3 * image, 0.5 * text).item(), rel=1e-5
    )


def test_info_nce_rejects_unpaired_shapes():
    with pytest.raises(LossInputError, match="same shape"):
        info_nce_loss(torch.zeros(3, 4), torch.zeros(2, 4))
