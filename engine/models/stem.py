"""Convolutional stem replacing the ViT patch embedding on the CPU default (docs/methods.md §6).

A stack of 3×3 stride-2 convolutions with BatchNorm and ReLU, then a 1×1 projection to the transformer
width: total stride 2^k equals the patch size, so the token grid is the same as a ViT with that patch.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn


class ConvStem(nn.Module):
    """[B, 3, H, W] → [B, width, H / 2^k, W / 2^k] with k = len(channels)."""

    def __init__(self, channels: Sequence[int], width: int) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        previous = 3
        for out in channels:
            layers += [
                nn.Conv2d(previous, out, kernel_size=3, stride=2, padding=1, bias=False),
                nn.BatchNorm2d(out),
                nn.ReLU(inplace=True),
            ]
            previous = out
        layers.append(nn.Conv2d(previous, width, kernel_size=1))
        self.layers = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)
