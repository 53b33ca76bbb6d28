"""Plain image–text InfoNCE, the contrastive baseline L_itc (docs/methods.md §1.5).

L_itc = −(1/2N) Σ_i [ log softmax_j(s_ij/τ)_i + log softmax_j(s_ji/τ)_i ],  s_ij = cos(v_i, t_j):
every off-diagonal pair is a negative, whatever its identity (the "uniform" constraint of §1.5).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from engine.lab.losses._checks import LossInputError, require_dim, require_positive, require_square


def info_nce_from_similarity(similarity: torch.Tensor, tau: float = 0.02) -> torch.Tensor:
    """L_itc from an N×N cosine matrix whose diagonal holds the matching pairs."""
    require_square("similarity", similarity)
    require_positive("tau", tau)
    logits = similarity / tau
    targets = torch.arange(similarity.shape[0], device=similarity.device)
    return 0.5 * (F.cross_entropy(logits, targets) + F.cross_entropy(logits.t(), targets))


def info_nce_loss(
    image_features: torch.Tensor, text_features: torch.Tensor, tau: float = 0.02
) -> torch.Tensor:
    """L_itc on paired features (row i of each tensor is one pair); features are L2-normalised here."""
    require_dim("image_features", image_features, 2)
    require_dim("text_features", text_features, 2)
    if image_features.shape != text_features.shape:
        raise LossInputError(
            f"image_features and text_features must have the same shape, got {tuple(image_features.shape)} "
            f"and {tuple(text_features.shape)}"
        )
    sims = F.normalize(image_features, dim=1) @ F.normalize(text_features, dim=1).t()
    return info_nce_from_similarity(sims, tau)
