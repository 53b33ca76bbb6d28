"""Attribute heads: one linear classifier per ontology attribute on an embedding (docs/methods.md §6).

The synthetic world labels all 18 attributes for free; supervising them speeds the image side up. Logits
come back per attribute key in canonical order, each over that attribute's canonical values.
"""

from __future__ import annotations

import torch
from torch import nn

from engine.kernel.ontology import ONTOLOGY


class AttributeHeads(nn.Module):
    """x [B, D] → {attribute key: logits [B, number of values]} (one shared matmul, split per attribute)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.keys: tuple[str, ...] = ONTOLOGY.keys
        self.sizes: tuple[int, ...] = tuple(len(ONTOLOGY.attributes[k]) for k in self.keys)
        self.linear = nn.Linear(dim, sum(self.sizes))

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        return dict(zip(self.keys, self.linear(x).split(self.sizes, dim=-1), strict=True))

    def predict(self, x: torch.Tensor) -> list[dict[str, str]]:
        """The most probable value of every attribute, per sample."""
        logits = self.forward(x)
        out: list[dict[str, str]] = [{} for _ in range(x.shape[0])]
        for key, values in logits.items():
            for row, index in enumerate(values.argmax(dim=-1).tolist()):
                out[row][key] = ONTOLOGY.attributes[key][index]
        return out
