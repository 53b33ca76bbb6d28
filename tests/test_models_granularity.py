"""OE-MVP experts (docs/methods.md §1.6) and GCR heads (docs/methods.md §1.8) against their equations."""

import torch
from torch import nn

from engine.retrieval.models.gcr import ConsistencyMatcher, GranularityClassifier
from engine.retrieval.models.granularity import GranularityExperts

WIDTHS = (4, 8, 16, 32, 64)


def _experts(seed: int = 0) -> GranularityExperts:
    torch.manual_seed(seed)
    experts = GranularityExperts(16, WIDTHS, nn.GELU)
    for expert in experts.experts:  # leave the zero start so outputs are informative
        nn.init.normal_(expert.fc2.weight, std=0.2)
        nn.init.normal_(expert.fc2.bias, std=0.2)
    return experts


def _by_equation(experts: GranularityExperts, g: int, x: torch.Tensor) -> torch.Tensor:
    e = experts.experts[g]
    return torch.nn.functional.gelu(x @ e.fc1.weight.T + e.fc1.bias) @ e.fc2.weight.T + e.fc2.bias


def test_hidden_widths_and_zero_start():
    experts = GranularityExperts(16, WIDTHS, nn.GELU)
    assert [e.fc1.out_features for e in experts.experts] == list(WIDTHS)
    out, means = experts(torch.randn(3, 5, 16), torch.tensor([0, 2, 4]))
    assert means is None and out.abs().max() == 0


def test_mixed_batch_routes_each_sample_to_its_level():
    experts = _experts()
    x = torch.randn(6, 5, 16)
    levels = torch.tensor([4, 0, 2, 2, 1, 3])
    for order in (levels, levels.sort().values):  # general path, and the sliced path for grouped levels
        out, _ = experts(x, order)
        for b in range(6):
            torch.testing.assert_close(out[b], _by_equation(experts, int(order[b]), x[b]))


def test_only_the_selected_expert_runs():
    experts = _experts()
    rows_seen = {g: 0 for g in range(5)}
    for g, e in enumerate(experts.experts):
        e.fc1.register_forward_hook(lambda mod, inp, out, g=g: rows_seen.__setitem__(g, rows_seen[g] + inp[0].shape[0]))
    experts(torch.randn(4, 3, 16), torch.tensor([1, 1, 3, 1]))
    assert rows_seen == {0: 0, 1: 3, 2: 0, 3: 1, 4: 0}
    experts(torch.randn(4, 3, 16), torch.tensor([0, 2, 2, 2]))
    assert rows_seen == {0: 1, 1: 3, 2: 3, 3: 1, 4: 0}


def test_collect_returns_every_experts_token_mean_for_flagged_samples():
    experts = _experts()
    x = torch.randn(5, 7, 16)
    levels = torch.tensor([0, 3, 1, 4, 2])
    collect = torch.tensor([True, False, True, True, False])
    out, means = experts(x, levels, collect)
    assert means.shape == (3, 5, 16)
    for row, b in enumerate([0, 2, 3]):
        for g in range(5):
            torch.testing.assert_close(means[row, g], _by_equation(experts, g, x[b]).mean(dim=0))
    plain, _ = experts(x, levels)
    torch.testing.assert_close(out, plain)


def test_gcr_classifier_and_bilinear_matcher():
    torch.manual_seed(1)
    classifier = GranularityClassifier(8, 5)
    v, t = torch.randn(3, 8), torch.randn(3, 8)
    assert classifier(v).shape == (3, 5)
    torch.testing.assert_close(classifier(v), v @ classifier.linear.weight.T + classifier.linear.bias)
    matcher = ConsistencyMatcher(8)
    with torch.no_grad():
        matcher.bias.fill_(0.3)
    expected = torch.stack([v[b] @ matcher.weight @ t[b] for b in range(3)]) + 0.3
    torch.testing.assert_close(matcher(v, t), expected)
    torch.testing.assert_close(matcher.probability(v, t), torch.sigmoid(expected))
