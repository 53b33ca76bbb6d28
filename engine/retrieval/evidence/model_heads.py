"""Attribute evidence from a checkpoint's image attribute heads (docs/methods.md §6): softmax over each key's values.

The heads give logits per ontology key in canonical value order (``engine.retrieval.models.attributes``); the
probabilities are their softmax. The confidence of a key is how decided the head is, 1 − H(p)/log|V| (0 for a
uniform distribution, 1 for a one-hot one): a head that has not learned a key (flat logits) then carries no
weight in the hybrid ranking. It is not a calibrated reliability: a synthetic-trained head can be decided and
wrong on real footage (see ``engine.retrieval.evidence.agreement`` for how confidence enters the score).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.kernel.ontology import ONTOLOGY
from engine.perception.attributes.evidence import AttributeEvidence
from engine.retrieval.encoding.model_encoder import model_resolution, per_crop, prepared_batch

DEFAULT_BATCH = 64


def has_heads(model) -> bool:
    return model is not None and getattr(model, "image_attributes", None) is not None


def evidence_from_probabilities(probabilities: dict[str, np.ndarray]) -> AttributeEvidence:
    """One crop's ``AttributeEvidence`` from softmax rows {key: [|V|]} (confidence 1 − H/log|V|)."""
    out = AttributeEvidence({}, {}, info={"source": "model"})
    for key, row in probabilities.items():
        p = np.clip(np.asarray(row, dtype=np.float64), 0.0, None)
        p = p / p.sum()
        nonzero = p[p > 0]
        entropy = float(-(nonzero * np.log(nonzero)).sum())
        out.probabilities[key] = {v: float(x) for v, x in zip(ONTOLOGY.attributes[key], p, strict=True)}
        out.confidence[key] = float(np.clip(1.0 - entropy / np.log(p.size), 0.0, 1.0))
    return out


def model_evidence(model, crops: Sequence[np.ndarray], modalities: str | Sequence[str] | None = None,
                   resolutions: str | Sequence[str] | None = None, *,
                   batch_size: int = DEFAULT_BATCH) -> list[AttributeEvidence]:
    """Evidence of every crop (BGR uint8) from ``model``'s image attribute heads, in batches of ``batch_size``.

    ``modalities`` ("rgb"/"ir") and ``resolutions`` (HR/mild/mid/ultra or the model's names) are one value for
    all crops or one per crop (default rgb, HR). Raises ``ValueError`` when the model has no heads."""
    import torch

    if not has_heads(model):
        raise ValueError("this checkpoint has no image attribute heads (config attributes.image is false)")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    count = len(crops)
    modality = per_crop("rgb" if modalities is None else modalities, count, "modality")
    resolution = [model_resolution(r) for r in per_crop("HR" if resolutions is None else resolutions, count,
                                                        "resolution")]
    out: list[AttributeEvidence] = []
    for start in range(0, count, batch_size):
        stop = min(count, start + batch_size)
        images = prepared_batch(model, crops[start:stop], start)
        logits = model.image_attribute_logits(images, modality[start:stop], None, resolution[start:stop])
        soft = {key: torch.softmax(value.float(), dim=-1).cpu().numpy() for key, value in logits.items()}
        out.extend(evidence_from_probabilities({k: v[i] for k, v in soft.items()}) for i in range(stop - start))
    return out
