"""CMAM GCR heads (docs/methods.md §1.8): the shared granularity classifier C and the consistency matcher f_m.

C is one Linear(D → G) applied to both the visual and the text CLS embedding.
f_m(v, t) = sigmoid(vᵀ W_m t + b_m); ``forward`` returns the pre-sigmoid logit (for BCE-with-logits).
"""

from __future__ import annotations

import torch
from torch import nn


class GranularityClassifier(nn.Module):
    """Level logits C(x) for a visual or text CLS embedding x [B, D] → [B, G]."""

    def __init__(self, dim: int, num_levels: int) -> None:
        super().__init__()
        self.linear = nn.Linear(dim, num_levels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


class ConsistencyMatcher(nn.Module):
    """Bilinear matching logit vᵀ W_m t + b_m per pair (v[b], t[b]) → [B]."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(dim, dim))
        self.bias = nn.Parameter(torch.zeros(()))
        nn.init.normal_(self.weight, std=dim**-1)

    def forward(self, v: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        if v.shape != t.shape or v.dim() != 2:
            raise ValueError(f"v and t must both be [B, D]; got {tuple(v.shape)} and {tuple(t.shape)}")
        return ((v @ self.weight) * t).sum(dim=-1) + self.bias

    def probability(self, v: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """f_m(v, t) = sigmoid(vᵀ W_m t + b_m)."""
        return torch.sigmoid(self.forward(v, t))
