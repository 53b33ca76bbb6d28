"""AEA-MoE (docs/methods.md §4): top-p routing, un-renormalised gates, y = Σ g_i Adapter_i(x); ablation routings."""

import torch

from engine.lab.losses.routing import top_p_mask
from engine.retrieval.models.adapters import AdapterMixture, top_k_selection, top_p_selection


def _mixture(routing: str = "top_p", n: int = 6, **kwargs) -> AdapterMixture:
    torch.manual_seed(0)
    mixture = AdapterMixture(12, n, 4, routing=routing, **kwargs)
    torch.nn.init.normal_(mixture.up_weight, std=0.3)
    torch.nn.init.normal_(mixture.up_bias, std=0.3)
    return mixture


def test_top_p_keeps_the_shortest_prefix_reaching_the_threshold():
    probs = torch.tensor(
        [
            [0.50, 0.20, 0.10, 0.10, 0.05, 0.05],  # P_max ≥ T → top-1
            [0.30, 0.05, 0.25, 0.20, 0.10, 0.10],  # 0.30 + 0.25 ≥ 0.4 → two
            [0.15, 0.15, 0.14, 0.14, 0.21, 0.21],  # 0.21 + 0.21 ≥ 0.4 → two (tie: lower index first)
            [0.20, 0.19, 0.18, 0.16, 0.14, 0.13],  # 0.20 + 0.19 < 0.4 → three
        ]
    )
    keep = top_p_selection(probs, 0.4)
    assert keep.sum(dim=1).tolist() == [1, 2, 2, 3]
    assert keep[1].tolist() == [True, False, True, False, False, False]
    assert keep[3].tolist() == [True, True, True, False, False, False]
    assert torch.equal(keep, top_p_mask(probs, 0.4))  # same rule as the loss helper's reference
    random = torch.softmax(torch.randn(50, 6), dim=-1)
    assert torch.equal(top_p_selection(random, 0.4), top_p_mask(random, 0.4))


def test_output_is_the_gated_sum_of_adapters_without_renormalisation():
    mixture = _mixture()
    x = torch.randn(2, 5, 12)
    y, probs = mixture(x)
    assert probs.shape == (10, 6)
    flat = x.reshape(-1, 12)
    torch.testing.assert_close(probs, torch.softmax(flat @ mixture.router.weight.T, dim=-1))
    keep = top_p_selection(probs, 0.4)
    expected = torch.zeros_like(flat)
    for i in range(6):
        gate = torch.where(keep[:, i], probs[:, i], torch.zeros(()))
        expected += gate.unsqueeze(1) * mixture.expert_output(flat, i)
    torch.testing.assert_close(y.reshape(-1, 12), expected)
    gates, _ = mixture.gates(flat)
    assert (gates.sum(dim=1) < 1).any()  # kept probabilities are not rescaled to sum 1
    assert torch.equal(gates > 0, keep)


def test_adapter_is_a_relu_bottleneck():
    mixture = _mixture()
    x = torch.randn(3, 12)
    manual = torch.relu(x @ mixture.down_weight[2].T + mixture.down_bias[2]) @ mixture.up_weight[2].T
    torch.testing.assert_close(mixture.expert_output(x, 2), manual + mixture.up_bias[2])


def test_top_k_and_single_adapter_ablations():
    topk = _mixture("top_k", top_k=2)
    x = torch.randn(7, 12)
    gates, probs = topk.gates(x)
    assert torch.equal(gates > 0, top_k_selection(probs, 2))
    torch.testing.assert_close(gates.sum(dim=1), torch.ones(7))
    raw = _mixture("top_k", top_k=2, renormalize_top_k=False).gates(x)[0]
    assert (raw.sum(dim=1) < 1).all()
    single = _mixture("single", n=1)
    y, probs = single(x)
    assert probs is None and single.router is None
    torch.testing.assert_close(y, single.expert_output(x, 0))


def test_router_receives_gradient_and_zero_start():
    mixture = _mixture()
    x = torch.randn(4, 12)
    y, probs = mixture(x)
    (y.square().sum() - (probs * probs.log()).sum()).backward()
    assert mixture.router.weight.grad.abs().sum() > 0
    fresh = AdapterMixture(12, 6, 4)
    assert fresh(x)[0].abs().max() == 0
