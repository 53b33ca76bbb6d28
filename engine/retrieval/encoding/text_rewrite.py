"""Text query vectors blended with the vectors of their rewrite in the generator's words
(``engine.retrieval.text.rewrite``): ``normalise((1 − w) · v(text) + w · v(rewrite))``, the text's own vector where the
parser reads nothing. w is the checkpoint's: the ``text_rewrite_weight`` of its metadata.json (measured and
written by ``bench/text_rewrite.py``), 0 — the plain text vector — when it records none
(docs/training-notes.md, "Queries restated in the generator's words").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from engine.retrieval.text.rewrite import canonical_text

METADATA_KEY = "text_rewrite_weight"
NO_REWRITE = 0.0


def check_rewrite_weight(value: object, what: str = "text rewrite weight") -> float:
    """``value`` as a float in [0, 1]; ``ValueError`` naming ``what`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or not 0 <= value <= 1:
        raise ValueError(f"{what} must be a number from 0 to 1, got {value!r}")
    return float(value)


def checkpoint_rewrite_weight(checkpoint: str | Path | None) -> float:
    """w recorded by a checkpoint folder (None: the shipped one); 0 when it records none or has no readable
    metadata; ``ValueError`` naming the file when the recorded value is not a weight."""
    from engine.retrieval.models.discovery import checkpoint_metadata

    path, metadata = checkpoint_metadata(checkpoint)
    value = metadata.get(METADATA_KEY)
    return NO_REWRITE if value is None else check_rewrite_weight(value, f"{path}: {METADATA_KEY}")


def encode_rewritten(encode: Callable[[list[str]], tuple[Any, Any]], texts: Sequence[str], weight: float):
    """``encode(texts)`` → (unit vectors [N, D], level logits or None), with each vector blended with its
    rewrite's at ``weight``; the level logits stay the texts' own."""
    weight = check_rewrite_weight(weight)
    vectors, logits = encode(list(texts))
    if weight == NO_REWRITE:
        return vectors, logits
    rewrites = [canonical_text(text) for text in texts]
    rows = [i for i, rewrite in enumerate(rewrites) if rewrite is not None]
    if not rows:
        return vectors, logits
    import torch

    rewritten, _ = encode([rewrites[i] for i in rows])
    blended = vectors.detach().clone()
    mixed = (1 - weight) * vectors[rows].detach().float() + weight * rewritten.detach().float()
    blended[rows] = torch.nn.functional.normalize(mixed, dim=-1).to(blended.dtype)
    return blended, logits
