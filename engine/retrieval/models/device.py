"""Device choice and mixed precision: CUDA when available (bf16 autocast there), CPU otherwise."""

from __future__ import annotations

import contextlib

import torch


def choose_device(prefer: str | torch.device | None = None) -> torch.device:
    """``prefer`` if given (e.g. "cpu", "cuda:1"), else CUDA when available, else CPU."""
    if prefer is not None:
        device = torch.device(prefer)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device {str(prefer)!r} was asked for but CUDA is not available")
        return device
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


def autocast_for(device: torch.device, enabled: bool = True) -> contextlib.AbstractContextManager:
    """bf16 autocast on CUDA; a no-op context elsewhere (CPU runs in float32)."""
    if enabled and device.type == "cuda":
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()
