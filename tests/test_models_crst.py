"""CRST modules (docs/methods.md §2) against their equations."""

import pytest
import torch
import torch.nn.functional as F

from engine.retrieval.models.crst import MaskedGrounding, ReliabilityGate, ResolutionEmbedding, TextGuidedRefinement


def test_resolution_embedding_is_lambda_times_e_r_per_sample():
    emb = ResolutionEmbedding(4, 8, scale=2.5)
    assert emb(torch.tensor([0, 3])).abs().max() == 0  # zero start keeps a pretrained backbone intact
    torch.nn.init.normal_(emb.embedding.weight)
    out = emb(torch.tensor([1, 3]))
    assert out.shape == (2, 1, 8)
    torch.testing.assert_close(out[:, 0], 2.5 * emb.embedding.weight[[1, 3]])


def test_reliability_gate_equation():
    torch.manual_seed(0)
    gate = ReliabilityGate(8)
    assert gate.fc1.in_features == 16 and gate.fc1.out_features == 2
    tokens, e_r = torch.randn(2, 5, 8), torch.randn(2, 8)
    rho = gate(tokens, e_r)
    assert rho.shape == (2, 5) and ((rho > 0) & (rho < 1)).all()
    h, e = tokens[1, 3], e_r[1]
    hidden = F.gelu(gate.fc1.weight @ torch.cat([h, e]) + gate.fc1.bias)
    manual = torch.sigmoid(gate.fc2.weight @ hidden + gate.fc2.bias)
    torch.testing.assert_close(rho[1, 3], manual[0])


def test_masked_grounding_logits_only_at_masked_positions_and_gate_controls_the_image():
    torch.manual_seed(0)
    grounding = MaskedGrounding(16, vocab_size=50, layers=1, heads=2).eval()
    text, image = torch.randn(2, 6, 16), torch.randn(2, 4, 16)
    masked = torch.zeros(2, 6, dtype=torch.bool)
    masked[0, 2] = masked[1, 4] = masked[1, 5] = True
    ones = torch.ones(2, 4)
    logits = grounding(text, image, ones, masked)
    assert logits.shape == (3, 50)
    # ρ = 0 removes the image: the prediction no longer depends on it
    closed_a = grounding(text, image, torch.zeros(2, 4), masked)
    closed_b = grounding(text, torch.randn(2, 4, 16), torch.zeros(2, 4), masked)
    torch.testing.assert_close(closed_a, closed_b)
    assert not torch.allclose(logits, grounding(text, torch.randn(2, 4, 16), ones, masked))
    # attention-bias gating: ρ = 1 everywhere is the ungated cross-attention
    biased = MaskedGrounding(16, 50, 1, 2, gate_mode="attention_bias").eval()
    biased.load_state_dict(grounding.state_dict())
    torch.testing.assert_close(biased(text, image, ones, masked), logits, atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="gate_mode"):
        MaskedGrounding(16, 50, 1, 2, gate_mode="other")


def test_text_guided_refinement_equation():
    torch.manual_seed(0)
    tgr = TextGuidedRefinement(8, heads=2)
    v, text = torch.randn(2, 8), torch.randn(2, 5, 8)
    valid = torch.tensor([[True] * 5, [True, True, True, False, False]])
    torch.testing.assert_close(tgr(v, text, valid), v)  # W_o starts at zero: ṽᴸ = vᴸ
    torch.nn.init.normal_(tgr.out.weight)
    a = tgr.attend(v, text, valid)
    # head 0 of sample 1 by hand, padding excluded
    q = (tgr.q(v[1]))[:4]
    k = tgr.k(text[1, :3])[:, :4]
    val = tgr.v(text[1, :3])[:, :4]
    torch.testing.assert_close(a[1, :4], torch.softmax(k @ q / 2.0, dim=0) @ val)
    g = torch.sigmoid(tgr.gate(torch.cat([v, a], dim=-1)))
    torch.testing.assert_close(tgr(v, text, valid), v + g * tgr.out(a))
    scalar = TextGuidedRefinement(8, heads=2, gate="scalar")
    assert scalar.gate.out_features == 1
