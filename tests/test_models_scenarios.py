"""Uni-AT MoAE and heads (docs/methods.md §3) against the official code's rules."""

import pytest
import torch
from torch import nn

from engine.retrieval.models.names import SCENARIOS
from engine.retrieval.models.scenarios import ATTRIBUTE_LAYERS, AttributeExperts, ScenarioHeads, scenario_attributes


def _moae(gate: str = "renormalized") -> AttributeExperts:
    torch.manual_seed(0)
    return AttributeExperts(8, 16, nn.GELU, gate)


def test_scenario_attribute_pairs():
    assert ATTRIBUTE_LAYERS == ("DT", "NT", "AD", "ST", "LT")
    assert [scenario_attributes(s) for s in SCENARIOS] == [
        ("DT", "ST"), ("DT", "LT"), ("NT", "ST"), ("NT", "LT"), ("AD", "ST"), ("AD", "LT")
    ]
    with pytest.raises(ValueError, match="scenario"):
        scenario_attributes("XX-ST")


def test_top1_expert_is_one_of_the_two_cross_attribute_experts():
    moae = _moae()
    x = torch.randn(4, 6, 8)
    y, probs = moae(x)
    assert y.shape == (4, 6, 8) and probs.shape == (4, 6, 2)
    torch.testing.assert_close(probs.sum(-1), torch.ones(4, 6))
    for s, scenario in enumerate(SCENARIOS):
        modality, clothing = scenario_attributes(scenario)
        first = moae.down[clothing](torch.nn.functional.gelu(moae.up[modality](x[:, s])))
        second = moae.down[modality](torch.nn.functional.gelu(moae.up[clothing](x[:, s])))
        logits = x[:, s] @ moae.gate_weight[s].T
        choice = logits.argmax(dim=-1)
        expected = torch.where(choice.unsqueeze(1) == 0, first, second)  # renormalised weight = 1
        torch.testing.assert_close(y[:, s], expected)


def test_renormalised_gate_gets_no_gradient_but_softmax_gate_does():
    x = torch.randn(3, 6, 8)
    quirk = _moae("renormalized")
    quirk(x)[0].sum().backward()
    assert quirk.gate_weight.grad.abs().max() < 1e-6  # p / p: zero up to rounding
    soft = _moae("softmax")
    y, probs = soft(x)
    y.sum().backward()
    assert soft.gate_weight.grad.abs().max() > 1e-3
    weight = probs.max(dim=-1).values
    quirk_y, _ = _moae("renormalized")(x)
    torch.testing.assert_close(y, weight.unsqueeze(-1) * quirk_y)


def test_attribute_layers_copy_the_block_ffn():
    moae = _moae()
    fc1, fc2 = nn.Linear(8, 16), nn.Linear(16, 8)
    moae.initialise_from(fc1, fc2)
    for layer in ATTRIBUTE_LAYERS:
        assert torch.equal(moae.up[layer].weight, fc1.weight) and torch.equal(moae.down[layer].bias, fc2.bias)
    # with identical layers every expert is the original FFN
    x = torch.randn(2, 6, 8)
    torch.testing.assert_close(moae(x)[0], fc2(torch.nn.functional.gelu(fc1(x))))


def test_heads_bn_neck_and_classifier_sizes():
    heads = ScenarioHeads(8, num_person_ids=5, num_clothing_ids=11, st_classifies_clothing=True)
    assert [h.out_features for h in heads.classifiers] == [11, 5, 11, 5, 11, 5]
    assert all(not neck.bias.requires_grad for neck in heads.necks)
    assert all(h.bias is None for h in heads.classifiers)
    baseline = ScenarioHeads(8, 5, 11, st_classifies_clothing=False)
    assert [h.out_features for h in baseline.classifiers] == [5] * 6
    heads.eval()
    tokens = torch.randn(4, 6, 8)
    features, logits = heads(tokens)
    neck = heads.necks[2]
    manual = (tokens[:, 2] - neck.running_mean) / torch.sqrt(neck.running_var + neck.eps) * neck.weight + neck.bias
    torch.testing.assert_close(features[:, 2], manual)
    torch.testing.assert_close(logits[2], features[:, 2] @ heads.classifiers[2].weight.T)
    assert ScenarioHeads(8, 0, 0, True)(tokens)[1] is None
