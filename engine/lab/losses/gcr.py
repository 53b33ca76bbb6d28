"""Granularity-consistent reasoning losses, L_reason = L_cls + L_match (docs/methods.md §1.8, CMAM GCR).

L_cls   = CE(C(v_cls^g), g) + CE(C(t_cls), g)     (one shared level classifier C)
L_match = BCE(f_m(v_cls^g, t_cls), 1) + BCE(f_m(v_cls^{g'}, t_cls), 0),  g' uniform over the other levels.
The matching head itself (bilinear, sigmoid) lives in the model; here it enters as pre-sigmoid logits.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from engine.lab.losses._checks import LossInputError, require_dim, require_len


def granularity_classification_loss(
    visual_logits: torch.Tensor, text_logits: torch.Tensor, levels: torch.Tensor
) -> torch.Tensor:
    """L_cls: cross-entropy of the level classifier on the visual and the text CLS (batch means)."""
    require_dim("visual_logits", visual_logits, 2)
    require_dim("text_logits", text_logits, 2)
    if visual_logits.shape != text_logits.shape:
        raise LossInputError(
            f"visual_logits {tuple(visual_logits.shape)} and text_logits "
            f"{tuple(text_logits.shape)} must have the same shape"
        )
    require_len("levels", levels, visual_logits.shape[0])
    return F.cross_entropy(visual_logits, levels) + F.cross_entropy(text_logits, levels)


def consistency_matching_loss(matched_logits: torch.Tensor, mismatched_logits: torch.Tensor) -> torch.Tensor:
    """L_match: BCE(f_m(v^g, t), 1) + BCE(f_m(v^{g'}, t), 0), from the head's logits (batch means)."""
    matched_logits = matched_logits.reshape(-1)
    mismatched_logits = mismatched_logits.reshape(-1)
    if matched_logits.shape != mismatched_logits.shape:
        raise LossInputError(
            f"matched_logits ({matched_logits.numel()}) and mismatched_logits "
            f"({mismatched_logits.numel()}) must have one entry per sample each"
        )
    return F.binary_cross_entropy_with_logits(
        matched_logits, torch.ones_like(matched_logits)
    ) + F.binary_cross_entropy_with_logits(mismatched_logits, torch.zeros_like(mismatched_logits))


def sample_wrong_levels(
    levels: torch.Tensor, n_levels: int = 5, generator: torch.Generator | None = None
) -> torch.Tensor:
    """g' drawn uniformly from the n_levels − 1 levels other than each sample's level."""
    if n_levels < 2:
        raise LossInputError(f"n_levels must be at least 2, got {n_levels}")
    if levels.numel() and (int(levels.min()) < 0 or int(levels.max()) >= n_levels):
        raise LossInputError(f"levels must lie in 0..{n_levels - 1}")
    shift = torch.randint(1, n_levels, levels.shape, generator=generator, device=levels.device)
    return (levels + shift) % n_levels


def reasoning_loss(
    visual_logits: torch.Tensor,
    text_logits: torch.Tensor,
    levels: torch.Tensor,
    matched_logits: torch.Tensor,
    mismatched_logits: torch.Tensor,
) -> torch.Tensor:
    """L_reason = L_cls + L_match with unit weights (docs/methods.md §1.8 [R])."""
    return granularity_classification_loss(visual_logits, text_logits, levels) + consistency_matching_loss(
        matched_logits, mismatched_logits
    )
