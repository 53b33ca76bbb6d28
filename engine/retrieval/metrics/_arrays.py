"""Input handling shared by the metrics: numpy/torch conversion, shape checks, ranking in row chunks."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

#: Elements of a Q×G block handled at once (bounds the working memory of the ranking).
CHUNK_ELEMENTS = 1 << 22


class MetricInputError(ValueError):
    """A metric received an input of the wrong shape, dtype or content."""


def as_array(name: str, value, dtype=None) -> np.ndarray:
    """numpy view of a numpy array or torch tensor (detached, on the CPU)."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        value = value.detach().cpu().numpy()
    array = np.asarray(value)
    if dtype is not None:
        array = array.astype(dtype, copy=False)
    return array


def as_matrix(name: str, value, dtype=None, shape: tuple[int, int] | None = None) -> np.ndarray:
    array = as_array(name, value, dtype)
    if array.ndim != 2:
        raise MetricInputError(f"{name} must be a 2-D Q×G matrix, got shape {array.shape}")
    if shape is not None and array.shape != shape:
        raise MetricInputError(f"{name} must have shape {shape}, got {array.shape}")
    return array


def as_bool_matrix(name: str, value, shape: tuple[int, int]) -> np.ndarray:
    array = as_matrix(name, value, shape=shape)
    if array.dtype != np.bool_:
        if not np.isin(array, (0, 1)).all():
            raise MetricInputError(f"{name} must be boolean (or 0/1)")
        array = array.astype(np.bool_)
    return array


def stable_order(similarity: np.ndarray) -> np.ndarray:
    """Per row, gallery indices by descending similarity; ties keep the lower gallery index first."""
    if np.isnan(similarity).any():
        raise MetricInputError("similarity contains NaN; it cannot be ranked")
    return np.argsort(-similarity, axis=1, kind="stable")


def chunk_rows(n_columns: int, rows: int | None = None) -> int:
    if rows is not None:
        if rows < 1:
            raise MetricInputError(f"chunk_rows must be at least 1, got {rows}")
        return rows
    return max(1, CHUNK_ELEMENTS // max(1, n_columns))


@dataclass(frozen=True)
class RankedChunk:
    """Rows ``start:stop`` of the ranked lists: similarity, relevance and validity in rank order."""

    start: int
    stop: int
    scores: np.ndarray
    relevant: np.ndarray
    valid: np.ndarray


def iter_ranked(
    similarity,
    relevance,
    valid=None,
    order=None,
    rows_per_chunk: int | None = None,
) -> Iterator[RankedChunk]:
    """Rank each query's gallery (stable sort, or the explicit ``order``) and yield row chunks.

    ``similarity``: Q×G scores indexed by gallery item; ``relevance``: Q×G bool; ``valid``: optional
    Q×G bool, items outside it are dropped from the list (filtered protocols); ``order``: optional Q×G
    permutation per row to use instead of sorting by ``similarity``.
    """
    scores = as_matrix("similarity", similarity)  # converted to float64 chunk by chunk
    shape = scores.shape
    relevant = as_bool_matrix("relevance", relevance, shape)
    allowed = None if valid is None else as_bool_matrix("valid", valid, shape)
    explicit = None if order is None else as_matrix("order", order, shape=shape)
    if explicit is not None and not np.issubdtype(explicit.dtype, np.integer):
        raise MetricInputError(f"order must hold integer gallery indices, got dtype {explicit.dtype}")
    step = chunk_rows(shape[1], rows_per_chunk)
    for start in range(0, shape[0], step):
        stop = min(start + step, shape[0])
        block = scores[start:stop].astype(np.float64)
        if explicit is None:
            ranked = stable_order(block)
        else:
            ranked = explicit[start:stop].astype(np.int64, copy=False)
            expected = np.arange(shape[1])
            if not (np.sort(ranked, axis=1) == expected).all():
                raise MetricInputError(
                    f"order rows {start}..{stop - 1} are not permutations of 0..{shape[1] - 1}"
                )
        chunk_valid = (
            np.ones(ranked.shape, dtype=np.bool_)
            if allowed is None
            else np.take_along_axis(allowed[start:stop], ranked, axis=1)
        )
        yield RankedChunk(
            start=start,
            stop=stop,
            scores=np.take_along_axis(block, ranked, axis=1),
            relevant=np.take_along_axis(relevant[start:stop], ranked, axis=1),
            valid=chunk_valid,
        )
