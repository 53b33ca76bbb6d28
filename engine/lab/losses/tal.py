"""Soft triplet alignment loss with a level-dependent margin (docs/methods.md §1.7, CMAM PCIA).

For a query×gallery cosine matrix M, soft labels L ∈ [0,1] and τ:
  α_ij = L_ij e^{M_ij/τ} / Σ_k L_ik e^{M_ik/τ}            (no gradient, TAL-style adaptive weights)
  row_i = [ m(g_i) − Σ_j α_ij M_ij + τ log Σ_k (1 − L_ik) e^{M_ik/τ} ]_+
L_t2i sums (or averages) the rows of M with L^{t2i}; L_i2t does the same on Mᵀ with L^{i2t}; the loss is
their sum. For binary L this is RDE's TAL. A row with no negative mass (Σ_k (1 − L_ik) = 0) costs 0.
"""

from __future__ import annotations

import torch

from engine.lab.losses._checks import LossInputError, reduce, require_len, require_positive, require_square

TAL_TAU = 0.015
MARGIN_LOW = 0.05
MARGIN_HIGH = 0.15


def level_margins(
    levels: torch.Tensor, n_levels: int = 5, low: float = MARGIN_LOW, high: float = MARGIN_HIGH
) -> torch.Tensor:
    """m(g) = low + (high − low)·(g−1)/(G−1) for 0-based level indices g−1 = 0..G−1 (docs/methods.md §1.7 [R]).

    Defaults give 0.05, 0.075, 0.10, 0.125, 0.15 for UC, C, M, F, UF.
    """
    if n_levels < 2:
        raise LossInputError(f"n_levels must be at least 2, got {n_levels}")
    levels = torch.as_tensor(levels)
    if levels.dtype.is_floating_point or levels.dtype == torch.bool:
        raise LossInputError(f"levels must be integer level indices, got dtype {levels.dtype}")
    if levels.numel() and (int(levels.min()) < 0 or int(levels.max()) >= n_levels):
        raise LossInputError(f"levels must lie in 0..{n_levels - 1}, got values {levels.unique().tolist()}")
    return low + (high - low) * levels.to(torch.get_default_dtype()) / (n_levels - 1)


def _check_labels(name: str, labels: torch.Tensor, shape: torch.Size) -> None:
    if labels.shape != shape:
        raise LossInputError(f"{name} must have shape {tuple(shape)}, got {tuple(labels.shape)}")
    if bool(((labels < 0) | (labels > 1)).any()):
        raise LossInputError(f"{name} must lie in [0, 1]")
    if bool((labels.sum(dim=1) <= 0).any()):
        raise LossInputError(f"{name}: every row needs at least one positive (label > 0)")


def soft_tal_rows(
    scores: torch.Tensor, labels: torch.Tensor, margins: torch.Tensor | float, tau: float = TAL_TAU
) -> torch.Tensor:
    """Per-row soft TAL cost for one direction (rows are the queries of that direction)."""
    require_square("scores", scores)
    require_positive("tau", tau)
    _check_labels("labels", labels, scores.shape)
    labels = labels.to(scores.dtype)
    margins = torch.as_tensor(margins, dtype=scores.dtype, device=scores.device)
    if margins.dim() == 1:
        require_len("margins", margins, scores.shape[0])
    elif margins.dim() != 0:
        raise LossInputError(
            f"margins must be a scalar or a length-N vector, got shape {tuple(margins.shape)}"
        )

    logits = scores / tau
    neg_inf = torch.tensor(float("-inf"), dtype=scores.dtype, device=scores.device)
    with torch.no_grad():
        pos_logits = torch.where(labels > 0, logits + torch.log(labels.clamp_min(1e-30)), neg_inf)
        alpha = torch.softmax(pos_logits, dim=1)
    positive_term = (alpha * scores).sum(dim=1)

    negative_weight = 1.0 - labels
    has_negative = (negative_weight > 0).any(dim=1)
    neg_logits = torch.where(
        negative_weight > 0, logits + torch.log(negative_weight.clamp_min(1e-30)), neg_inf
    )
    # Rows without negatives get a harmless finite placeholder; their cost is zeroed below.
    neg_logits = torch.where(has_negative.unsqueeze(1), neg_logits, torch.zeros_like(neg_logits))
    negative_term = tau * torch.logsumexp(neg_logits, dim=1)

    cost = torch.clamp(margins - positive_term + negative_term, min=0.0)
    return torch.where(has_negative, cost, torch.zeros_like(cost))


def soft_tal_loss(
    similarity: torch.Tensor,
    labels_t2i: torch.Tensor,
    labels_i2t: torch.Tensor | None = None,
    margins: torch.Tensor | float = 0.1,
    tau: float = TAL_TAU,
    reduction: str = "sum",
) -> torch.Tensor:
    """L_stal = L_t2i + L_i2t (docs/methods.md §1.7).

    ``similarity`` is M = T Vᵀ (rows: texts, columns: images, cosine). ``labels_i2t`` defaults to
    ``labels_t2i.T``. ``margins`` is a scalar or one margin per batch pair (the pair's level; the image
    row i uses the margin of its paired text i). ``reduction`` "sum" (RDE) or "mean" over the rows of
    each direction, or "none" for the per-row sum of both directions.
    """
    require_square("similarity", similarity)
    labels_i2t = labels_t2i.t() if labels_i2t is None else labels_i2t
    t2i = soft_tal_rows(similarity, labels_t2i, margins, tau)
    i2t = soft_tal_rows(similarity.t(), labels_i2t, margins, tau)
    return reduce("soft_tal_loss", t2i + i2t, reduction)
