"""Which gallery view a text query searches, and the per-level gallery views (docs/methods.md §1.9).

A gallery image has one view per granularity level (the output of that level's expert). A text query
searches the view of its level: the benchmark's given level (MG-Eval) or ĝ = argmax of the granularity
classifier (``auto``). Image-only queries use the config's ``granularity.image_query_level``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from engine.kernel.ontology import LEVELS
from engine.kernel.progress import ProgressFn, no_progress
from engine.lab.evaluation.encoding import encode_image_batches
from engine.lab.evaluation.errors import EvaluationError

LEVEL_MODES: tuple[str, ...] = ("given", "auto")


def image_query_level(model) -> str:
    """The level whose view image-side queries (sketch, IR) search."""
    return model.config.granularity.image_query_level


def query_levels(
    given: Sequence[str | None], level_logits: torch.Tensor | None, mode: str, fallback: str
) -> tuple[list[str], list[str]]:
    """(level per query, notes). ``given`` entries of None (no label) take ``fallback``.

    ``auto`` takes the classifier's argmax; a model without a classifier falls back to the given levels
    and says so in the notes.
    """
    if mode not in LEVEL_MODES:
        raise EvaluationError(f"level mode must be one of {list(LEVEL_MODES)}, got {mode!r}")
    labelled = [fallback if level is None else level for level in given]
    unknown = sorted({level for level in labelled if level not in LEVELS})
    if unknown:
        raise EvaluationError(f"query levels {unknown} are not among {list(LEVELS)}")
    if mode == "given":
        return labelled, []
    if level_logits is None:
        return labelled, ["level auto: the model has no granularity classifier; given levels were used"]
    if level_logits.shape != (len(given), len(LEVELS)):
        raise EvaluationError(
            f"level logits have shape {tuple(level_logits.shape)}, expected ({len(given)}, {len(LEVELS)})"
        )
    return [LEVELS[i] for i in level_logits.argmax(dim=1).tolist()], []


def gallery_views(
    model,
    paths: Sequence[Path],
    levels: set[str],
    modality: str,
    resolutions: Sequence[str],
    batch_size: int,
    progress: ProgressFn = no_progress,
) -> dict[str, torch.Tensor]:
    """{level: [G, D] unit vectors} for the ``levels`` asked for; each image passes the model once
    (``encode_images`` for one level, ``encode_images_all_levels`` for several)."""
    if not levels:
        raise EvaluationError("no gallery level asked for")
    wanted = sorted(levels, key=LEVELS.index)
    if len(wanted) == 1:
        level = wanted[0]
        vectors = encode_image_batches(
            model,
            paths,
            lambda images, rows: model.encode_images(images, modality, level, list(resolutions[rows])),
            batch_size,
            progress,
        )
        return {level: vectors}
    stacked = encode_image_batches(
        model,
        paths,
        lambda images, rows: model.encode_images_all_levels(images, modality, list(resolutions[rows])),
        batch_size,
        progress,
    )
    return {level: stacked[:, LEVELS.index(level)] for level in wanted}


def similarity_by_level(
    queries: torch.Tensor, levels: Sequence[str], views: dict[str, torch.Tensor]
) -> np.ndarray:
    """Q×G cosines: query i against the gallery view of ``levels[i]`` (clipped to [−1, 1])."""
    if queries.shape[0] != len(levels):
        raise EvaluationError(f"{queries.shape[0]} query vectors but {len(levels)} levels")
    gallery = next(iter(views.values()))
    out = np.empty((queries.shape[0], gallery.shape[0]), dtype=np.float32)
    for level in dict.fromkeys(levels):
        if level not in views:
            raise EvaluationError(f"no gallery view was encoded for level {level!r}")
        rows = [i for i, lv in enumerate(levels) if lv == level]
        out[rows] = (queries[rows] @ views[level].T).numpy()
    return np.clip(out, -1.0, 1.0)
