"""CMQF query fusion (docs/methods.md §4): stand-ins for missing modalities, the seven modes, the mean ablation."""

import pytest
import torch
import torch.nn.functional as F

from engine.retrieval.models.fusion import MeanFusion, QueryFusion, mode_modalities
from engine.retrieval.models.names import FUSION_MODES


def _inputs(batch: int = 3, dim: int = 16):
    torch.manual_seed(0)
    return torch.randn(batch, dim), torch.randn(batch, dim), torch.randn(batch, dim)


def test_mode_names():
    assert len(FUSION_MODES) == 7
    assert mode_modalities("T+S+IR") == {"text", "sketch", "ir"} and mode_modalities("IR") == {"ir"}
    with pytest.raises(ValueError, match="fusion mode"):
        mode_modalities("T+X")


def test_cmqf_follows_the_cross_attention_then_fusion_equations():
    fusion = QueryFusion(16, heads=2, layers=1).eval()
    text, sketch, ir = _inputs()
    t, s, i = (F.normalize(x, dim=-1).unsqueeze(1) for x in (text, sketch, ir))
    y_s = fusion.cross["sketch"][0](i + t, k_x=s, v_x=s)
    y_ir = fusion.cross["ir"][0](s + t, k_x=i, v_x=i)
    y_t = fusion.cross["text"][0](s + i, k_x=t, v_x=t)
    expected = fusion.fusion(torch.cat([y_s, y_ir, y_t], dim=1)).mean(dim=1)
    torch.testing.assert_close(fusion(text=text, sketch=sketch, ir=ir), expected)


def test_missing_modalities_use_their_stand_ins():
    fusion = QueryFusion(16, heads=2).eval()
    text, sketch, _ = _inputs()
    stand_in_ir = fusion.stand_ins[1].expand(3, -1)
    # the IR stand-in is not re-normalised, so pass it through the same path by hand
    with torch.no_grad():
        direct = fusion(text=text, sketch=sketch)
        tokens = {"sketch": F.normalize(sketch, dim=-1), "ir": stand_in_ir, "text": F.normalize(text, dim=-1)}
        torch.testing.assert_close(direct, fusion._fuse(tokens))
    assert not torch.allclose(direct, fusion(text=text, sketch=sketch, ir=torch.randn(3, 16)))
    with pytest.raises(ValueError, match="at least one"):
        fusion()
    with pytest.raises(ValueError, match="batch size"):
        fusion(text=text, sketch=sketch[:2])


def test_mean_fusion_ablation_is_the_mean_of_unit_vectors():
    text, sketch, ir = _inputs()
    modes = MeanFusion().all_modes(text, sketch, ir)
    torch.testing.assert_close(modes["T"], F.normalize(text, dim=-1))
    torch.testing.assert_close(modes["S+IR"], (F.normalize(sketch, dim=-1) + F.normalize(ir, dim=-1)) / 2)


def _sequences(batch: int = 3, dim: int = 16, lengths=(5, 4, 7)):
    torch.manual_seed(1)
    out = {}
    for name, length in zip(("sketch", "ir", "text"), lengths, strict=True):
        out[name] = (torch.randn(batch, length, dim), torch.ones(batch, length, dtype=torch.bool))
    out["text"][1][0, 4:] = False  # the first text is shorter: its last three tokens are padding
    return out


def test_sequence_keys_attend_over_tokens_and_ignore_padding():
    fusion = QueryFusion(16, heads=2, keys="sequence").eval()
    text, sketch, ir = _inputs()
    sequences = _sequences()
    with torch.no_grad():
        fused = fusion(text=text, sketch=sketch, ir=ir, sequences=sequences)
        changed_patch = {**sequences, "sketch": (sequences["sketch"][0].clone(), sequences["sketch"][1])}
        changed_patch["sketch"][0][:, 3] += 5.0  # one non-pooled token
        assert not torch.allclose(fused, fusion(text=text, sketch=sketch, ir=ir, sequences=changed_patch))
        padded = {**sequences, "text": (sequences["text"][0].clone(), sequences["text"][1])}
        padded["text"][0][0, 4:] = 100.0  # padding values never reach the output
        torch.testing.assert_close(fused, fusion(text=text, sketch=sketch, ir=ir, sequences=padded))
        # with one token per modality the sequence keys reduce to the pooled-token CMQF
        token = QueryFusion(16, heads=2).eval()
        token.load_state_dict(fusion.state_dict())
        pooled = {name: (x.unsqueeze(1), torch.ones(3, 1, dtype=torch.bool))
                  for name, x in (("text", text), ("sketch", sketch), ("ir", ir))}
        torch.testing.assert_close(fusion(text=text, sketch=sketch, ir=ir, sequences=pooled),
                                   token(text=text, sketch=sketch, ir=ir))
    with pytest.raises(ValueError, match="sketch token sequence"):
        fusion(text=text, sketch=sketch, sequences={"text": sequences["text"]})
    with pytest.raises(ValueError, match="keys"):
        QueryFusion(16, heads=2, keys="patches")


@pytest.mark.parametrize("keys", ["token", "sequence"])
def test_all_modes_in_one_pass_equal_each_mode_alone(keys):
    fusion = QueryFusion(16, heads=2, keys=keys).eval()
    text, sketch, ir = _inputs()
    sequences = _sequences() if keys == "sequence" else None
    with torch.no_grad():
        batched = fusion.all_modes(text, sketch, ir, sequences=sequences)
        assert list(batched) == list(FUSION_MODES)
        for mode, vector in batched.items():
            present = mode_modalities(mode)
            alone = fusion(
                text=text if "text" in present else None,
                sketch=sketch if "sketch" in present else None,
                ir=ir if "ir" in present else None,
                sequences=None if sequences is None else {name: sequences[name] for name in present},
            )
            torch.testing.assert_close(vector, alone, atol=1e-5, rtol=1e-5)
        assert not torch.allclose(batched["T"], batched["T+S"])
