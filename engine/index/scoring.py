"""Exact inner products of one query with gallery rows, cost proportional to the rows scored.

Uses FAISS's SIMD kernels: ``fvec_inner_products_ny`` streams a contiguous range, ``fvec_inner_products_by_idx``
gathers a row subset. A subset is scored per block of 4096 gallery rows: where at least 30 % of a block is
wanted the whole block is streamed and the wanted scores picked (a streamed row costs about a third of a
gathered one), elsewhere only the wanted rows are gathered; a subset never costs more than a full scan.

The kernels run on this module's own threads, each limited to one OpenMP thread (an OpenMP team per call costs
milliseconds on a busy machine, more than scoring thousands of rows); FAISS releases the GIL, so large inputs
are split over the threads."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

import faiss
import numpy as np

_WORKERS = min(8, os.cpu_count() or 1)
_MIN_ROWS_PER_THREAD = 32_768
_BLOCK_BITS = 12  # blocks of 4096 rows
_DENSE = 0.3


def _single_openmp_thread() -> None:
    faiss.omp_set_num_threads(1)  # per-thread setting: affects only this pool's threads


@lru_cache(maxsize=1)
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="lineup-score",
                              initializer=_single_openmp_thread)


def _parts(n: int) -> list[tuple[int, int]]:
    workers = min(_WORKERS, max(1, n // _MIN_ROWS_PER_THREAD))
    bounds = np.linspace(0, n, workers + 1).astype(np.int64)
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]


def _run(parts: list[tuple[int, int]], job) -> None:
    if len(parts) == 1:  # small input: run here, with this thread limited to one OpenMP thread meanwhile
        previous = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(1)
        try:
            job(*parts[0])
        finally:
            faiss.omp_set_num_threads(previous)
        return
    for future in [_pool().submit(job, a, b) for a, b in parts]:
        future.result()


def inner_products(matrix: np.ndarray, query: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Scores ``matrix[rows] @ query`` (all rows when ``rows`` is None) as float32.

    ``matrix``: C-contiguous float32 [N, d]; ``query``: [d]; ``rows``: integer row numbers in [0, N)."""
    if matrix.dtype != np.float32 or not matrix.flags.c_contiguous:
        raise ValueError("inner_products needs a C-contiguous float32 matrix")
    dim = matrix.shape[1]
    q = np.ascontiguousarray(query, dtype=np.float32).reshape(-1)
    if q.shape[0] != dim:
        raise ValueError(f"query has dimension {q.shape[0]}, the matrix has {dim}")
    if rows is None:
        out = np.empty(matrix.shape[0], dtype=np.float32)
        _scan(matrix, q, out, 0, matrix.shape[0])
        return out
    ids = np.ascontiguousarray(rows, dtype=np.int64)
    if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= matrix.shape[0]):
        raise IndexError(f"row numbers must lie in [0, {matrix.shape[0]})")
    block = 1 << _BLOCK_BITS
    block_of = ids >> _BLOCK_BITS
    dense_block = np.bincount(block_of, minlength=-(-matrix.shape[0] // block)) >= _DENSE * block
    if dense_block.any():
        streamed = np.empty(matrix.shape[0], dtype=np.float32)  # only the dense blocks' pages get touched
        edges = np.flatnonzero(np.diff(np.concatenate([[False], dense_block, [False]]).astype(np.int8)))
        for first, last in zip(edges[::2], edges[1::2], strict=True):
            _scan(matrix, q, streamed, int(first) * block, min(int(last) * block, matrix.shape[0]))
        dense = dense_block[block_of]
        if dense.all():
            return streamed[ids]
        out = np.empty(ids.shape[0], dtype=np.float32)
        out[dense] = streamed[ids[dense]]
        sparse = np.flatnonzero(~dense)
        if sparse.size:
            out[sparse] = _gather(matrix, q, ids[sparse])
        return out
    return _gather(matrix, q, ids)


def _scan(matrix: np.ndarray, q: np.ndarray, out: np.ndarray, start: int, stop: int) -> None:
    """out[start:stop] = matrix[start:stop] @ q."""
    dim = matrix.shape[1]

    def contiguous(a: int, b: int) -> None:
        a, b = start + a, start + b
        faiss.fvec_inner_products_ny(faiss.swig_ptr(out[a:b]), faiss.swig_ptr(q), faiss.swig_ptr(matrix[a:b]),
                                     dim, b - a)

    _run(_parts(stop - start), contiguous)


def _gather(matrix: np.ndarray, q: np.ndarray, ids: np.ndarray) -> np.ndarray:
    dim = matrix.shape[1]
    out = np.empty(ids.shape[0], dtype=np.float32)

    def subset(a: int, b: int) -> None:
        faiss.fvec_inner_products_by_idx(faiss.swig_ptr(out[a:b]), faiss.swig_ptr(q), faiss.swig_ptr(matrix),
                                         faiss.swig_ptr(ids[a:b]), dim, 1, b - a)

    _run(_parts(out.shape[0]), subset)
    return out


def to_float32(vectors: np.ndarray) -> np.ndarray:
    """A C-contiguous float32 copy of float16 rows, converted in parallel chunks."""
    out = np.empty(vectors.shape, dtype=np.float32)

    def convert(a: int, b: int) -> None:
        out[a:b] = vectors[a:b]

    _run(_parts(vectors.shape[0]), convert)
    return out
