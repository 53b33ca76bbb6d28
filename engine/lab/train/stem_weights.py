"""ImageNet weights for the MobileNetV2 stem (``engine.retrieval.models.stem``) at the start of training:
``load_mobilenetv2_weights`` copies a MobileNetV2 ``features`` state dict into the stem's blocks."""

from __future__ import annotations

from pathlib import Path

import torch

from engine.retrieval.models.stem import MobileNetV2Stem


class StemWeightsError(ValueError):
    """A stem weights file that cannot be read or does not fit the stem."""


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
