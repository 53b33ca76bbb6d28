"""How well an item's attribute evidence agrees with the attributes a query states (the hybrid ranking's term).

For a stated attribute ``k = v`` and one evidence source with probability ``p = P(k = v)`` and confidence
``c`` (``engine.perception.attributes``: pixels, the checkpoint's heads or carried objects), over ``|V_k|`` possible
values (``u = 1/|V_k|``):

    tempered probability      p̃ = c·p + (1 − c)·u                    (confidence shrinks towards "no idea")
    agreement of the key      a_k = clip( log(p̃ / u) / log|V_k| , −1, 1 )

``log(p̃/u)`` is the log-likelihood ratio of "the item is a person with k = v" against a random person
(naive Bayes over independent attributes); dividing by ``log|V_k|`` (the most a certain match can say) puts
every key on the same scale: +1 a certain match, 0 no information (c = 0 or p = u), −1 the value judged
|V_k| times less likely than chance. Sources with evidence for the key are pooled first, as a mixture
weighted by confidence: p = Σ_s c_s·p_s / Σ_s c_s, c = max_s c_s (they read the same pixels, so their
evidence is not multiplied as if independent, and a source with no confidence does not dilute a sure one).

    agreement(item) = (1/|K|) Σ_{k ∈ K} a_k(item)

``K``: the query's attributes that the gallery has evidence for at all (any item, any selected source); an
item without evidence for one of them gets ``a_k = 0`` there (no reward, no penalty). The hybrid score is
``similarity + w · agreement`` (``engine.retrieval.evidence.ranking``). A hard requirement ``k = v`` removes an item
when its (pooled) tempered probability is below ``REQUIRE_RATIO · u`` (the evidence makes the value at least
twice less likely than chance); items without evidence for ``k`` pass.
"""

from __future__ import annotations

import math

import numpy as np

#: A required value is failed when its tempered probability is below this share of the uniform 1/|V|.
REQUIRE_RATIO = 0.5
#: |a_k| below this counts as "unsure" in explanations (neither a match nor a mismatch).
UNSURE_BELOW = 0.1


def tempered_probability(p: np.ndarray, c: np.ndarray, size: int) -> np.ndarray:
    """p̃ = c·p + (1 − c)/|V| (NaN where there is no evidence)."""
    u = 1.0 / size
    return np.asarray(c, dtype=np.float64) * np.asarray(p, dtype=np.float64) + (1.0 - np.asarray(c)) * u


def key_agreement(p: np.ndarray, c: np.ndarray, size: int) -> np.ndarray:
    """a_k = clip(log(p̃·|V|)/log|V|, −1, 1) elementwise (NaN where there is no evidence: c is NaN)."""
    if size < 2:
        raise ValueError(f"an attribute needs at least two values, got {size}")
    c = np.clip(np.asarray(c, dtype=np.float64), 0.0, 1.0)
    p = np.clip(np.asarray(p, dtype=np.float64), 0.0, 1.0)
    ratio = tempered_probability(p, c, size) * size
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.log(ratio) / math.log(size)
    return np.clip(value, -1.0, 1.0)  # log(0) = −inf clips to −1; NaN stays NaN


def pool_sources(p: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(p, c) pooled over the last (source) axis: p = Σ c_s p_s / Σ c_s (the plain mean when every c_s is 0),
    c = max c_s; sources with NaN confidence are left out, NaN where none has evidence."""
    p = np.asarray(p, dtype=np.float64)
    c = np.clip(np.asarray(c, dtype=np.float64), 0.0, 1.0)
    present = ~np.isnan(c) & ~np.isnan(p)
    count = present.sum(axis=-1)
    weight = np.where(present, c, 0.0)
    value = np.where(present, p, 0.0)
    total = weight.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        pooled = np.where(total > 0, (weight * value).sum(axis=-1) / total, value.sum(axis=-1) / count)
        pooled_c = np.where(present, c, -np.inf).max(axis=-1)
    none = count == 0
    return np.where(none, np.nan, pooled), np.where(none, np.nan, pooled_c)


def agreement(per_key: np.ndarray, covered: np.ndarray) -> np.ndarray:
    """(1/|K|) Σ_{k∈K} a_k per item from ``per_key`` [n, keys] (NaN = no evidence → 0); ``covered`` [keys] bool
    marks K. Zero for every item when K is empty."""
    per_key = np.asarray(per_key, dtype=np.float64)
    covered = np.asarray(covered, dtype=bool)
    if per_key.ndim != 2 or per_key.shape[1] != covered.shape[0]:
        raise ValueError(f"per_key must be [n, {covered.shape[0]}], got {per_key.shape}")
    n_keys = int(covered.sum())
    if n_keys == 0:
        return np.zeros(per_key.shape[0], dtype=np.float64)
    return np.nan_to_num(per_key[:, covered], nan=0.0).sum(axis=1) / n_keys


def fails_requirement(mean_tempered: np.ndarray, size: int, ratio: float = REQUIRE_RATIO) -> np.ndarray:
    """True where evidence exists and the mean tempered probability is below ``ratio / |V|``."""
    mean_tempered = np.asarray(mean_tempered, dtype=np.float64)
    return ~np.isnan(mean_tempered) & (mean_tempered < ratio / size)


def status(value: float | None) -> str:
    """"match", "mismatch", "unsure" (|a_k| < UNSURE_BELOW) or "no evidence" (None/NaN)."""
    if value is None or math.isnan(value):
        return "no evidence"
    if value >= UNSURE_BELOW:
        return "match"
    if value <= -UNSURE_BELOW:
        return "mismatch"
    return "unsure"
