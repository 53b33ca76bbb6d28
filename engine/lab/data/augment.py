"""Training augmentations of docs/methods.md §1.7 (RDE recipe).

Images: horizontal flip (p 0.5), zero-pad 10 px then random crop back, random erasing (p 0.5, area 0.02–0.4).
Text: each word picked with probability 0.2; of the picked, 60% masked, 20% replaced by a random word of the
vocabulary, 20% deleted. Both take an explicit ``torch.Generator`` / ``random.Random`` so runs are reproducible.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class ImageAugment:
    flip_p: float = 0.5
    pad: int = 10
    erase_p: float = 0.5
    erase_area: tuple[float, float] = (0.02, 0.4)
    erase_aspect: tuple[float, float] = (0.3, 3.3)

    def __call__(self, images: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        """Augment a float batch ``B×C×H×W`` (any value range); returns a new tensor of the same shape."""
        if images.ndim != 4:
            raise ValueError(f"expected a B×C×H×W batch, got shape {tuple(images.shape)}")
        b, _, h, w = images.shape
        out = images.clone()
        flips = torch.rand(b, generator=generator) < self.flip_p
        out[flips] = out[flips].flip(-1)
        if self.pad > 0:
            padded = torch.nn.functional.pad(out, (self.pad, self.pad, self.pad, self.pad))
            dy = torch.randint(0, 2 * self.pad + 1, (b,), generator=generator)
            dx = torch.randint(0, 2 * self.pad + 1, (b,), generator=generator)
            out = torch.stack([padded[i, :, dy[i]:dy[i] + h, dx[i]:dx[i] + w] for i in range(b)])
        erase = torch.rand(b, generator=generator) < self.erase_p
        for i in torch.nonzero(erase).flatten().tolist():
            box = self._erase_box(h, w, generator)
            if box is not None:
                y, x, eh, ew = box
                out[i, :, y:y + eh, x:x + ew] = torch.randn(out.shape[1], eh, ew, generator=generator) * 0.5
        return out

    def _erase_box(self, h: int, w: int, generator: torch.Generator | None) -> tuple[int, int, int, int] | None:
        for _ in range(10):
            area = h * w * _uniform(*self.erase_area, generator)
            log_lo, log_hi = math.log(self.erase_aspect[0]), math.log(self.erase_aspect[1])
            aspect = math.exp(_uniform(log_lo, log_hi, generator))
            eh, ew = int(round(math.sqrt(area * aspect))), int(round(math.sqrt(area / aspect)))
            if 0 < eh < h and 0 < ew < w:
                y = int(torch.randint(0, h - eh + 1, (1,), generator=generator))
                x = int(torch.randint(0, w - ew + 1, (1,), generator=generator))
                return y, x, eh, ew
        return None


def _uniform(lo: float, hi: float, generator: torch.Generator | None) -> float:
    return lo + (hi - lo) * float(torch.rand(1, generator=generator))


@dataclass(frozen=True)
class TextAugment:
    pick_p: float = 0.2
    mask_share: float = 0.6
    replace_share: float = 0.2
    mask_word: str = "something"

    def __call__(self, text: str, vocabulary: Sequence[str], rng: random.Random) -> str:
        """Word-level masking / replacement / removal of docs/methods.md §1.7 (RDE ``bases.py`` policy)."""
        words = text.split()
        out: list[str] = []
        for word in words:
            if rng.random() >= self.pick_p:
                out.append(word)
                continue
            roll = rng.random()
            if roll < self.mask_share:
                out.append(self.mask_word)
            elif roll < self.mask_share + self.replace_share and vocabulary:
                out.append(rng.choice(vocabulary))
            # else: the word is removed
        return " ".join(out) if out else text
