"""Query fusion of text, sketch and IR into one query vector (FlexiReID CMQF, docs/methods.md §4).

One token per modality in the joint space: sketch CLS, IR CLS, text EOS; a missing modality is replaced by
its learnable stand-in E_m. Cross-attention layers (pre-LN transformer layers with residuals):
  y_s = TL_s(Q = x_ir + x_t, K = V = x_s),  y_ir = TL_ir(Q = x_s + x_t, K = V = x_ir),
  y_t = TL_t(Q = x_s + x_ir, K = V = x_t);
then f = MeanPool(TL_fu([y_s; y_ir; y_t])) with a self-attention layer. Inputs are L2-normalised first.
``MeanFusion`` is the no-CMQF ablation: the mean of the given unit vectors.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
import torch.nn.functional as F
from open_clip.transformer import ResidualAttentionBlock
from torch import nn

from engine.models.names import FUSION_MODES

MODALITY_ORDER = ("sketch", "ir", "text")
_MODE_PARTS = {"T": "text", "S": "sketch", "IR": "ir"}


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
                 act_layer: type[nn.Module] = nn.GELU) -> None:
        super().__init__()
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
    ) -> torch.Tensor:
        """Fused query [B, D] (not normalised) from whichever of the [B, D] inputs are given."""
        inputs = {"sketch": sketch, "ir": ir, "text": text}
        batch = _check_inputs(inputs)
        reference = next(v for v in inputs.values() if v is not None)
        tokens = {}
        for index, name in enumerate(MODALITY_ORDER):
            x = inputs[name]
            if x is None:
                tokens[name] = self.stand_ins[index].to(reference.dtype).expand(batch, -1)
            else:
                tokens[name] = F.normalize(x, dim=-1)
        return self._fuse(tokens)

    def _fuse(self, tokens: dict[str, torch.Tensor]) -> torch.Tensor:
        """Cross-attention per modality, fusion self-attention over the three outputs, mean pool."""
        tokens = {name: x.unsqueeze(1) for name, x in tokens.items()}
        outputs = []
        for name in MODALITY_ORDER:
            query = sum(tokens[other] for other in MODALITY_ORDER if other != name)
            for layer in self.cross[name]:
                query = layer(query, k_x=tokens[name], v_x=tokens[name])
            outputs.append(query)
        return self.fusion(torch.cat(outputs, dim=1)).mean(dim=1)

    def all_modes(
        self, text: torch.Tensor, sketch: torch.Tensor, ir: torch.Tensor, modes: Iterable[str] = FUSION_MODES
    ) -> dict[str, torch.Tensor]:
        """The fused query of each mode (only the mode's modalities real, the rest stand-ins), in one pass."""
        modes = list(modes)
        batch = _check_inputs({"text": text, "sketch": sketch, "ir": ir})
        real = {"text": text, "sketch": sketch, "ir": ir}
        tokens = {}
        for index, name in enumerate(MODALITY_ORDER):
            unit = F.normalize(real[name], dim=-1)
            stand_in = self.stand_ins[index].to(unit.dtype).expand(batch, -1)
            tokens[name] = torch.cat([unit if name in mode_modalities(m) else stand_in for m in modes])
        return dict(zip(modes, self._fuse(tokens).split(batch), strict=True))


class MeanFusion(nn.Module):
    """No-CMQF ablation: the mean of the given L2-normalised embeddings."""

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

