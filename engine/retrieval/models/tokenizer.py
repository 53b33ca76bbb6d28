"""Text tokenizer: open_clip's byte-pair SimpleTokenizer (vocab shipped inside open_clip, no download) with a
configurable context length and one extra ``<mask>`` token for masked-token training (CRST RCR, docs/methods.md §2).

The mask token takes id 49408, above end-of-text (49407); the text tower therefore pools at the first
end-of-text position instead of CLIP's arg-max. Descriptions longer than the context are truncated with
a warning (the end-of-text token is kept), never silently.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from functools import lru_cache

import torch
from open_clip.tokenizer import SimpleTokenizer

MASK_TOKEN = "<mask>"
CLIP_VOCAB_SIZE = 49408  # the pretrained token-embedding rows (without the mask token)


@lru_cache(maxsize=1)
def _bpe() -> SimpleTokenizer:
    return SimpleTokenizer(additional_special_tokens=[MASK_TOKEN], context_length=None)


class TextTruncationWarning(UserWarning):
    """A description had more tokens than the model's context length."""


class Tokenizer:
    """Strings → fixed-length id tensors ``[B, context_length]`` (start, BPE ids, end, zero padding)."""

    def __init__(self, context_length: int) -> None:
        if context_length < 3:
            raise ValueError(f"context_length must be at least 3, got {context_length}")
        self.context_length = context_length
        bpe = _bpe()
        self._bpe = bpe
        self.vocab_size: int = bpe.vocab_size
        self.sot_id: int = bpe.sot_token_id
        self.eot_id: int = bpe.eot_token_id
        self.mask_id: int = bpe.encoder[MASK_TOKEN]
        self.pad_id: int = 0
        # ids a masked-token policy may draw random replacements from (ordinary BPE tokens)
        self.ordinary_range: tuple[int, int] = (0, self.sot_id)

    def encode(self, text: str) -> list[int]:
        """BPE ids of one text, without start/end tokens."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}")
        return self._bpe.encode(text)

    def lengths(self, texts: Sequence[str]) -> list[int]:
        """Token counts including start and end tokens (before truncation)."""
        return [len(self.encode(t)) + 2 for t in texts]

    def __call__(self, texts: str | Sequence[str]) -> torch.Tensor:
        if isinstance(texts, str):
            texts = [texts]
        if len(texts) == 0:
            raise ValueError("texts is empty: give at least one description")
        ids = torch.zeros(len(texts), self.context_length, dtype=torch.long)
        truncated = 0
        for row, text in enumerate(texts):
            tokens = [self.sot_id, *self.encode(text), self.eot_id]
            if len(tokens) > self.context_length:
                truncated += 1
                tokens = [*tokens[: self.context_length - 1], self.eot_id]
            ids[row, : len(tokens)] = torch.tensor(tokens, dtype=torch.long)
        if truncated:
            warnings.warn(
                f"{truncated} of {len(texts)} descriptions exceed the context length {self.context_length} "
                "tokens and were truncated",
                TextTruncationWarning,
                stacklevel=2,
            )
        return ids

    def decode(self, ids: Sequence[int] | torch.Tensor) -> str:
        """Text of an id row: the tokens between start and the first end-of-text (``<mask>`` shown as such)."""
        values = ids.tolist() if isinstance(ids, torch.Tensor) else list(ids)
        if values and values[0] == self.sot_id:
            values = values[1:]
        if self.eot_id in values:
            values = values[: values.index(self.eot_id)]
        return self._bpe.decode(values).strip()

    def eot_positions(self, ids: torch.Tensor) -> torch.Tensor:
        """Index of the first end-of-text token per row (the pooled position); error if a row has none."""
        is_eot = ids == self.eot_id
        if not bool(is_eot.any(dim=1).all()):
            raise ValueError(f"every token row needs an end-of-text token (id {self.eot_id})")
        return is_eot.int().argmax(dim=1)
