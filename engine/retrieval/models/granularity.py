"""CMAM OE-MVP granularity experts (docs/methods.md §1.6).

In every visual block the FFN output is FFN_shared(LN(H')) + FFN_g(LN(H')) where g is the sample's
granularity level; expert g is FFN_g(X) = act(X W_{g,1} + b_{g,1}) W_{g,2} + b_{g,2} with its own hidden
width d_g (paper: 192/384/768/1536/3072 for d = 768). Only the selected expert runs for a sample; a mixed
batch is grouped by level. Samples flagged ``collect`` run all experts so that the token means
Ē_g = mean_tokens FFN_g(H) are available for the orthogonality loss.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn


class FeedForward(nn.Module):
    """act(x W1 + b1) W2 + b2."""

    def __init__(self, width: int, hidden: int, act_layer: type[nn.Module], zero_output: bool = False) -> None:
        super().__init__()
        self.fc1 = nn.Linear(width, hidden)
        self.act = act_layer()
        self.fc2 = nn.Linear(hidden, width)
        if zero_output:
            nn.init.zeros_(self.fc2.weight)
            nn.init.zeros_(self.fc2.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


class GranularityExperts(nn.Module):
    """One FFN expert per level with heterogeneous hidden widths, routed per sample by level index.

    The experts' output layers start at zero [R], so a pretrained backbone keeps its function at first.
    """

    def __init__(self, width: int, hidden_widths: Sequence[int], act_layer: type[nn.Module]) -> None:
        super().__init__()
        self.experts = nn.ModuleList(FeedForward(width, h, act_layer, zero_output=True) for h in hidden_widths)

    @property
    def num_levels(self) -> int:
        return len(self.experts)

    def forward(
        self, x: torch.Tensor, levels: torch.Tensor, collect: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """FFN_{levels[b]}(x[b]) for every sample b of ``x`` [B, N, d].

        ``collect``: bool [B]; those samples also run every other expert and their token means come back
        as ``means`` [n_collect, G, d] (rows in batch order). Without ``collect`` ``means`` is ``None``.
        """
        if x.dim() != 3 or levels.shape != (x.shape[0],):
            raise ValueError(f"x must be [B, N, d] and levels [B]; got {tuple(x.shape)} and {tuple(levels.shape)}")
        has_collect = collect is not None and bool(collect.any())
        if not has_collect and x.shape[0] > 0 and bool((levels[1:] >= levels[:-1]).all()):
            # levels already grouped (one level, or level-major order): run each expert on a slice
            counts = torch.bincount(levels, minlength=self.num_levels).tolist()
            chunks = x.split(counts)
            outputs = [self.experts[g](chunk) for g, chunk in enumerate(chunks) if counts[g]]
            return (outputs[0] if len(outputs) == 1 else torch.cat(outputs)), None
        out: torch.Tensor | None = None
        level_means: list[torch.Tensor] = []
        for g, expert in enumerate(self.experts):
            chosen = levels == g
            rows_mask = chosen | collect if has_collect else chosen
            rows = rows_mask.nonzero().squeeze(1)
            if rows.numel() == 0:
                continue
            y = expert(x.index_select(0, rows))
            if out is None:  # in the experts' dtype (bf16 under autocast)
                out = x.new_zeros(x.shape, dtype=y.dtype)
            keep = chosen.index_select(0, rows)
            out = out.index_add(0, rows[keep], y[keep])
            if has_collect:
                level_means.append(y[collect.index_select(0, rows)].mean(dim=1))
        means = torch.stack(level_means, dim=1) if has_collect else None
        if out is None:  # empty batch
            out = torch.zeros_like(x)
        return out, means
