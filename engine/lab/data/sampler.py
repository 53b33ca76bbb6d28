"""Identity-balanced batches: P identities × K samples each (docs/methods.md §1.9, §3 training recipes)."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterator, Sequence


class IdentityBalancedBatches:
    """Yield batches of indices, each holding ``identities_per_batch`` identities × ``samples_per_identity``.

    Identities are visited in a seeded random order, every identity once per epoch; an identity with fewer
    than K samples is sampled with replacement. ``epoch`` selects the shuffle so a resumed run continues the
    same sequence.
    """

    def __init__(self, labels: Sequence[int], identities_per_batch: int, samples_per_identity: int, seed: int = 0):
        if identities_per_batch < 1 or samples_per_identity < 1:
            raise ValueError("identities_per_batch and samples_per_identity must be ≥ 1")
        self.by_identity: dict[int, list[int]] = defaultdict(list)
        for index, label in enumerate(labels):
            self.by_identity[int(label)].append(index)
        if len(self.by_identity) < identities_per_batch:
            raise ValueError(
                f"{len(self.by_identity)} identities cannot fill batches of {identities_per_batch} identities")
        self.p, self.k, self.seed = identities_per_batch, samples_per_identity, seed

    def __len__(self) -> int:
        return len(self.by_identity) // self.p

    def epoch(self, epoch: int) -> Iterator[list[int]]:
        rng = random.Random(f"{self.seed}:{epoch}")
        identities = sorted(self.by_identity)
        rng.shuffle(identities)
        for start in range(0, len(identities) - self.p + 1, self.p):
            batch: list[int] = []
            for identity in identities[start:start + self.p]:
                pool = self.by_identity[identity]
                if len(pool) >= self.k:
                    batch.extend(rng.sample(pool, self.k))
                else:
                    batch.extend(rng.choice(pool) for _ in range(self.k))
            yield batch
