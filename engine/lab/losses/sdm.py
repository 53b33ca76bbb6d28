"""Similarity distribution matching, SDM (docs/methods.md §2, IRRA form; also FlexiReID §4).

Rows are queries, columns are gallery items of the same batch. With logits ℓ_ji (already divided by τ):
p_{j→i} = softmax_i(ℓ_ji), q_{j→i} = 1[y_i=y_j] / Σ_k 1[y_k=y_j],
L_t2i = (1/N) Σ_j Σ_i p_{j→i} [log p_{j→i} − log(q_{j→i} + ε)]   (KL(p‖q); ε guards log 0, it is not
label smoothing), and L_SDM = L_t2i + L_i2t where L_i2t uses the transposed logits.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from engine.lab.losses._checks import (
    LossInputError,
    require_dim,
    require_len,
    require_positive,
    same_label_matrix,
)

SDM_EPSILON = 1e-8


def identity_target(row_labels: torch.Tensor, col_labels: torch.Tensor) -> torch.Tensor:
    """q: each row's same-identity indicator normalised to sum 1 (a row without a match stays all zero)."""
    same = same_label_matrix(row_labels, col_labels)
    return same / same.sum(dim=1, keepdim=True).clamp_min(1.0)


def kl_to_target(logits: torch.Tensor, target: torch.Tensor, eps: float = SDM_EPSILON) -> torch.Tensor:
    """(1/N) Σ_j KL(softmax(logits_j) ‖ target_j) with log(target + eps) (docs/methods.md §2, KL(p‖q) direction)."""
    log_p = F.log_softmax(logits, dim=1)
    per_row = (log_p.exp() * (log_p - torch.log(target + eps))).sum(dim=1)
    return per_row.mean()


def sdm_from_logits(
    logits: torch.Tensor,
    labels: torch.Tensor,
    column_labels: torch.Tensor | None = None,
    eps: float = SDM_EPSILON,
) -> torch.Tensor:
    """L_SDM from a text×image logit matrix (ℓ = s/τ), both directions summed (docs/methods.md §2).

    ``labels`` are the identities of the rows (texts); ``column_labels`` those of the columns (images),
    by default the same (paired batch).
    """
    require_dim("logits", logits, 2)
    require_len("labels", labels, logits.shape[0])
    column_labels = labels if column_labels is None else column_labels
    require_len("column_labels", column_labels, logits.shape[1])
    require_positive("eps", eps)
    target_t2i = identity_target(labels, column_labels).to(logits.dtype)
    target_i2t = identity_target(column_labels, labels).to(logits.dtype)
    return kl_to_target(logits, target_t2i, eps) + kl_to_target(logits.t(), target_i2t, eps)


def sdm_loss(
    text_features: torch.Tensor,
    image_features: torch.Tensor,
    labels: torch.Tensor,
    tau: float = 0.02,
    image_labels: torch.Tensor | None = None,
    eps: float = SDM_EPSILON,
) -> torch.Tensor:
    """L_SDM on features: cosine similarities divided by ``tau`` (default 0.02, logit scale 50)."""
    require_dim("text_features", text_features, 2)
    require_dim("image_features", image_features, 2)
    if text_features.shape[1] != image_features.shape[1]:
        raise LossInputError(
            "text_features and image_features differ in width: "
            f"{text_features.shape[1]} vs {image_features.shape[1]}"
        )
    require_positive("tau", tau)
    sims = F.normalize(text_features, dim=1) @ F.normalize(image_features, dim=1).t()
    return sdm_from_logits(sims / tau, labels, image_labels, eps)
