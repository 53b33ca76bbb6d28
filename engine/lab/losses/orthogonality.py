"""Orthogonality of granularity experts, L_ortho (docs/methods.md §1.6, CMAM OE-MVP).

Ē_g^l = token mean of FFN_g^l(H^l) per sample;
L_ortho = (1/L) Σ_l (2/(G(G−1))) Σ_{g<g'} cos(Ē_g^l, Ē_{g'}^l)², averaged over the batch
(``absolute=True`` uses |cos| instead of cos²).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from engine.lab.losses._checks import LossInputError


def expert_pair_cosines(expert_means: torch.Tensor) -> torch.Tensor:
    """cos(Ē_g, Ē_g') for every g<g': input (B, G, d), output (B, G(G−1)/2)."""
    if expert_means.dim() != 3 or expert_means.shape[1] < 2:
        raise LossInputError(
            f"expert outputs must be (B, G≥2, d) after the token mean, got {tuple(expert_means.shape)}"
        )
    unit = F.normalize(expert_means, dim=-1)
    gram = unit @ unit.transpose(1, 2)
    rows, cols = torch.triu_indices(
        expert_means.shape[1], expert_means.shape[1], offset=1, device=gram.device
    )
    return gram[:, rows, cols]


def orthogonality_loss(
    expert_outputs: Sequence[torch.Tensor] | torch.Tensor, absolute: bool = False
) -> torch.Tensor:
    """L_ortho over layers. Each layer's tensor is (B, G, d) (already token-averaged) or (B, G, T, d).

    A single tensor is read as one layer when 3-D or 4-D, or as stacked layers (L, B, G, T, d) when 5-D.
    """
    if isinstance(expert_outputs, torch.Tensor):
        layers = list(expert_outputs) if expert_outputs.dim() == 5 else [expert_outputs]
    else:
        layers = list(expert_outputs)
    if not layers:
        raise LossInputError("expert_outputs is empty: give at least one layer")
    per_layer = []
    for index, layer in enumerate(layers):
        if layer.dim() == 4:
            layer = layer.mean(dim=2)
        elif layer.dim() != 3:
            raise LossInputError(
                f"expert_outputs layer {index} must be (B, G, d) or (B, G, T, d), got {tuple(layer.shape)}"
            )
        cosines = expert_pair_cosines(layer)
        penalty = cosines.abs() if absolute else cosines.square()
        per_layer.append(penalty.mean())
    return torch.stack(per_layer).mean()
