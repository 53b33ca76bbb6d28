"""The appearance views of an existing gallery (``engine.perception.appearance.views.APPEARANCE_VIEWS``:
``appearance`` and ``appearance:grey``), computed from its stored crops (``lineup gallery rebuild --appearance``):
every item's crop through the network (``engine.perception.appearance.grey.appearance_views``), then
``Gallery.set_view`` per view.

A gallery whose appearance views another file (or another normalisation or input size) made is refused unless
``replace`` is given: vectors of two networks in one view would not be comparable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

from engine.perception.appearance.errors import AppearanceModelError
from engine.perception.appearance.grey import appearance_views
from engine.perception.appearance.network import AppearanceNetwork, same_model
from engine.perception.appearance.views import APPEARANCE_VIEW, APPEARANCE_VIEWS

ProgressFn = Callable[[int, int], None]
READ_BATCH = 64


def check_view_model(gallery, network: AppearanceNetwork) -> None:
    """``AppearanceModelError`` when one of the gallery's appearance views was made by another file or setting."""
    for view in APPEARANCE_VIEWS:
        _check_one(gallery, network, view)


def _check_one(gallery, network: AppearanceNetwork, view: str) -> None:
    recorded = gallery.view_model(view) if view in gallery.views else None
    if recorded is not None and not same_model(recorded, network.fingerprint):
        raise AppearanceModelError(
            f"the gallery {gallery.root} holds an {view!r} view made by {recorded.get('file')} "
            f"(SHA-256 {str(recorded.get('file_sha256'))[:16]}…, normalisation {recorded.get('normalisation')}, input "
            f"{recorded.get('input_size')}); {network.path} (SHA-256 {network.sha256[:16]}…, normalisation "
            f"{network.normalisation.to_dict()}, input {network.fingerprint['input_size']}) is another model: its "
            "vectors are not comparable (recompute the whole view with --replace-appearance)")


def _crop(gallery, row: int) -> np.ndarray:
    item = gallery.item(row)
    if item.crop is None:
        raise AppearanceModelError(f"item {item.id!r} of {gallery.root} has no crop to encode")
    path = gallery.root / item.crop
    data = np.fromfile(path, dtype=np.uint8) if path.is_file() else None
    image = None if data is None or not data.size else cv2.imdecode(data, cv2.IMREAD_COLOR)
    if image is None:
        raise AppearanceModelError(f"item {item.id!r}: its crop {path} is missing or not decodable "
                                   "(`lineup gallery verify` lists such problems)")
    return image


def compute_appearance_view(gallery, network: AppearanceNetwork, *, replace: bool = False,
                            progress: ProgressFn | None = None) -> dict[str, Any]:
    """Add (or recompute) the appearance views of ``gallery`` from its stored crops; returns what was done
    (``view``: the first view, ``views``: all of them)."""
    if not replace:
        check_view_model(gallery, network)
    count = len(gallery)
    blocks: dict[str, list[np.ndarray]] = {view: [] for view in APPEARANCE_VIEWS}
    for start in range(0, count, READ_BATCH):
        crops = [_crop(gallery, row) for row in range(start, min(count, start + READ_BATCH))]
        for view, vectors in appearance_views(network, crops).items():
            blocks[view].append(vectors)
        if progress is not None:
            progress(start + len(crops), count)
    existed = APPEARANCE_VIEW in gallery.views
    for view, parts in blocks.items():
        vectors = np.concatenate(parts) if parts else np.zeros((0, network.dim), np.float32)
        gallery.set_view(view, vectors, network.fingerprint)
    return {"view": APPEARANCE_VIEW, "views": list(APPEARANCE_VIEWS), "items": count, "dim": network.dim,
            "replaced": existed, "model": network.fingerprint}
