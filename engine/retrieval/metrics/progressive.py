"""Progressive granularity assessment (docs/methods.md §1.3).

G⁰ = the (valid) gallery; for j = 0..n−2: rank G^j by step j's scores and keep the top
k^j = ⌈ρ·|G^j|⌉ (``reading="reduce"``: ⌈(1−ρ)·|G^j|⌉); the last step ranks G^{n−1}. The final
permutation is that last ranking, then the items dropped at step n−2, …, then those dropped at step 0,
each dropped block in the order of the step that dropped it. Every ranking is a stable descending sort
with the gallery index breaking ties. For mSD each item carries the score of the step that last ranked
it (its dropping step, or the last step for survivors).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from engine.kernel.keep_rules import DEFAULT_RHO
from engine.retrieval.metrics._arrays import MetricInputError, as_bool_matrix, as_matrix, chunk_rows
from engine.retrieval.metrics.retrieval import RetrievalReport
from engine.retrieval.metrics.summary import evaluate_all, summary_from

#: score_fn(step, query_index, candidate_indices) -> one score per candidate.
StepScorer = Callable[[int, int, np.ndarray], np.ndarray]


def keep_count(n_candidates: int, rho: float = DEFAULT_RHO, reading: str = "keep") -> int:
    """k = ⌈ρ·n⌉ ("keep") or ⌈(1−ρ)·n⌉ ("reduce"), at least 1 for a non-empty set."""
    if not 0 < rho <= 1:
        raise MetricInputError(f"rho must lie in (0, 1], got {rho}")
    if reading not in ("keep", "reduce"):
        raise MetricInputError(f"reading must be 'keep' or 'reduce', got {reading!r}")
    fraction = rho if reading == "keep" else 1.0 - rho
    if n_candidates <= 0:
        return 0
    return min(n_candidates, max(1, math.ceil(round(fraction * n_candidates, 9))))


@dataclass(frozen=True)
class ProgressiveResult:
    order: np.ndarray  # Q×G: valid items in progressive order, then invalid ones by gallery index
    stage_scores: np.ndarray  # Q×G by gallery index: score of the step that last ranked it (NaN if invalid);
    # float32 for float32 steps, float64 for float64 steps or a score_fn
    last_step: np.ndarray  # Q×G by gallery index: that step's index (−1 if invalid)
    candidate_counts: np.ndarray  # Q×n: |G^j| per step


def _score_block(steps, step: int, rows: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    if callable(steps):
        scores = [
            np.asarray(steps(step, int(row), cand), dtype=np.float64)
            for row, cand in zip(rows, candidates, strict=True)
        ]
        for row, (values, cand) in enumerate(zip(scores, candidates, strict=True)):
            if values.shape != cand.shape:
                raise MetricInputError(
                    f"score_fn returned {values.shape} scores for {cand.shape[0]} "
                    f"candidates (step {step}, query {int(rows[row])})"
                )
        block = np.stack(scores)
    else:
        block = np.take_along_axis(steps[step][rows], candidates, axis=1).astype(np.float64)
    if np.isnan(block).any():
        raise MetricInputError(f"step {step} scores contain NaN on candidate items")
    return block


def _run_block(steps, n_steps: int, rows: np.ndarray, candidates: np.ndarray, rho: float, reading: str, out):
    """Progressive ranking of queries ``rows`` that share the candidate count (candidates sorted by index)."""
    order, stage_scores, last_step, counts = out
    dropped_blocks = []
    for step in range(n_steps):
        counts[rows, step] = candidates.shape[1]
        scores = _score_block(steps, step, rows, candidates)
        rank = np.argsort(-scores, axis=1, kind="stable")
        ranked = np.take_along_axis(candidates, rank, axis=1)
        stage_scores[rows[:, None], ranked] = np.take_along_axis(scores, rank, axis=1)
        last_step[rows[:, None], ranked] = step
        if step == n_steps - 1:
            dropped_blocks.append(ranked)
            break
        keep = keep_count(candidates.shape[1], rho, reading)
        dropped_blocks.append(ranked[:, keep:])
        candidates = np.sort(ranked[:, :keep], axis=1)
    final = np.concatenate(dropped_blocks[::-1], axis=1)
    order[rows, : final.shape[1]] = final


def progressive_ranking(
    steps: Sequence | StepScorer,
    rho: float = DEFAULT_RHO,
    valid=None,
    reading: str = "keep",
    n_steps: int | None = None,
    shape: tuple[int, int] | None = None,
) -> ProgressiveResult:
    """Run the protocol for every query.

    ``steps``: n Q×G score matrices (numpy or torch), one per query-chain step, or a ``StepScorer``
    called per step and query on the surviving candidates (then give ``n_steps`` and ``shape`` = (Q, G)).
    ``valid``: optional Q×G mask restricting G⁰.
    """
    if callable(steps):
        if n_steps is None or shape is None:
            raise MetricInputError("a score_fn needs n_steps and shape=(queries, gallery)")
        matrices = steps
    else:
        matrices = [as_matrix(f"steps[{j}]", s) for j, s in enumerate(steps)]
        if not matrices:
            raise MetricInputError("steps is empty: give at least one step")
        shape = matrices[0].shape
        for j, matrix in enumerate(matrices):
            if matrix.shape != shape:
                raise MetricInputError(f"steps[{j}] has shape {matrix.shape}, steps[0] has {shape}")
        if n_steps is not None and n_steps != len(matrices):
            raise MetricInputError(f"n_steps={n_steps} but {len(matrices)} step matrices were given")
        n_steps = len(matrices)
    if n_steps < 1:
        raise MetricInputError(f"n_steps must be at least 1, got {n_steps}")
    keep_count(1, rho, reading)  # validates rho and reading
    n_queries, n_gallery = shape
    allowed = None if valid is None else as_bool_matrix("valid", valid, shape)

    score_dtype = np.float64 if callable(matrices) else np.result_type(np.float32, *matrices)
    order = np.empty(shape, dtype=np.int32 if n_gallery < 2**31 else np.int64)
    stage_scores = np.full(shape, np.nan, dtype=score_dtype)
    last_step = np.full(shape, -1, dtype=np.int16)
    counts = np.zeros((n_queries, n_steps), dtype=np.int64)
    out = (order, stage_scores, last_step, counts)
    if allowed is None:
        step_rows = chunk_rows(n_gallery)
        for start in range(0, n_queries, step_rows):
            rows = np.arange(start, min(start + step_rows, n_queries))
            candidates = np.broadcast_to(np.arange(n_gallery), (rows.size, n_gallery)).copy()
            _run_block(matrices, n_steps, rows, candidates, rho, reading, out)
    else:
        for row in range(n_queries):
            members = np.flatnonzero(allowed[row])
            order[row, members.size :] = np.flatnonzero(~allowed[row])
            if members.size:
                _run_block(matrices, n_steps, np.array([row]), members[None, :], rho, reading, out)
    return ProgressiveResult(
        order=order, stage_scores=stage_scores, last_step=last_step, candidate_counts=counts
    )


def evaluate_progressive(
    steps: Sequence | StepScorer,
    relevance,
    rho: float = DEFAULT_RHO,
    valid=None,
    reading: str = "keep",
    cosine: bool = True,
    n_steps: int | None = None,
) -> tuple[ProgressiveResult, RetrievalReport, dict[str, float]]:
    """Progressive permutation, its ranking report and the summary dict (R@1/5/10, mAP, mINP, mSD)."""
    relevant = as_matrix("relevance", relevance)
    result = progressive_ranking(steps, rho, valid, reading, n_steps, relevant.shape)
    report, sd = evaluate_all(result.stage_scores, relevant, valid, result.order, cosine)
    summary = summary_from(report, sd)
    return result, report, summary
