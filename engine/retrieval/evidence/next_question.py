"""Which attribute to ask the witness about next: the keys a description has not fixed, ranked by the expected
information their answer gives about which kept candidate is the target (docs/methods.md, "The next question").

After a step, candidate i of the kept set gets a weight w_i, the softmax of its score over the kept scores with
the temperature T = their standard deviation (so the weights do not depend on the score scale, which differs
between views and attribute weights; equal scores give equal weights). For a key k, each candidate's pooled,
tempered reading of k is q_i(v) = c_i·p_i(v) + (1 − c_i)/|V_k| (sources pooled as the hybrid ranking pools them,
``engine.retrieval.evidence.agreement``, after each source's confidence is scaled by its reliability on the
gallery's domain, ``engine.retrieval.evidence.reliability``); a candidate without evidence for k reads uniform.
If the witness answers with the target's true value A, the expected reduction of uncertainty about the target
is the mutual information

    I(target; A) = H( Σ_i w_i q_i ) − Σ_i w_i H(q_i)          (bits)

high when the candidates read different values (the answer splits them) and each reads its value surely; zero
when they all read the same value or nobody's reading is trusted. A key read unreliably on the gallery's domain
is discounted through q_i (a low r·c flattens it), and the gain is multiplied by the probability that a witness
knows the key (``resources/witness_prior.json`` through ``engine.kernel.witness_prior``, optionally under a
viewing condition such as "night").

Keys whose evidence is missing on more than ``1 − MIN_COVERAGE`` of the kept candidates rank after every other
key and carry a ``reason``. Each question lists ``values``: per value, the share of the kept candidates whose
pooled reading names it most probable (the shares sum to the key's coverage), most common first.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.index import evidence_table as store
from engine.kernel.ontology import COLOR_KEYS, DEPENDENT_COLORS, ONTOLOGY, key_label, value_label
from engine.kernel.witness_prior import PRIOR_FILE, PRIOR_VERSION, WitnessPrior, load_prior, parse_prior
from engine.retrieval.evidence.agreement import pool_sources
from engine.retrieval.evidence.reliability import Reliabilities

__all__ = ["LOW_CONFIDENCE", "LOW_PRIOR", "MIN_COVERAGE", "PRIOR_FILE", "PRIOR_VERSION", "TOP", "VALUES_IN_QUESTION",
           "KeyReading", "KeyScore", "WitnessPrior", "candidate_weights", "expected_gain", "gallery_readings",
           "load_prior", "open_keys", "parse_prior", "question_text", "rank_questions", "rank_scored", "score_keys",
           "value_shares"]

#: Below this share of kept candidates with evidence for a key, the key ranks after all others.
MIN_COVERAGE = 0.5
#: Below this mean trusted confidence (after reliability) a key is said to be read unreliably.
LOW_CONFIDENCE = 0.2
#: Below this probability of being known a key is said to be one witnesses often do not know.
LOW_PRIOR = 0.5
#: Questions returned by default, and values named in a question.
TOP = 3
VALUES_IN_QUESTION = 3


# ------------------------------------------------------------------------------------------- wording


def _or_list(words: Sequence[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} or {words[-1]}"


def question_text(key: str, values: Sequence[str]) -> str:
    """The question about ``key`` naming ``values``, worded from the ontology's labels: a colour as a question
    about the garment ("Was the top red, blue or black?"), any other key as its label and the choices ("Build:
    slim or heavy?", "Kind of bottoms: trousers, jeans or shorts?"), which reads right for every label."""
    if key not in ONTOLOGY.attributes:
        raise ValueError(f"unknown attribute key {key!r}")
    label = key_label(key)
    words = [value_label(key, v) for v in values]
    if key in COLOR_KEYS:
        thing = label[len("colour of "):] if label.startswith("colour of ") else \
            "the " + label.removesuffix(" colour")
        verb = "Were" if thing.endswith("s") and not thing.endswith("ss") else "Was"
        return f"{verb} {thing} {_or_list(words)}?" if words else f"What colour was {thing}?"
    heading = label[:1].upper() + label[1:]
    return f"{heading}: {_or_list(words)}?" if words else f"What was the {label}?"


# ------------------------------------------------------------------------------------------- readings


@dataclass(frozen=True)
class KeyReading:
    """One key's pooled reading of n candidates: ``p`` [n, |V|] probabilities and ``c`` [n] confidence after
    reliability (NaN rows: no evidence)."""

    p: np.ndarray
    c: np.ndarray


def gallery_readings(evidence, rows: np.ndarray, keys: Iterable[str], sources: Sequence[str],
                     reliability: Reliabilities | None = None) -> dict[str, KeyReading]:
    """Each key's pooled reading of gallery ``rows`` from ``evidence`` (a ``GalleryEvidence``): every value's
    probability from every selected source, each source's confidence times its reliability, pooled as the
    hybrid ranking pools them. Colour keys are not read on infrared items."""
    rows = np.asarray(rows, dtype=np.int64)
    evidence_rows = evidence.evidence_row[rows]
    dark = None if evidence.infrared is None else evidence.infrared[rows]
    present = [s for s in sources if s in evidence.table.sources]
    out = {}
    for key in keys:
        values = ONTOLOGY.attributes[key]
        p = np.full((rows.size, len(values), len(present)), np.nan, dtype=np.float64)
        c = np.full((rows.size, 1, len(present)), np.nan, dtype=np.float64)
        columns = [store.COLUMN_OF[(key, v)] for v in values] + [store.CONFIDENCE_COLUMN[key]]
        for s, source in enumerate(present):
            block = evidence.table.gather(source, evidence_rows, columns).astype(np.float64)
            probabilities = np.clip(block[:, :-1], 0.0, None)
            with np.errstate(invalid="ignore", divide="ignore"):
                total = probabilities.sum(axis=1, keepdims=True)
                p[:, :, s] = np.where(total > 0, probabilities / total, np.nan)
            factor = 1.0 if not reliability else float(reliability.get(source, {}).get(key, 1.0))
            c[:, 0, s] = np.where(np.isnan(p[:, 0, s]), np.nan, np.clip(block[:, -1], 0.0, 1.0) * factor)
        if present:
            pooled_p, pooled_c = pool_sources(p, np.broadcast_to(c, p.shape))
            confidence = pooled_c[:, 0]
        else:
            pooled_p, confidence = np.full((rows.size, len(values)), np.nan), np.full(rows.size, np.nan)
        if dark is not None and key in COLOR_KEYS:
            pooled_p[dark] = np.nan
            confidence = np.where(dark, np.nan, confidence)
        out[key] = KeyReading(pooled_p, confidence)
    return out


# ------------------------------------------------------------------------------------------- ranking


def candidate_weights(scores: np.ndarray) -> np.ndarray:
    """Softmax of ``scores`` with the temperature their standard deviation (uniform when they are all equal)."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0:
        return scores
    if not np.isfinite(scores).all():
        raise ValueError("candidate scores must be finite")
    spread = float(scores.std())
    if spread <= 1e-12:
        return np.full(scores.size, 1.0 / scores.size)
    z = (scores - scores.max()) / spread
    weights = np.exp(z)
    return weights / weights.sum()


def _entropy_bits(q: np.ndarray) -> np.ndarray:
    """Entropy in bits of each row of ``q``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(q > 0, q * np.log2(np.where(q > 0, q, 1.0)), 0.0)
    return -terms.sum(axis=-1)


def expected_gain(reading: KeyReading, weights: np.ndarray) -> float:
    """I(target; answer) in bits for one key (see the module docstring); ≥ 0 and finite."""
    p, c = np.asarray(reading.p, dtype=np.float64), np.asarray(reading.c, dtype=np.float64)
    size = p.shape[1]
    known = ~np.isnan(c) & ~np.isnan(p).any(axis=1)
    q = np.full(p.shape, 1.0 / size)
    cc = np.clip(np.where(known, c, 0.0), 0.0, 1.0)[:, None]
    q[known] = (cc * np.nan_to_num(p) + (1.0 - cc) / size)[known]
    q /= q.sum(axis=1, keepdims=True)
    w = np.asarray(weights, dtype=np.float64)
    mixture = (w[:, None] * q).sum(axis=0)
    gain = float(_entropy_bits(mixture) - (w * _entropy_bits(q)).sum())
    return max(0.0, gain) if math.isfinite(gain) else 0.0


def value_shares(reading: KeyReading, key: str) -> dict[str, float]:
    """Per value: the share of all candidates whose reading names it most probable, commonest first (values
    no candidate reads left out)."""
    values = ONTOLOGY.attributes[key]
    p = np.asarray(reading.p, dtype=np.float64)
    n = p.shape[0]
    known = ~np.isnan(reading.c) & ~np.isnan(p).any(axis=1)
    if n == 0 or not known.any():
        return {}
    counts = np.bincount(np.argmax(p[known], axis=1), minlength=len(values))
    order = sorted(range(len(values)), key=lambda j: (-counts[j], j))
    return {values[j]: round(float(counts[j]) / n, 4) for j in order if counts[j] > 0}


def _reasons(coverage: float, confidence: float, knows: float, shares: Mapping[str, float]) -> list[str]:
    reasons = []
    if coverage < MIN_COVERAGE:
        reasons.append(f"no evidence on {round(100 * (1 - coverage))} % of the candidates")
    elif confidence < LOW_CONFIDENCE:
        reasons.append("read unreliably on this gallery")
    if len(shares) == 1 and coverage >= MIN_COVERAGE:
        reasons.append(f"the candidates all read one value ({next(iter(shares))})")
    if knows < LOW_PRIOR:
        reasons.append(f"witnesses often do not know it ({round(100 * knows)} % do)")
    return reasons


def open_keys(stated: Mapping[str, str], hidden: Iterable[str] = ()) -> list[str]:
    """The ontology keys a question may ask: not stated, not hidden, and no colour of an item said to be absent."""
    hidden = set(hidden)
    unknown = sorted(hidden - set(ONTOLOGY.keys))
    if unknown:
        raise ValueError(f"hidden keys {unknown} are not ontology keys")
    out = []
    for key in ONTOLOGY.keys:
        owner = DEPENDENT_COLORS.get(key)
        if key in stated or key in hidden or (owner is not None and stated.get(owner) == "none"):
            continue
        out.append(key)
    return out


@dataclass(frozen=True)
class KeyScore:
    """What ranking needs of one key's reading, the prior aside: the information its answer gives (bits, before
    the witness prior), its value shares, the share of candidates read and their mean trusted confidence."""

    key: str
    bits: float
    shares: Mapping[str, float]
    coverage: float
    confidence: float


def score_keys(readings: Mapping[str, KeyReading], weights: np.ndarray) -> list[KeyScore]:
    """Each key of ``readings`` scored over candidates weighted by ``weights`` (the costly part of ranking: it
    does not depend on the witness prior, so one scoring serves every viewing condition)."""
    weights = np.asarray(weights, dtype=np.float64)
    scored = []
    for key, reading in readings.items():
        if reading.p.shape[0] != weights.shape[0]:
            raise ValueError(f"the reading of {key} has {reading.p.shape[0]} candidates, the weights "
                             f"{weights.shape[0]}")
        known = ~np.isnan(reading.c)
        scored.append(KeyScore(key, expected_gain(reading, weights) if weights.size else 0.0,
                               value_shares(reading, key), float(known.mean()) if known.size else 0.0,
                               float(np.nanmean(reading.c)) if known.any() else 0.0))
    return scored


def rank_scored(scored: Sequence[KeyScore], prior: WitnessPrior, *, condition: str | None = None,
                top: int | None = TOP) -> list[dict[str, Any]]:
    """``rank_questions`` of keys already scored (``score_keys``)."""
    if top is not None and (isinstance(top, bool) or not isinstance(top, int) or top < 1):
        raise ValueError(f"top must be a whole number ≥ 1 or None, got {top!r}")
    condition = prior.condition(condition)  # an unknown one is refused even without readings
    found = []
    for score in scored:
        key, shares = score.key, dict(score.shares)
        knows = prior.knows_key(key, condition)
        gain = score.bits * knows
        record: dict[str, Any] = {"key": key,
                                  "question": question_text(key, list(shares)[:VALUES_IN_QUESTION]),
                                  "gain": round(gain, 4), "values": shares}
        reasons = _reasons(score.coverage, score.confidence, knows, shares)
        if reasons:
            record["reason"] = "; ".join(reasons)
        found.append((score.coverage >= MIN_COVERAGE, gain, -ONTOLOGY.keys.index(key), record))
    found.sort(key=lambda f: (f[0], f[1], f[2]), reverse=True)
    ranked = [f[3] for f in found]
    return ranked if top is None else ranked[:top]


def rank_questions(readings: Mapping[str, KeyReading], weights: np.ndarray, prior: WitnessPrior, *,
                   condition: str | None = None, top: int | None = TOP) -> list[dict[str, Any]]:
    """Questions about the keys of ``readings`` (candidates weighted by ``weights``), best first: ``{"key",
    "question", "gain" (bits, after the witness prior under ``condition``: None or ``"ordinary"`` for ordinary
    viewing, else one of the prior's conditions), "values" (value → share of candidates), "reason"?}``. Keys
    covered on fewer than ``MIN_COVERAGE`` of the candidates come last."""
    prior.condition(condition)  # refused before the scoring
    return rank_scored(score_keys(readings, weights), prior, condition=condition, top=top)
