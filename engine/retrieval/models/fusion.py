"""Query fusion of text, sketch and IR into one query vector (FlexiReID CMQF, docs/methods.md §4).

One token per modality in the joint space: sketch CLS, IR CLS, text EOS; a missing modality is replaced by
its learnable stand-in E_m. Cross-attention layers (pre-LN transformer layers with residuals):
  y_s = TL_s(Q = x_ir + x_t, K = V = x_s),  y_ir = TL_ir(Q = x_s + x_t, K = V = x_ir),
  y_t = TL_t(Q = x_s + x_ir, K = V = x_t);
then f = MeanPool(TL_fu([y_s; y_ir; y_t])) with a self-attention layer. Inputs are L2-normalised first.
With ``keys="sequence"`` each modality's keys and values are its whole token sequence in the joint space
(image patches with their CLS, text tokens up to end-of-text; padding masked), so the cross-attention softmax
chooses among tokens; with ``keys="token"`` (the config default) they are the one pooled token, and the
softmax over a single key is always 1. ``MeanFusion`` is the no-CMQF ablation: the mean of the given unit
vectors.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
import torch.nn.functional as F
from open_clip.transformer import ResidualAttentionBlock
from torch import nn

from engine.retrieval.models.names import FUSION_MODES

MODALITY_ORDER = ("sketch", "ir", "text")
KEY_KINDS = ("token", "sequence")
_MODE_PARTS = {"T": "text", "S": "sketch", "IR": "ir"}
#: modality → (unit tokens [B, L, D], valid [B, L] bool): the keys and values of its cross-attention.
Sequences = dict[str, tuple[torch.Tensor, torch.Tensor]]


def mode_modalities(mode: str) -> frozenset[str]:
    """The modalities present in a mode name such as "T+S+IR"."""
    if mode not in FUSION_MODES:
        raise ValueError(f"fusion mode must be one of {list(FUSION_MODES)}, got {mode!r}")
    return frozenset(_MODE_PARTS[part] for part in mode.split("+"))


def _check_inputs(inputs: dict[str, torch.Tensor | None]) -> int:
    given = {name: x for name, x in inputs.items() if x is not None}
    if not given:
        raise ValueError("fusion needs at least one of text, sketch, ir")
    sizes = {name: tuple(x.shape) for name, x in given.items()}
    batch = {x.shape[0] for x in given.values()}
    if len(batch) != 1 or any(x.dim() != 2 for x in given.values()):
        raise ValueError(f"fusion inputs must be [B, D] with one batch size; got {sizes}")
    return batch.pop()


class QueryFusion(nn.Module):
    """CMQF: per-modality cross-attention layers, a fusion self-attention layer, mean pooling."""

    def __init__(self, dim: int, heads: int, layers: int = 1, mlp_ratio: float = 4.0,
                 act_layer: type[nn.Module] = nn.GELU, keys: str = "token") -> None:
        super().__init__()
        if keys not in KEY_KINDS:
            raise ValueError(f"fusion keys must be one of {list(KEY_KINDS)}, got {keys!r}")
        self.keys = keys
        self.heads = heads
        self.stand_ins = nn.Parameter(torch.randn(len(MODALITY_ORDER), dim) * dim**-0.5)
        self.cross = nn.ModuleDict(
            {
                name: nn.ModuleList(
                    ResidualAttentionBlock(dim, heads, mlp_ratio, act_layer=act_layer, is_cross_attention=True)
                    for _ in range(layers)
                )
                for name in MODALITY_ORDER
            }
        )
        self.fusion = ResidualAttentionBlock(dim, heads, mlp_ratio, act_layer=act_layer)

    def forward(
        self,
        text: torch.Tensor | None = None,
        sketch: torch.Tensor | None = None,
        ir: torch.Tensor | None = None,
        sequences: Sequences | None = None,
    ) -> torch.Tensor:
        """Fused query [B, D] (not normalised) from whichever of the [B, D] inputs are given; with sequence
        keys, ``sequences`` holds each given modality's projected tokens and their valid mask."""
        inputs = {"sketch": sketch, "ir": ir, "text": text}
        batch = _check_inputs(inputs)
        reference = next(v for v in inputs.values() if v is not None)
        tokens, keys = {}, {}
        for index, name in enumerate(MODALITY_ORDER):
            x = inputs[name]
            if x is None:
                tokens[name] = self.stand_ins[index].to(reference.dtype).expand(batch, -1)
            else:
                tokens[name] = F.normalize(x, dim=-1)
            if self.keys == "sequence":
                keys[name] = self._sequence(name, tokens[name], x is not None, sequences)
        return self._fuse(tokens, keys or None)

    def _sequence(self, name: str, token: torch.Tensor, given: bool,
                  sequences: Sequences | None) -> tuple[torch.Tensor, torch.Tensor]:
        """(unit tokens [B, L, D], valid [B, L]) of one modality: its sequence, or its stand-in alone."""
        if not given:
            return token.unsqueeze(1), torch.ones(token.shape[0], 1, dtype=torch.bool, device=token.device)
        if not sequences or name not in sequences:
            raise ValueError(f"sequence-key fusion needs the {name} token sequence beside its pooled vector")
        values, valid = sequences[name]
        if values.dim() != 3 or values.shape[0] != token.shape[0] or tuple(valid.shape) != tuple(values.shape[:2]):
            raise ValueError(f"the {name} sequence must be [B, L, D] with a [B, L] mask; got "
                             f"{tuple(values.shape)} and {tuple(valid.shape)}")
        return F.normalize(values, dim=-1).to(token.dtype), valid.bool()

    def _padding_mask(self, valid: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """Additive attention mask [B·heads, 1, L]: 0 on valid keys, −inf on padding."""
        mask = torch.zeros(valid.shape, dtype=dtype, device=valid.device).masked_fill(~valid, float("-inf"))
        return mask.repeat_interleave(self.heads, dim=0).unsqueeze(1)

    def _fuse(self, tokens: dict[str, torch.Tensor],
              keys: dict[str, tuple[torch.Tensor, torch.Tensor]] | None = None) -> torch.Tensor:
        """Cross-attention per modality (keys: its pooled token, or its token sequence), fusion
        self-attention over the three outputs, mean pool."""
        tokens = {name: x.unsqueeze(1) for name, x in tokens.items()}
        outputs = []
        for name in MODALITY_ORDER:
            query = sum(tokens[other] for other in MODALITY_ORDER if other != name)
            if keys is None:
                values, mask = tokens[name], None
            else:
                values, valid = keys[name]
                mask = self._padding_mask(valid, query.dtype)
            for layer in self.cross[name]:
                query = layer(query, k_x=values, v_x=values, attn_mask=mask)
            outputs.append(query)
        return self.fusion(torch.cat(outputs, dim=1)).mean(dim=1)

    def all_modes(
        self, text: torch.Tensor, sketch: torch.Tensor, ir: torch.Tensor, modes: Iterable[str] = FUSION_MODES,
        sequences: Sequences | None = None,
    ) -> dict[str, torch.Tensor]:
        """The fused query of each mode (only the mode's modalities real, the rest stand-ins), in one pass."""
        modes = list(modes)
        batch = _check_inputs({"text": text, "sketch": sketch, "ir": ir})
        real = {"text": text, "sketch": sketch, "ir": ir}
        tokens, keys = {}, {}
        for index, name in enumerate(MODALITY_ORDER):
            unit = F.normalize(real[name], dim=-1)
            stand_in = self.stand_ins[index].to(unit.dtype).expand(batch, -1)
            present = [name in mode_modalities(m) for m in modes]
            tokens[name] = torch.cat([unit if here else stand_in for here in present])
            if self.keys == "sequence":
                values, valid = self._sequence(name, unit, True, sequences)
                lone = torch.zeros_like(values)
                lone[:, 0] = stand_in
                lone_valid = torch.zeros_like(valid)
                lone_valid[:, 0] = True
                keys[name] = (torch.cat([values if here else lone for here in present]),
                              torch.cat([valid if here else lone_valid for here in present]))
        return dict(zip(modes, self._fuse(tokens, keys or None).split(batch), strict=True))


class MeanFusion(nn.Module):
    """No-CMQF ablation: the mean of the given L2-normalised embeddings."""

    keys = "token"  # reads the pooled vectors only

    def forward(
        self,
        text: torch.Tensor | None = None,
        sketch: torch.Tensor | None = None,
        ir: torch.Tensor | None = None,
    ) -> torch.Tensor:
        inputs = {"sketch": sketch, "ir": ir, "text": text}
        _check_inputs(inputs)
        given = [F.normalize(x, dim=-1) for x in inputs.values() if x is not None]
        return torch.stack(given).mean(dim=0)

    def all_modes(
        self, text: torch.Tensor, sketch: torch.Tensor, ir: torch.Tensor, modes: Iterable[str] = FUSION_MODES
    ) -> dict[str, torch.Tensor]:
        out = {}
        for mode in modes:
            present = mode_modalities(mode)
            out[mode] = self.forward(
                text=text if "text" in present else None,
                sketch=sketch if "sketch" in present else None,
                ir=ir if "ir" in present else None,
            )
        return out

