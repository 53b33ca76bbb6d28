"""mSD, the similarity-aware ranking metric of MG-Eval (docs/methods.md §1.4; intended, sorted version).

Per query, on the ranked list with similarities s_i (cosines mapped by s ← (s+1)/2 when ``cosine``) and
positives at ranks j_1 < … < j_{n⁺}:
  x = mean(s⁺) / mean(s⁻) over all positives / negatives of the (valid) gallery,  PNR = 1 − exp(−k·x);
  ASP = (1/n⁺) Σ_q [Σ_{i≤j_q} rel_i s_i] / [Σ_{i≤j_q} s_i];   SD = PNR × ASP;   mSD = mean over queries.
Conventions where the formula is undefined: no negative (or mean(s⁻)=0 < mean(s⁺)) → PNR = 1; both
means 0 → x = 1; an ASP prefix with zero similarity mass uses the count ratio q / j_q. Queries without a
positive are skipped, as in ``retrieval``.
"""

from __future__ import annotations

import numpy as np

from engine.retrieval.metrics._arrays import MetricInputError, RankedChunk, iter_ranked

PNR_K = 1.0


def mapped_scores(scores: np.ndarray, valid: np.ndarray, cosine: bool) -> np.ndarray:
    """Similarities on the valid positions, mapped to [0, 1] when ``cosine``; invalid positions set to 0."""
    mapped = (scores + 1.0) / 2.0 if cosine else scores
    mapped = np.where(valid, mapped, 0.0)
    if np.isnan(mapped).any():
        raise MetricInputError("similarity contains NaN on a valid gallery item")
    if (mapped < -1e-9).any():
        hint = "cosines must lie in [−1, 1]" if cosine else "pass cosine=True for cosine similarities"
        raise MetricInputError(f"mSD needs similarities ≥ 0 after mapping; {hint}")
    return np.maximum(mapped, 0.0)


def sd_ranked(chunk: RankedChunk, cosine: bool = True, k: float = PNR_K) -> np.ndarray:
    """SD per query of a ranked chunk (NaN for queries without a valid positive)."""
    s = mapped_scores(chunk.scores, chunk.valid, cosine)
    hits = chunk.relevant & chunk.valid
    misses = chunk.valid & ~chunk.relevant
    n_pos, n_neg = hits.sum(axis=1), misses.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_pos = np.where(hits, s, 0.0).sum(axis=1) / n_pos
        mean_neg = np.where(misses, s, 0.0).sum(axis=1) / n_neg
        ratio = np.where(mean_neg > 0, mean_pos / mean_neg, np.where(mean_pos > 0, np.inf, 1.0))
    pnr = np.where(n_neg > 0, 1.0 - np.exp(-k * ratio), 1.0)

    positive_mass = np.cumsum(np.where(hits, s, 0.0), axis=1)
    total_mass = np.cumsum(s, axis=1)
    rank = np.cumsum(chunk.valid, axis=1)
    count_ratio = np.cumsum(hits, axis=1) / np.maximum(rank, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mass_ratio = np.where(
            total_mass > 0, positive_mass / np.where(total_mass > 0, total_mass, 1.0), count_ratio
        )
        asp = np.where(hits, mass_ratio, 0.0).sum(axis=1) / n_pos
        return np.where(n_pos > 0, pnr * asp, np.nan)


def msd_per_query(
    similarity, relevance, valid=None, order=None, cosine: bool = True, rows_per_chunk: int | None = None
) -> np.ndarray:
    """SD of every query (NaN where skipped); inputs as in ``retrieval.evaluate_retrieval``."""
    parts = [
        sd_ranked(chunk, cosine) for chunk in iter_ranked(similarity, relevance, valid, order, rows_per_chunk)
    ]
    if not parts:
        raise MetricInputError("similarity has no query rows")
    return np.concatenate(parts)


def mean_sd(similarity, relevance, valid=None, order=None, cosine: bool = True) -> float:
    """mSD as a fraction in [0, 1] over the queries with at least one valid positive."""
    sd = msd_per_query(similarity, relevance, valid, order, cosine)
    if np.isnan(sd).all():
        raise MetricInputError("no query has a relevant gallery item; mSD is undefined")
    return float(np.nanmean(sd))
