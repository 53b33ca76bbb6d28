"""A small gallery whose items lie at given cosine similarities to the first one, with stored attribute
evidence: the fixture of the search tests that check scores by hand."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from engine.index import Gallery
from engine.index import evidence_table as store
from engine.retrieval.encoding.views import gallery_views

DIM = 4


def similarity_gallery(root: Path, similarity: Sequence[float], evidence: Mapping[str, dict],
                       modality: Mapping[str, str] | None = None) -> Gallery:
    """Items ``i0``, ``i1``, … whose vectors (every view) have cosine ``similarity[k]`` with the unit vector
    e₀ (``i0`` at 1.0 is e₀ itself), ``evidence`` stored for the items it names, ``modality`` per item id."""
    angles = np.arccos(similarity)
    vectors = np.zeros((len(similarity), DIM), np.float32)
    vectors[:, 0], vectors[:, 1] = np.cos(angles), np.sin(angles)
    views = gallery_views(DIM)
    gallery = Gallery.create(root, views, "ckpt")
    items = [{"id": f"i{k}", "source": "s.mp4", "frame": k} for k in range(len(similarity))]
    for item in items:
        if modality and item["id"] in modality:
            item["modality"] = modality[item["id"]]
    gallery.add(items, {view: vectors for view in views})
    ids = list(evidence)
    store.append(gallery.root, ids, [evidence[i] for i in ids], model_fingerprint="ckpt")
    return gallery
