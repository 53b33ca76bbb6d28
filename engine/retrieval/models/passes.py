"""What the model's tower passes return (``VisualPass``, ``TextPass``) and the input types its methods take
(``engine.retrieval.models.model``; its training pass, ``engine.lab.train.forward``, takes them too)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from engine.retrieval.models.blocks import Routing

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
