"""Convolutional stems replacing the ViT patch embedding (docs/methods.md §6).

``ConvStem``: a stack of 3×3 stride-2 convolutions with BatchNorm and ReLU, then a 1×1 projection to the
transformer width: total stride 2^k equals the patch size, so the token grid is the same as a ViT with that
patch. ``MobileNetV2Stem``: the first 14 feature blocks of MobileNetV2 (stride 16, 96 channels), which can
start from ImageNet weights (the trainer loads them: ``engine.lab.train.stem_weights``), then the same 1×1
projection.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn
from torchvision.models import mobilenet_v2

MOBILENETV2_BLOCKS = 14  # features[:14]: output stride 16, 96 channels
MOBILENETV2_STRIDE = 16
MOBILENETV2_CHANNELS = 96


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


class MobileNetV2Stem(nn.Module):
    """[B, 3, H, W] → [B, width, H / 16, W / 16]: MobileNetV2 feature blocks 0–13, then a 1×1 projection."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.features = mobilenet_v2(weights=None).features[:MOBILENETV2_BLOCKS]
        self.projection = nn.Conv2d(MOBILENETV2_CHANNELS, width, kernel_size=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.projection(self.features(x))
