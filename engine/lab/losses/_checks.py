"""Argument checks shared by the loss functions: clear errors naming the input and the problem."""

from __future__ import annotations

import torch


class LossInputError(ValueError):
    """A loss received an input of the wrong shape, dtype or range."""


def require_dim(name: str, tensor: torch.Tensor, dim: int) -> None:
    if not isinstance(tensor, torch.Tensor):
        raise LossInputError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
    if tensor.dim() != dim:
        raise LossInputError(f"{name} must have {dim} dimensions, got shape {tuple(tensor.shape)}")


def require_square(name: str, tensor: torch.Tensor) -> None:
    require_dim(name, tensor, 2)
    if tensor.shape[0] != tensor.shape[1]:
        raise LossInputError(f"{name} must be square (N×N), got shape {tuple(tensor.shape)}")


def require_len(name: str, tensor: torch.Tensor, length: int) -> None:
    require_dim(name, tensor, 1)
    if tensor.shape[0] != length:
        raise LossInputError(f"{name} must have length {length}, got {tensor.shape[0]}")


def require_positive(name: str, value: float) -> None:
    if not value > 0:
        raise LossInputError(f"{name} must be > 0, got {value}")


def reduce(name: str, per_item: torch.Tensor, reduction: str) -> torch.Tensor:
    """Apply ``reduction`` ("sum", "mean" or "none") to per-item losses."""
    if reduction == "sum":
        return per_item.sum()
    if reduction == "mean":
        return per_item.mean() if per_item.numel() else per_item.sum()
    if reduction == "none":
        return per_item
    raise LossInputError(f"{name}: reduction must be 'sum', 'mean' or 'none', got {reduction!r}")


def same_label_matrix(row_labels: torch.Tensor, col_labels: torch.Tensor) -> torch.Tensor:
    """Y_ij = 1[y_i = y_j] as a float matrix (rows: ``row_labels``, columns: ``col_labels``)."""
    return (row_labels.reshape(-1, 1) == col_labels.reshape(1, -1)).to(torch.get_default_dtype())
