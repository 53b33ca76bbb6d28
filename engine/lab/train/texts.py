"""The text side of a training pair, drawn afresh every time the pair is used.

World images: a level g is drawn uniformly from UC…UF, then a nested key subset of a size in that level
(``level_sizes`` "range": uniform between the level's bounds; "upper": its upper bound, docs/methods.md §1.1) and
a new description of exactly those keys (``engine.retrieval.text.generator``). Text variety is the augmentation; the
stated keys are kept for the PCIA soft labels (docs/methods.md §1.7) and the text attribute heads.
Captioned datasets: one of the image's captions with the level and attributes the parser read from it.
Either may then get the docs/methods.md §1.7 word masking / replacement / removal (``TextAugment``).

Also here: the token ids that name attributes, for the CRST masking policy π_r (docs/methods.md §2).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

import torch

from engine.kernel.ontology import LEVELS, ONTOLOGY
from engine.lab.data.augment import TextAugment
from engine.lab.train.data import PairItem
from engine.retrieval.models.tokenizer import Tokenizer
from engine.retrieval.text import lexicon
from engine.retrieval.text.generator import describe, nested_key_subsets


@dataclass(frozen=True)
class SampledText:
    text: str
    level: int  # index into LEVELS
    stated: dict[str, str]  # the attributes the text states (before word augmentation)


class TextSource:
    """Draws the text of a pair: fresh world descriptions or dataset captions, then word augmentation."""

    def __init__(self, level_sizes: str = "range", augment: float = 0.5, pick: float = 0.2,
                 vocabulary: list[str] | None = None) -> None:
        if level_sizes not in ("range", "upper"):
            raise ValueError(f"level_sizes must be 'range' or 'upper', got {level_sizes!r}")
        self.level_sizes = level_sizes
        self.augment_share = augment
        self.augment = TextAugment(pick_p=pick)
        self.vocabulary = list(vocabulary or [])

    def _size(self, level: int, available: int, rng: random.Random) -> int:
        bounds = ONTOLOGY.levels[level]
        high = min(bounds.max, available)
        if self.level_sizes == "upper" or bounds.min >= high:
            return high
        return rng.randint(bounds.min, high)

    def world_text(self, attributes: dict[str, str], rng: random.Random) -> SampledText:
        """A fresh description of a uniformly drawn level (docs/methods.md §1.1 nested subsets)."""
        available = ONTOLOGY.count(attributes)
        size = self._size(rng.randrange(len(LEVELS)), available, rng)
        keys = nested_key_subsets(attributes, rng, sizes=(size,))[0] if size < available else None
        text = describe(attributes, keys, rng)
        stated = {k: attributes[k] for k in keys} if keys is not None else ONTOLOGY.counted(attributes)
        return SampledText(text, LEVELS.index(ONTOLOGY.level_of(len(stated))), stated)

    def sample(self, item: PairItem, rng: random.Random) -> SampledText:
        if item.attributes is not None:
            drawn = self.world_text(item.attributes, rng)
        else:
            if not item.captions:
                raise ValueError(f"image row {item.row} has neither attributes nor captions")
            k = rng.randrange(len(item.captions))
            drawn = SampledText(item.captions[k], item.caption_levels[k], dict(item.caption_attributes[k]))
        if self.augment_share > 0 and rng.random() < self.augment_share:
            drawn = SampledText(self.augment(drawn.text, self.vocabulary, rng), drawn.level, drawn.stated)
        return drawn


FUNCTION_WORDS = frozenset({"a", "an", "and", "the", "of", "with", "in", "on", "up", "down", "to", "or", "no"})


def _attribute_words() -> set[str]:
    words: set[str] = set()
    tables = (lexicon.COLOR_WORDS, lexicon.ITEM_NOUNS, lexicon.HAIR_COLOR_WORDS, lexicon.HAIRSTYLE_WORDS)
    for table in tables:
        for phrase in table:
            words.update(phrase.split())
    words.update(lexicon.MATERIAL_WORDS)
    for forms in (lexicon.HAT_FORMS, lexicon.TOP_FORMS, lexicon.BOTTOM_FORMS, lexicon.SHOE_FORMS,
                  lexicon.CARRY_FORMS, lexicon.COLOR_FORMS, lexicon.HAIR_COLOR_FORMS):
        for phrases in forms.values():
            for phrase in phrases:
                words.update(phrase.lower().replace("-", " ").split())
    return {w for w in words if w.isalpha() and w not in FUNCTION_WORDS}


@lru_cache(maxsize=4)
def _attribute_token_ids(context_length: int) -> tuple[int, ...]:
    tokenizer = Tokenizer(context_length)
    ids: set[int] = set()
    for word in _attribute_words():
        ids.update(tokenizer.encode(word))
    return tuple(sorted(ids))


def attribute_token_mask(ids: torch.Tensor, tokenizer: Tokenizer) -> torch.Tensor:
    """Bool [B, L]: tokens that belong to attribute words (colours, garments, accessories, shoes, hair,
    materials) — the "attribute tokens" of the CRST masking policy."""
    vocabulary = torch.tensor(_attribute_token_ids(tokenizer.context_length), dtype=ids.dtype)
    return torch.isin(ids, vocabulary.to(ids.device))


def ordinary_token_mask(ids: torch.Tensor, tokenizer: Tokenizer) -> torch.Tensor:
    """Bool [B, L]: the maskable tokens (after start-of-text, before end-of-text)."""
    eot = tokenizer.eot_positions(ids)
    positions = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
    return (positions > 0) & (positions < eot.unsqueeze(1))
