"""How alike two people look to the checkpoint's attribute heads, on chosen keys (docs/methods.md §8).

Each image's heads give a softmax over every key's values. For one key the probability that both images
show the same value is a_k = Σ_v p_1(v)·p_2(v) (1 when both heads are sure and agree, 0 when they are sure
and disagree). The likeness of two images on keys K is the mean over K of a log-score of a_k, mapped to [0, 1]:

    likeness = mean_k [log(a_k + ε) − log ε] / [log(1 + ε) − log ε],      ε = ``EPSILON``

The log makes one confident disagreement (a different gender, say) weigh far more than several keys that are
merely uncertain, which a plain mean of a_k does not; ε bounds what one key can cost. On a synthetic
calibration world's clothing-change scenarios (biometric keys) it ranks the same person first as often as the
plain mean and ranks the same-clothes scenarios better (docs/training-notes.md, "Find similar across an outfit
change").

Probability rows are laid out key by key in ontology order (``key_columns`` picks a key's columns); a row of
NaN is an image without readings and gets likeness NaN. ``same_value`` also takes rows holding some keys only
(``consecutive_columns``), as the gallery's evidence table gives them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.kernel.ontology import ATTRIBUTE_KEYS, BIOMETRIC_KEYS, COLOR_KEYS, ONTOLOGY

#: Bounds the cost of one confident disagreement; 0.001 to 0.05 rank alike on the synthetic world.
EPSILON = 0.01
#: λ of find-similar across an outfit change, (cos + λ·likeness) / (1 + λ) (``engine.retrieval.search.outfit_change``).
OUTFIT_CHANGE_WEIGHT = 2.0
RULE = ("mean over keys of the log-probability that both images show the key's value, "
        "log(Σ_v p_1(v)·p_2(v) + ε), mapped to [0, 1]")

_STARTS = np.cumsum([0] + [len(ONTOLOGY.attributes[key]) for key in ATTRIBUTE_KEYS])


def key_columns(keys: Sequence[str]) -> list[np.ndarray]:
    """Per key, its columns in a probability row laid out key by key in ontology order."""
    unknown = [key for key in keys if key not in ATTRIBUTE_KEYS]
    if unknown:
        raise ValueError(f"unknown attribute keys {unknown}; keys: {list(ATTRIBUTE_KEYS)}")
    return [np.arange(_STARTS[ATTRIBUTE_KEYS.index(key)], _STARTS[ATTRIBUTE_KEYS.index(key) + 1]) for key in keys]


def consecutive_columns(keys: Sequence[str]) -> list[np.ndarray]:
    """Per key, its columns in a row holding only ``keys``' values, one key after the other."""
    starts = np.cumsum([0] + [len(ONTOLOGY.attributes[key]) for key in keys])
    return [np.arange(starts[k], starts[k + 1]) for k in range(len(keys))]


def same_value(first: np.ndarray, second: np.ndarray, spans: Sequence[np.ndarray]) -> np.ndarray:
    """[len(spans), A, B] a_k: the probability that image a of ``first`` and image b of ``second`` show the
    same value of each key, whose columns are ``spans[k]`` (``key_columns`` or ``consecutive_columns``); each
    key's probabilities are renormalised and NaN rows stay NaN."""
    out = np.empty((len(spans), first.shape[0], second.shape[0]), dtype=np.float64)
    for k, columns in enumerate(spans):
        a = _normalised(first[:, columns])
        b = _normalised(second[:, columns])
        out[k] = a @ b.T
    return out


def key_score(agreement: np.ndarray, epsilon: float = EPSILON) -> np.ndarray:
    """a_k mapped to [0, 1] by the log-score (1: sure agreement, 0: sure disagreement)."""
    low = np.log(epsilon)
    return (np.log(np.clip(agreement, 0.0, 1.0) + epsilon) - low) / (np.log1p(epsilon) - low)


def likeness(first: np.ndarray, second: np.ndarray, keys: Sequence[str], epsilon: float = EPSILON) -> np.ndarray:
    """A×B likeness on ``keys`` (see the module docstring), in [0, 1]; NaN where either image has no readings."""
    if not keys:
        raise ValueError("likeness needs at least one attribute key")
    return key_score(same_value(first, second, key_columns(keys)), epsilon).mean(axis=0)


def outfit_change_keys(infrared: bool) -> tuple[str, ...]:
    """The keys find similar across an outfit change compares: the biometrics, without the colour keys when an
    infrared image is on either side."""
    return tuple(key for key in BIOMETRIC_KEYS if not (infrared and key in COLOR_KEYS))


def with_similarity(similarity: np.ndarray, likeness_values: np.ndarray,
                    weight: float = OUTFIT_CHANGE_WEIGHT) -> np.ndarray:
    """The outfit-change score: (similarity + λ·likeness) / (1 + λ), float64."""
    return (np.asarray(similarity, dtype=np.float64) + weight * np.asarray(likeness_values)) / (1 + weight)


def _normalised(block: np.ndarray) -> np.ndarray:
    block = np.clip(np.asarray(block, dtype=np.float64), 0.0, None)
    total = block.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, block / total, np.nan)
