"""Convolutional stems replacing the ViT patch embedding (docs/methods.md §6).

``ConvStem``: a stack of 3×3 stride-2 convolutions with BatchNorm and ReLU, then a 1×1 projection to the
transformer width: total stride 2^k equals the patch size, so the token grid is the same as a ViT with that
patch. ``MobileNetV2Stem``: the first 14 feature blocks of MobileNetV2 (stride 16, 96 channels), which can
start from ImageNet weights (``load_mobilenetv2_weights``), then the same 1×1 projection.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch
from torch import nn
from torchvision.models import mobilenet_v2

MOBILENETV2_BLOCKS = 14  # features[:14]: output stride 16, 96 channels
MOBILENETV2_STRIDE = 16
MOBILENETV2_CHANNELS = 96


class StemWeightsError(ValueError):
    """A stem weights file that cannot be read or does not fit the stem."""


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


def load_mobilenetv2_weights(stem: MobileNetV2Stem, path: Path | str) -> int:
    """Copy a MobileNetV2 ``features`` state dict (torchvision's or an equivalent layout, tensors in the same
    order and shapes) into the stem's blocks; returns the number of tensors copied. Errors name the file."""
    path = Path(path)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise StemWeightsError(f"stem weights {path}: no such file") from None
    except Exception as exc:  # noqa: BLE001 - any unreadable file is the same user error
        raise StemWeightsError(f"stem weights {path}: not a readable PyTorch state dict ({exc})") from None
    if isinstance(state, dict) and isinstance(state.get("state_dict"), dict):
        state = state["state_dict"]
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise StemWeightsError(f"stem weights {path}: expected a dict of tensors")
    source = [(k, v) for k, v in state.items() if k.removeprefix("module.").startswith("features.")]
    target = stem.features.state_dict()
    if len(source) < len(target):
        raise StemWeightsError(
            f"stem weights {path}: {len(source)} MobileNetV2 feature tensors, the stem needs {len(target)}")
    copied = {}
    for (their_key, value), (our_key, ours) in zip(source, target.items(), strict=False):
        if value.shape != ours.shape:
            raise StemWeightsError(
                f"stem weights {path}: {their_key} has shape {tuple(value.shape)}, the stem's {our_key} needs "
                f"{tuple(ours.shape)} (not a MobileNetV2 with width multiplier 1.0?)")
        copied[our_key] = value.to(ours.dtype)
    stem.features.load_state_dict(copied)
    return len(copied)
