"""Re-identification on a real dataset: find-similar's rankings measured on Market-1501 or SYSU-MM01
(docs/methods.md §5 for the metrics).

Each query image is the example of a find-similar step over the dataset's gallery, under the dataset's own
protocol (``market1501_protocol``: a gallery image of the query's person and camera is left out, distractors
never count; ``sysu_mm01_protocol``: infrared queries against one random RGB image per person and camera,
``all`` cameras, trial 0). Every image is encoded as ingest would store it: its own modality and the
resolution label of its height (``engine.retrieval.encoding.resolution.level_of_height``). Rankings, as ``by`` blocks:

- ``find similar``: cosine in the default appearance view of a footage gallery, what find-similar searches
  there (``engine.lab.evaluation.appearance_rank``: the shipped ``balanced`` re-identification network; an infrared
  query compares in ``appearance:grey``); the report names the network (``network``) and the views (``views``);
- ``checkpoint find similar (rgb)``: cosine in the checkpoint's gallery embedding (``rgb``), what find-similar
  searches in a gallery without an appearance view (built worlds);
- ``checkpoint reid:AD-LT``: the checkpoint's scenario-token feature ingest also stores, when the model has
  scenario tokens;
- ``checkpoint clothes may have changed``: (cos + λ·likeness) / (1 + λ) with the heads' biometric likeness
  (``engine.lab.evaluation.outfit_change``, no colour when either image is infrared), when the model has heads.

``overall`` is the ``find similar`` block.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from PIL import Image

from engine.ingest.datasets import DatasetIndex, ReidProtocol, market1501_protocol, sysu_mm01_protocol
from engine.kernel.progress import ProgressFn, no_progress
from engine.lab.evaluation import appearance_rank
from engine.lab.evaluation.attribute_reading import vectors_and_head_probabilities
from engine.lab.evaluation.encoding import encode_image_batches, model_resolution
from engine.lab.evaluation.errors import EvaluationError
from engine.lab.evaluation.scoring import block, score
from engine.retrieval.encoding.resolution import level_of_height
from engine.retrieval.encoding.views import IMAGE_QUERY_VIEW, reid_view
from engine.retrieval.evidence.likeness import (
    OUTFIT_CHANGE_WEIGHT,
    key_columns,
    key_score,
    outfit_change_keys,
    same_value,
    with_similarity,
)
from engine.retrieval.evidence.model_heads import has_heads

PROTOCOLS: dict[str, Callable[[DatasetIndex], ReidProtocol]] = {
    "market1501": market1501_protocol,
    "sysu-mm01": sysu_mm01_protocol,
}
RELEVANCE = {
    "market1501": "the query's person on another camera (junk images skipped, distractors never relevant)",
    "sysu-mm01": "the query's person: infrared queries against one RGB image per person and camera (all cameras, "
                 "trial 0)",
}
REID_SCENARIO = "AD-LT"
FIND_SIMILAR = "find similar"
CHECKPOINT = "checkpoint"
CHECKPOINT_FIND_SIMILAR = f"{CHECKPOINT} find similar ({IMAGE_QUERY_VIEW})"
CHECKPOINT_REID = f"{CHECKPOINT} {reid_view(REID_SCENARIO)}"
OUTFIT_CHANGE = f"{CHECKPOINT} clothes may have changed"


def _heights(paths: list[Path]) -> list[str]:
    labels = []
    for path in paths:
        try:
            with Image.open(path) as image:
                labels.append(level_of_height(image.size[1]))
        except (OSError, ValueError) as exc:
            raise EvaluationError(f"image {path} cannot be read: {exc}") from None
    return labels


def reid(model, dataset: DatasetIndex, batch_size: int = 64, progress: ProgressFn = no_progress,
         appearance: str = appearance_rank.DEFAULT_APPEARANCE) -> dict[str, Any]:
    """The report part of the ``reid`` protocol on a Market-1501 or SYSU-MM01 index (see the module docstring)."""
    make = PROTOCOLS.get(dataset.name)
    if make is None:
        raise EvaluationError(f"protocol 'reid' needs a re-identification dataset ({', '.join(PROTOCOLS)}); "
                              f"{dataset.name!r} has no query/gallery protocol")
    try:
        protocol = make(dataset)
    except ValueError as exc:
        raise EvaluationError(f"{dataset.name} at {dataset.root}: {exc}") from None
    samples = list(protocol.query) + list(protocol.gallery)
    if not protocol.query or not protocol.gallery:
        raise EvaluationError(f"{dataset.name} at {dataset.root} has no query or no gallery image")
    paths = [sample.image for sample in samples]
    labels = _heights(paths)
    items = [{"modality": sample.modality, "resolution": label} for sample, label in zip(samples, labels, strict=True)]
    modalities, resolutions = [i["modality"] for i in items], [model_resolution(i["resolution"]) for i in items]
    probabilities = None
    if has_heads(model):
        vectors, probabilities = vectors_and_head_probabilities(model, paths, items, batch_size, progress)
    else:
        with torch.no_grad():
            vectors = encode_image_batches(
                model, paths, lambda images, rows: model.encode_images(images, modalities[rows], None,
                                                                        resolutions[rows]),
                batch_size, progress).numpy()
    count = len(protocol.query)
    network = appearance_rank.load_network(appearance)
    similar = appearance_rank.find_similar(samples, count, network, protocol.positive, protocol.valid, batch_size)
    cosine = np.asarray(vectors[:count] @ vectors[count:].T, dtype=np.float64)
    by = {FIND_SIMILAR: similar["block"],
          CHECKPOINT_FIND_SIMILAR: block(score(cosine, protocol.positive, protocol.valid))}
    notes = []
    if model.config.scenarios.enabled:
        with torch.no_grad():
            features = encode_image_batches(
                model, paths, lambda images, rows: model.encode_reid(images, REID_SCENARIO, modalities[rows],
                                                                     resolutions[rows]),
                batch_size).numpy()
        similarity = np.asarray(features[:count] @ features[count:].T, dtype=np.float64)
        by[CHECKPOINT_REID] = block(score(similarity, protocol.positive, protocol.valid))
    else:
        notes.append("no reid view: this model has no scenario tokens")
    if probabilities is not None:
        by[OUTFIT_CHANGE] = block(score(_outfit_change(cosine, probabilities, samples, count),
                                        protocol.positive, protocol.valid))
    else:
        notes.append("no clothes-may-have-changed ranking: this model has no image attribute heads")
    return {"relevance": RELEVANCE[dataset.name], "queries": int(protocol.kept_queries.size),
            "gallery": len(protocol.gallery), "overall": by[FIND_SIMILAR], "by": by,
            "network": appearance_rank.network_record(network),
            "views": {FIND_SIMILAR: similar["views"], CHECKPOINT_FIND_SIMILAR: [IMAGE_QUERY_VIEW]},
            "outfit_change_weight": OUTFIT_CHANGE_WEIGHT, "resolutions": dict(Counter(labels)), "notes": notes}


def _outfit_change(cosine: np.ndarray, probabilities: np.ndarray, samples, count: int) -> np.ndarray:
    """The clothes-may-have-changed scores: colour keys only between two RGB images (each key's score read once)."""
    keys = outfit_change_keys(infrared=False)
    colourless = [k for k, key in enumerate(keys) if key in outfit_change_keys(infrared=True)]
    per_key = key_score(same_value(probabilities[:count], probabilities[count:], key_columns(keys)))
    both_rgb = (np.asarray([s.modality == "rgb" for s in samples[:count]])[:, None]
                & np.asarray([s.modality == "rgb" for s in samples[count:]])[None, :])
    return with_similarity(cosine, np.where(both_rgb, per_key.mean(axis=0), per_key[colourless].mean(axis=0)))
