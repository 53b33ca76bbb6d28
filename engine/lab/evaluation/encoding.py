"""Batched encoding for evaluation: images read with OpenCV and prepared by the model's own preprocessing
(``model.prepare_images``: resize to the model's input size, mean/std normalisation), texts deduplicated.

Every encoder call of the model runs without gradients (its inference surface is ``torch.no_grad``);
results come back as float32 tensors on the CPU, one row per input, in input order.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import cv2
import numpy as np
import torch

from engine.kernel.images import ImageInputError
from engine.kernel.images import read_image as load
from engine.kernel.progress import ProgressFn, no_progress
from engine.kernel.vocabulary import WORLD_TO_MODEL_RESOLUTION
from engine.lab.evaluation.errors import EvaluationError
from engine.retrieval.encoding.text_rewrite import encode_rewritten

T = TypeVar("T")
#: encode(prepared images [b, 3, H, W], rows of this batch) → vectors [b, …]
BatchEncoder = Callable[[torch.Tensor, slice], torch.Tensor]


def model_resolution(label: str) -> str:
    """The model's name for a world resolution label ("HR" → "hr", "mild" → "mild_lr", …)."""
    try:
        return WORLD_TO_MODEL_RESOLUTION[label]
    except KeyError:
        raise EvaluationError(f"resolution {label!r} is not one of {list(WORLD_TO_MODEL_RESOLUTION)}") from None


def read_image(path: Path | str) -> torch.Tensor:
    """uint8 tensor [3, h, w] in RGB order; grey files come back with three equal channels."""
    try:
        image = load(path)
    except ImageInputError as exc:
        raise EvaluationError(f"image cannot be read (missing or not an image): {path}: {exc.reason}") from None
    rgb = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
    return torch.from_numpy(np.ascontiguousarray(rgb.transpose(2, 0, 1)))


def prepared_images(model, paths: Sequence[Path | str]) -> torch.Tensor:
    """Read ``paths`` and run them through ``model.prepare_images``; images of one size go in one call."""
    images = [read_image(p) for p in paths]
    by_size: dict[tuple[int, int], list[int]] = {}
    for index, image in enumerate(images):
        by_size.setdefault(tuple(image.shape[-2:]), []).append(index)
    rows: list[torch.Tensor | None] = [None] * len(images)
    for indices in by_size.values():
        prepared = model.prepare_images(torch.stack([images[i] for i in indices]))
        for row, index in enumerate(indices):
            rows[index] = prepared[row : row + 1]
    return torch.cat(rows)


def encode_image_batches(
    model,
    paths: Sequence[Path | str],
    encode: BatchEncoder,
    batch_size: int,
    progress: ProgressFn = no_progress,
) -> torch.Tensor:
    """Vectors of every image in ``paths``: read, prepare and ``encode`` ``batch_size`` images at a time."""
    if batch_size < 1:
        raise EvaluationError(f"batch size must be at least 1, got {batch_size}")
    if not paths:
        raise EvaluationError("no images to encode")
    parts = []
    for start in range(0, len(paths), batch_size):
        rows = slice(start, min(start + batch_size, len(paths)))
        parts.append(encode(prepared_images(model, paths[rows]), rows).detach().float().cpu())
        progress(rows.stop, len(paths))
    return torch.cat(parts)


def counting_truncation(call: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[T, bool]:
    """(``call(*args, **kwargs)``, whether the tokenizer truncated a description in it); the tokenizer's
    truncation warnings are counted for the report instead of printed, other warnings pass through."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call(*args, **kwargs)
    truncated = False
    for w in caught:
        if w.category.__name__ == "TextTruncationWarning":
            truncated = True
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return result, truncated


@dataclass(frozen=True)
class TextEncoding:
    vectors: torch.Tensor  # [N, D] unit vectors, one per input text
    level_logits: torch.Tensor | None  # [N, G] from the granularity classifier, None without one
    truncated_batches: int  # batches in which the tokenizer truncated a description


def encode_texts(
    model, texts: Sequence[str], batch_size: int, progress: ProgressFn = no_progress, text_rewrite: float = 0.0
) -> TextEncoding:
    """``model.encode_text`` over the distinct texts, in batches; rows come back in the order of ``texts``.
    ``text_rewrite`` > 0 blends each vector with its rewrite's, as the search does
    (``engine.retrieval.encoding.text_rewrite``)."""
    if batch_size < 1:
        raise EvaluationError(f"batch size must be at least 1, got {batch_size}")
    if not texts:
        raise EvaluationError("no texts to encode")
    unique = list(dict.fromkeys(texts))
    vectors, logits, truncated = [], [], 0
    for start in range(0, len(unique), batch_size):
        (batch_vectors, batch_logits), was_truncated = counting_truncation(
            encode_rewritten, model.encode_text, unique[start : start + batch_size], text_rewrite
        )
        truncated += was_truncated
        vectors.append(batch_vectors.detach().float().cpu())
        if batch_logits is not None:
            logits.append(batch_logits.detach().float().cpu())
        progress(min(start + batch_size, len(unique)), len(unique))
    position = {text: i for i, text in enumerate(unique)}
    order = torch.tensor([position[t] for t in texts], dtype=torch.long)
    level_logits = torch.cat(logits)[order] if logits else None
    return TextEncoding(torch.cat(vectors)[order], level_logits, truncated)
