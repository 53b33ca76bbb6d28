"""What the model's tower passes return (``VisualPass``, ``TextPass``) and the input types its methods take;
shared by ``engine.retrieval.models.model`` and its training pass."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from engine.retrieval.models.blocks import Routing

IGNORE_INDEX = -100
TextInput = str | Sequence[str] | torch.Tensor
IndexInput = str | int | Sequence[str | int] | torch.Tensor


@dataclass
class VisualPass:
    embedding: torch.Tensor  # [B, D] projected CLS (not normalised)
    tokens: torch.Tensor  # [B, 1 + patches, d] after ln_post (CLS first)
    scenario: torch.Tensor | None  # [B, 6, d] after ln_post
    routing: Routing


@dataclass
class TextPass:
    embedding: torch.Tensor  # [B, D] projected end-of-text token (not normalised)
    hidden: torch.Tensor  # [B, L', w] after ln_final; L' = last end-of-text position + 1 in the batch
    valid: torch.Tensor  # [B, L'] bool, tokens up to and including end-of-text
    routing: Routing
