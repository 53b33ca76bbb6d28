"""The session's final ranking (docs/methods.md §1.3, with the session's marks).

Order: confirmed items (by the last score they received); the last step's candidates ranked by its scores
(the final list Rank(t^{n−1}, G^{n−1})); then the items eliminated at step n−2, …, then at step 0 (later
eliminations first), each block by the scores of the step that eliminated it (items removed by a step's
filters count as eliminated there); then items never ranked (rejected), by gallery row. Every gallery row
appears exactly once, so R@k, mAP and mSD stay defined."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.retrieval.search.selection import rank
from engine.retrieval.search.step import StepResult

CONFIRMED = -2
UNRANKED = -1


@dataclass(frozen=True)
class FinalRanking:
    rows: np.ndarray  # permutation of all gallery rows
    scores: np.ndarray  # score from the step that placed each row (NaN when unranked)
    stage: np.ndarray  # that step's index; CONFIRMED or UNRANKED (rejected / never a candidate)
    item_ids: Sequence[str]

    @property
    def ids(self) -> list[str]:
        return [self.item_ids[int(r)] for r in self.rows]


def final_ranking(steps: Sequence[StepResult], gallery_size: int, confirmed_rows: np.ndarray,
                  item_ids: Sequence[str]) -> FinalRanking:
    blocks: list[tuple[np.ndarray, np.ndarray, int]] = []
    last_score = np.full(gallery_size, np.nan, dtype=np.float64)
    for step in steps:
        last_score[step.rows] = step.scores
        last_score[step.filtered_rows] = step.filtered_scores
    if confirmed_rows.size:
        pinned_scores = last_score[confirmed_rows]
        known = np.where(np.isnan(pinned_scores), -np.inf, pinned_scores)
        order = rank(confirmed_rows, known)
        blocks.append((confirmed_rows[order], pinned_scores[order], CONFIRMED))
    if steps:
        last = steps[-1]
        rows = np.concatenate([last.rows, last.filtered_rows])
        scores = np.concatenate([last.scores, last.filtered_scores])
        order = rank(rows, scores)
        blocks.append((rows[order], scores[order], last.index))
    for j in range(len(steps) - 2, -1, -1):
        step = steps[j]
        rows = np.concatenate([step.rows, step.filtered_rows])
        scores = np.concatenate([step.scores, step.filtered_scores])
        dropped = ~np.isin(rows, step.kept, assume_unique=True)
        rows, scores = rows[dropped], scores[dropped]
        order = rank(rows, scores)
        blocks.append((rows[order], scores[order], step.index))
    placed = np.zeros(gallery_size, dtype=bool)
    out_rows, out_scores, out_stage = [], [], []
    for rows, scores, stage in blocks:
        fresh = ~placed[rows]  # each block holds distinct rows; skip those an earlier block placed
        fresh_rows = rows[fresh]
        placed[fresh_rows] = True
        out_rows.append(fresh_rows)
        out_scores.append(scores[fresh].astype(np.float64))
        out_stage.append(np.full(fresh_rows.size, stage, dtype=np.int32))
    rest = np.flatnonzero(~placed)
    out_rows.append(rest)
    out_scores.append(np.full(rest.size, np.nan))
    out_stage.append(np.full(rest.size, UNRANKED, dtype=np.int32))
    return FinalRanking(np.concatenate(out_rows), np.concatenate(out_scores), np.concatenate(out_stage), item_ids)

