"""Top-p expert routing reference and the routing-entropy loss L_ada (docs/methods.md §4, FlexiReID AEA-MoE).

Top-p: sort P descending; keep the shortest prefix whose cumulative sum reaches T (the top expert alone
when P_max ≥ T); gates g_i = P_i on the kept experts, 0 elsewhere, not renormalised.
L_ada = −Σ_i P_i log P_i per token, averaged over the tokens of each layer, then over layers.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from engine.lab.losses._checks import LossInputError

TOP_P_THRESHOLD = 0.4


def top_p_mask(probs: torch.Tensor, threshold: float = TOP_P_THRESHOLD) -> torch.Tensor:
    """Boolean mask (same shape as ``probs``) of the experts the top-p rule selects along the last axis.

    Ties in probability are broken by the lower expert index. If rounding keeps the total below T, all
    experts are kept.
    """
    if not 0 < threshold <= 1:
        raise LossInputError(f"threshold must lie in (0, 1], got {threshold}")
    if probs.dim() < 1 or probs.shape[-1] < 1:
        raise LossInputError(f"probs needs a non-empty last (expert) axis, got shape {tuple(probs.shape)}")
    order = torch.sort(probs, dim=-1, descending=True, stable=True).indices
    sorted_probs = probs.gather(-1, order)
    mass_before = sorted_probs.cumsum(dim=-1) - sorted_probs
    keep_sorted = mass_before < threshold
    return torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)


def top_p_gates(probs: torch.Tensor, threshold: float = TOP_P_THRESHOLD) -> torch.Tensor:
    """g = P on the top-p selection, 0 elsewhere (no renormalisation, docs/methods.md §4)."""
    return torch.where(top_p_mask(probs, threshold), probs, torch.zeros_like(probs))


def routing_entropy(router_probs: Sequence[torch.Tensor] | torch.Tensor) -> torch.Tensor:
    """L_ada: mean over layers of the mean per-token entropy −Σ_i P_i log P_i (0·log 0 = 0).

    ``router_probs``: one tensor per layer (..., n_experts) of probabilities, or one stacked tensor whose
    first axis is the layer.
    """
    layers = list(router_probs)
    if not layers:
        raise LossInputError("router_probs is empty: give at least one layer")
    per_layer = []
    for index, probs in enumerate(layers):
        if probs.dim() < 1 or probs.numel() == 0:
            raise LossInputError(f"router_probs layer {index} is empty")
        entropy = -torch.special.xlogy(probs, probs).sum(dim=-1)
        per_layer.append(entropy.mean())
    return torch.stack(per_layer).mean()
