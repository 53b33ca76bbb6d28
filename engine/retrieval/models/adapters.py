"""FlexiReID AEA-MoE: routed bottleneck adapters parallel to the FFN (docs/methods.md §4).

Per token x: P = softmax(W_r x) over n experts. Top-p routing: sort P descending and keep the shortest
prefix whose cumulative sum reaches T (the top expert alone when P_max ≥ T); gates g_i = P_i on the kept
experts, 0 elsewhere, **not** renormalised. y = Σ_i g_i Adapter_i(x), Adapter_i(x) = W_up,i ReLU(W_down,i x).
Alternatives for the ablations: top-K (traditional MoE, K = 2, gates renormalised to sum 1 by default) and
a single un-routed adapter ("+MLP-Adapter"). Up-projections start at zero (AdaptFormer style [R]).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


def top_p_selection(probs: torch.Tensor, threshold: float) -> torch.Tensor:
    """Bool mask of the experts kept by top-p routing along the last axis (ties: lower index first)."""
    order = torch.sort(probs, dim=-1, descending=True, stable=True).indices
    sorted_probs = probs.gather(-1, order)
    mass_before = sorted_probs.cumsum(dim=-1) - sorted_probs
    keep_sorted = mass_before < threshold
    return torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)


def top_k_selection(probs: torch.Tensor, k: int) -> torch.Tensor:
    """Bool mask of the k most probable experts along the last axis."""
    index = probs.topk(k, dim=-1).indices
    return torch.zeros_like(probs, dtype=torch.bool).scatter(-1, index, True)


class AdapterMixture(nn.Module):
    """n bottleneck adapters d → r → d (ReLU) mixed by a token router; returns (y, router probabilities)."""

    def __init__(
        self,
        width: int,
        num_experts: int,
        bottleneck: int,
        routing: str = "top_p",
        threshold: float = 0.4,
        top_k: int = 2,
        renormalize_top_k: bool = True,
    ) -> None:
        super().__init__()
        if routing not in ("top_p", "top_k", "single"):
            raise ValueError(f"routing must be 'top_p', 'top_k' or 'single', got {routing!r}")
        if routing == "single" and num_experts != 1:
            raise ValueError("routing 'single' uses exactly one adapter (num_experts=1)")
        self.routing = routing
        self.threshold = threshold
        self.top_k = top_k
        self.renormalize_top_k = renormalize_top_k
        self.num_experts = num_experts
        self.bottleneck = bottleneck
        self.down_weight = nn.Parameter(torch.empty(num_experts, bottleneck, width))
        self.down_bias = nn.Parameter(torch.zeros(num_experts, bottleneck))
        self.up_weight = nn.Parameter(torch.zeros(num_experts, width, bottleneck))
        self.up_bias = nn.Parameter(torch.zeros(num_experts, width))
        for expert in range(num_experts):
            nn.init.kaiming_uniform_(self.down_weight[expert], a=math.sqrt(5))
        self.router = nn.Linear(width, num_experts, bias=False) if routing != "single" else None

    def gates(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Gate values g [T, n] and router probabilities P [T, n] (``None`` for a single adapter)."""
        if self.router is None:
            return x.new_ones(x.shape[0], 1), None
        probs = F.softmax(self.router(x).float(), dim=-1)
        if self.routing == "top_p":
            keep = top_p_selection(probs, self.threshold)
            gates = torch.where(keep, probs, torch.zeros_like(probs))
        else:
            keep = top_k_selection(probs, self.top_k)
            gates = torch.where(keep, probs, torch.zeros_like(probs))
            if self.renormalize_top_k:
                gates = gates / gates.sum(dim=-1, keepdim=True)
        return gates, probs

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """y = Σ_i g_i Adapter_i(x) for x [..., d]; probabilities come back flattened to [tokens, n]."""
        shape = x.shape
        flat = x.reshape(-1, shape[-1])
        gates, probs = self.gates(flat)
        gates = gates.to(flat.dtype)
        hidden = F.linear(flat, self.down_weight.reshape(-1, shape[-1]), self.down_bias.reshape(-1))
        hidden = F.relu(hidden).view(-1, self.num_experts, self.bottleneck) * gates.unsqueeze(-1)
        up = self.up_weight.permute(1, 0, 2).reshape(shape[-1], -1)
        y = F.linear(hidden.reshape(flat.shape[0], -1), up) + gates @ self.up_bias
        return y.reshape(shape), probs

    def expert_output(self, x: torch.Tensor, expert: int) -> torch.Tensor:
        """Adapter_i(x) alone (for tests and analysis)."""
        hidden = F.relu(F.linear(x, self.down_weight[expert], self.down_bias[expert]))
        return F.linear(hidden, self.up_weight[expert], self.up_bias[expert])
