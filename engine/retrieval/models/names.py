"""Names of the categorical inputs the model takes, and their conversion to per-sample index tensors.

Levels come from the ontology (UC, C, M, F, UF); resolutions follow CRST (docs/methods.md §2, same names as
``engine.lab.losses.crst``); modality codes match ``engine.lab.losses.uniat`` (rgb 0, ir 1); scenarios follow the
Uni-AT order (docs/methods.md §3).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from engine.kernel.vocabulary import IMAGE_MODALITIES as MODALITIES
from engine.kernel.vocabulary import LEVELS, SCENARIOS
from engine.kernel.vocabulary import MODEL_RESOLUTIONS as RESOLUTIONS

FUSION_MODES: tuple[str, ...] = ("T", "S", "IR", "T+S", "T+IR", "S+IR", "T+S+IR")

__all__ = ["FUSION_MODES", "LEVELS", "MODALITIES", "RESOLUTIONS", "SCENARIOS", "name_index", "index_tensor"]


class UnknownNameError(ValueError):
    """A categorical input (level, modality, resolution, scenario) outside its vocabulary."""


def name_index(value: str | int, names: Sequence[str], what: str) -> int:
    """Index of ``value`` in ``names`` (names match case-insensitively; ints are range-checked)."""
    if isinstance(value, bool):
        raise UnknownNameError(f"{what} must be one of {list(names)} or an index, got {value!r}")
    if isinstance(value, int):
        if not 0 <= value < len(names):
            raise UnknownNameError(f"{what} index {value} is outside 0..{len(names) - 1} ({list(names)})")
        return value
    if isinstance(value, str):
        lowered = [name.lower() for name in names]
        if value.lower() in lowered:
            return lowered.index(value.lower())
    raise UnknownNameError(f"{what} must be one of {list(names)}, got {value!r}")


def index_tensor(
    value: str | int | Sequence[str | int] | torch.Tensor,
    names: Sequence[str],
    batch: int,
    device: torch.device | str,
    what: str,
) -> torch.Tensor:
    """One index per sample (a LongTensor of shape [batch]) from a name, an index, a list or a tensor.

    A single name or index applies to the whole batch; a list or tensor must have one entry per sample.
    """
    if isinstance(value, torch.Tensor):
        if value.dtype.is_floating_point or value.dtype == torch.bool:
            raise UnknownNameError(f"{what} tensor must hold integer indices, got dtype {value.dtype}")
        index = value.reshape(-1).to(device=device, dtype=torch.long)
        if index.numel() == 1:
            index = index.expand(batch)
    elif isinstance(value, str | int):
        index = torch.full((batch,), name_index(value, names, what), dtype=torch.long, device=device)
    else:
        index = torch.tensor([name_index(v, names, what) for v in value], dtype=torch.long, device=device)
    if index.numel() != batch:
        raise UnknownNameError(f"{what} needs one entry or one per sample ({batch}), got {index.numel()}")
    if index.numel() and bool(((index < 0) | (index >= len(names))).any()):
        raise UnknownNameError(f"{what} indices must lie in 0..{len(names) - 1} ({list(names)})")
    return index
