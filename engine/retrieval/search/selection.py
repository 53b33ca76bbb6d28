"""Keep rules of a step (docs/methods.md §1.3; docs/methods.md §1.3): top k_j = ⌈ρ·|C_j|⌉, an explicit k, or a
score threshold, with confirmed items always kept. Ties at the cut go to the lower gallery row, as in the
progressive metric's stable sort. All operations are O(|C_j|)."""

from __future__ import annotations

import numpy as np

from engine.retrieval.metrics.progressive import keep_count


def members(rows: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """Boolean mask: which ``rows`` are in ``sorted_set`` (ascending, typically small). O(|rows|·log|set|)."""
    if sorted_set.size == 0:
        return np.zeros(rows.shape[0], dtype=bool)
    at = np.searchsorted(sorted_set, rows)
    at[at == sorted_set.size] = 0
    return sorted_set[at] == rows


_SAMPLE = 8192


def kth_largest(scores: np.ndarray, count: int) -> float:
    """The ``count``-th largest score (1 ≤ count ≤ n), exactly.

    Large inputs: a strided sample brackets the value, and only scores inside the bracket are partitioned;
    when the bracket misses (it cannot for exchangeable scores but may for ordered ones) a full partition
    runs instead. Either way the answer is exact."""
    n = scores.shape[0]
    if n > 8 * _SAMPLE:
        sample = np.sort(scores[:: n // _SAMPLE])
        m = sample.shape[0]
        centre = m - count * m / n
        margin = 6 * np.sqrt(m * (count / n) * (1 - count / n)) + 8
        low = sample[int(np.clip(np.floor(centre - margin), 0, m - 1))]
        high = sample[int(np.clip(np.ceil(centre + margin), 0, m - 1))]
        above = int(np.count_nonzero(scores > high))
        band = scores[(scores >= low) & (scores <= high)]
        need = count - above
        if 0 < need <= band.shape[0]:
            return float(np.partition(band, band.shape[0] - need)[band.shape[0] - need])
    return float(np.partition(scores, n - count)[n - count])


def top_mask(scores: np.ndarray, count: int) -> np.ndarray:
    """Mask of the ``count`` highest scores; among equal scores at the cut the earliest positions win."""
    n = scores.shape[0]
    mask = np.zeros(n, dtype=bool)
    if count <= 0:
        return mask
    if count >= n:
        mask[:] = True
        return mask
    cut = scores.dtype.type(kth_largest(scores, count))
    mask = scores > cut
    missing = count - int(np.count_nonzero(mask))
    if missing > 0:
        mask[np.flatnonzero(scores == cut)[:missing]] = True
    return mask


def keep_mask(scores: np.ndarray, pinned: np.ndarray | None, *, rho: float | None = None, k: int | None = None,
              threshold: float | None = None) -> tuple[np.ndarray, int]:
    """(kept mask over the candidates, the k used). Exactly one of rho/k/threshold is given.

    rho and k count the pinned items: kept = pinned ∪ the best (k − |pinned|) others, so |kept| = max(k, |pinned|).
    threshold keeps scores ≥ threshold, plus the pinned. ``pinned`` None means no pinned item."""
    n = scores.shape[0]
    if threshold is not None:
        mask = scores >= threshold
        if pinned is not None:
            mask |= pinned
        return mask, int(np.count_nonzero(mask))
    wanted = keep_count(n, rho) if rho is not None else min(int(k), n)
    if pinned is None:
        return top_mask(scores, wanted), wanted
    free = ~pinned
    n_pinned = n - int(np.count_nonzero(free))
    mask = pinned.copy()
    if n_pinned == 0:
        mask = top_mask(scores, wanted)
    else:
        mask[free] = top_mask(scores[free], wanted - n_pinned)
    return mask, wanted


def rank(rows: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Positions ordering (rows, scores) by score descending, gallery row ascending on ties."""
    return np.lexsort((rows, -scores.astype(np.float64)))
