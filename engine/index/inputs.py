"""What a write to a gallery is given, checked before anything is written: vectors per view and crop files."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from engine.index.errors import GalleryInputError, GalleryMismatchError
from engine.index.items import GalleryItem
from engine.index.layout import NORM_TOLERANCE
from engine.kernel.hashing import sha256_file
from engine.kernel.paths import PathEscapeError, contained


def check_vectors(views: Mapping[str, int], vectors_by_view: Mapping[str, Any], count: int) -> dict[str, np.ndarray]:
    """``vectors_by_view`` covering exactly ``views`` (name → dimension), each checked by ``check_vectors_of``."""
    missing = set(views) - set(vectors_by_view)
    extra = set(vectors_by_view) - set(views)
    if missing or extra:
        raise GalleryMismatchError(
            f"vectors must cover exactly the gallery's views {sorted(views)}; "
            f"missing {sorted(missing)}, unknown {sorted(extra)}"
        )
    return {view: check_vectors_of(view, array, count, views[view]) for view, array in vectors_by_view.items()}


def check_vectors_of(view: str, array: Any, count: int, dim: int) -> np.ndarray:
    """``array`` as [count, dim] finite, L2-normalised floats; ``GalleryInputError``/``GalleryMismatchError``."""
    data = np.asarray(array)
    if data.ndim != 2 or data.shape != (count, dim):
        raise GalleryMismatchError(
            f"vectors for view {view!r} must have shape ({count}, {dim}), got {data.shape}"
        )
    if not np.issubdtype(data.dtype, np.floating):
        raise GalleryInputError(f"vectors for view {view!r} must be floating point, got {data.dtype}")
    if not np.isfinite(data).all():
        raise GalleryInputError(f"vectors for view {view!r} contain NaN or infinite values")
    norms = np.linalg.norm(data.astype(np.float32, copy=False), axis=1)
    bad = np.flatnonzero(np.abs(norms - 1) > NORM_TOLERANCE)
    if bad.size:
        raise GalleryInputError(
            f"vectors for view {view!r} must be L2-normalised; row {int(bad[0])} has norm {norms[bad[0]]:.4f}"
        )
    return data


def check_crops(root: Path, items: list[GalleryItem]) -> list[GalleryItem]:
    """``items`` with each crop's SHA-256 filled in; ``GalleryInputError`` when a crop lies outside ``root``,
    is missing, or differs from the SHA-256 its item gives."""
    checked = []
    for item in items:
        if item.crop is not None:
            try:
                path = contained(root, item.crop, f"item {item.id!r}: crop")
            except PathEscapeError as exc:
                raise GalleryInputError(str(exc)) from None
            if not path.is_file():
                raise GalleryInputError(f"item {item.id!r}: crop file {path} does not exist")
            digest = sha256_file(path)
            if item.crop_sha256 is not None and item.crop_sha256 != digest:
                raise GalleryInputError(f"item {item.id!r}: crop {path} has SHA-256 {digest}, the item says "
                                        f"{item.crop_sha256}")
            item = replace(item, crop_sha256=digest)
        checked.append(item)
    return checked
