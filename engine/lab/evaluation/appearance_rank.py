"""Rankings of real datasets by a gallery's appearance views, as footage galleries rank
(``engine.retrieval.encoding.views``;
docs/pretrained-models.md, docs/real-footage.md "Sketch and infrared on footage").

- ``appearance_vectors``: every image of a dataset through the appearance network, as stored in view
  ``appearance`` (the image as it is) or ``appearance:grey`` (the image in grey);
- ``find_similar``: the ``reid`` protocol's find-similar block on the gallery's default appearance view: an RGB
  query compares in ``appearance``, an infrared one in ``appearance:grey`` (both sides grey), as a find-similar
  step does;
- ``sketch``: the ``sketch`` protocol on a PKU-Sketch index (``engine.ingest.datasets.pku_sketch``): every sketch,
  in grey through the network (a sketch step's query vector), against every photo's ``appearance:grey`` vector;
  for reference the same sketches against the photos' colour ``appearance`` vectors.

The network is the one a new footage gallery gets (``engine.perception.pretrained.registry.DEFAULT_APPEARANCE``, the
shipped ``balanced`` one) unless another preset is given; reports name it and the views compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engine.ingest.datasets import DatasetIndex, pku_sketch_protocol
from engine.kernel.images import ImageInputError, read_image
from engine.kernel.progress import ProgressFn, no_progress
from engine.lab.evaluation.errors import EvaluationError
from engine.lab.evaluation.scoring import block, score
from engine.perception.appearance import AppearanceModelError, ShippedAppearanceNetwork
from engine.perception.appearance.grey import appearance_views
from engine.perception.appearance.views import APPEARANCE_GREY_VIEW, APPEARANCE_VIEW
from engine.perception.pretrained.registry import DEFAULT_APPEARANCE

SKETCH_TO_PHOTO = f"sketch → photo ({APPEARANCE_GREY_VIEW})"
SKETCH_TO_COLOUR = f"sketch → photo ({APPEARANCE_VIEW}, colour photos; for reference)"
SKETCH_RELEVANCE = "the sketch's person's photos (every sketch against every photo)"


def load_network(preset: str = DEFAULT_APPEARANCE) -> ShippedAppearanceNetwork:
    try:
        return ShippedAppearanceNetwork(preset)
    except AppearanceModelError as exc:
        raise EvaluationError(str(exc)) from None


def network_record(network: ShippedAppearanceNetwork) -> dict[str, Any]:
    """What a report says of the network: its name, release, precision and weights' SHA-256."""
    fingerprint = network.fingerprint
    return {"name": fingerprint["name"], "version": network.describe(), "precision": fingerprint["precision"],
            "file_sha256": fingerprint["file_sha256"]}


def appearance_vectors(paths: Sequence[Path], network, views: Sequence[str], batch_size: int = 64,
                       progress: ProgressFn = no_progress) -> dict[str, np.ndarray]:
    """``{view: float64 unit vectors [N, D]}`` of the image files (read as hostile input, ``engine.kernel.images``)."""
    parts: dict[str, list[np.ndarray]] = {view: [] for view in views}
    for start in range(0, len(paths), batch_size):
        crops = []
        for path in paths[start : start + batch_size]:
            try:
                crops.append(read_image(path))
            except ImageInputError as exc:
                raise EvaluationError(f"image {path} cannot be read: {exc.reason}") from None
        for view, vectors in appearance_views(network, crops, views).items():
            parts[view].append(vectors.astype(np.float64))
        progress(min(len(paths), start + batch_size), len(paths))
    return {view: np.concatenate(blocks) if blocks else np.zeros((0, network.dim)) for view, blocks in parts.items()}


def find_similar(samples, count: int, network, positive: np.ndarray, valid: np.ndarray, batch_size: int = 64,
                 progress: ProgressFn = no_progress) -> dict[str, Any]:
    """The find-similar block of queries ``samples[:count]`` against ``samples[count:]`` in the appearance views
    (an infrared query in ``appearance:grey``, any other in ``appearance``)."""
    infrared = np.asarray([s.modality == "ir" for s in samples[:count]])
    views = [view for view, used in ((APPEARANCE_VIEW, not infrared.all()), (APPEARANCE_GREY_VIEW, infrared.any()))
             if used]
    vectors = appearance_vectors([s.image for s in samples], network, views, batch_size, progress)
    similarity = np.zeros((count, len(samples) - count))
    for view, rows in ((APPEARANCE_VIEW, ~infrared), (APPEARANCE_GREY_VIEW, infrared)):
        if rows.any():
            similarity[rows] = vectors[view][:count][rows] @ vectors[view][count:].T
    return {"block": block(score(similarity, positive, valid)), "views": views}


def sketch(dataset: DatasetIndex, batch_size: int = 64, progress: ProgressFn = no_progress,
           preset: str = DEFAULT_APPEARANCE) -> dict[str, Any]:
    """The report part of the ``sketch`` protocol (see the module docstring)."""
    if dataset.name != "pku-sketch":
        raise EvaluationError(f"protocol 'sketch' needs a sketch dataset (pku-sketch:PATH); {dataset.name!r} has no "
                              "sketches")
    protocol = pku_sketch_protocol(dataset)
    network = load_network(preset)
    count = len(protocol.query)
    sketches = appearance_vectors([s.image for s in protocol.query], network, (APPEARANCE_GREY_VIEW,), batch_size,
                                  progress)[APPEARANCE_GREY_VIEW]
    photos = appearance_vectors([s.image for s in protocol.gallery], network, (APPEARANCE_VIEW, APPEARANCE_GREY_VIEW),
                                batch_size, progress)
    by = {SKETCH_TO_PHOTO: block(score(sketches @ photos[APPEARANCE_GREY_VIEW].T, protocol.positive, protocol.valid)),
          SKETCH_TO_COLOUR: block(score(sketches @ photos[APPEARANCE_VIEW].T, protocol.positive, protocol.valid))}
    return {"relevance": SKETCH_RELEVANCE, "queries": count, "gallery": len(protocol.gallery),
            "overall": by[SKETCH_TO_PHOTO], "by": by, "network": network_record(network),
            "views": {"query": f"the sketch in grey through {network.model.name} (a sketch step's query vector)",
                      "gallery": APPEARANCE_GREY_VIEW},
            "notes": [] if not dataset.notes.get("photos_without_sketch") else
            [f"{dataset.notes['photos_without_sketch']} photos of people without a sketch are distractors"]}
