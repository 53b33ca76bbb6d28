"""The next questions after a step of a session: what the chain's descriptions have fixed, the kept candidates
and their scores, the gallery's evidence and reliabilities handed to ``engine.retrieval.evidence.next_question``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from engine.retrieval.evidence.next_question import (
    TOP,
    WitnessPrior,
    candidate_weights,
    gallery_readings,
    load_prior,
    open_keys,
    rank_questions,
    rank_scored,
    score_keys,
)
from engine.retrieval.evidence.ranking import evidence_for
from engine.retrieval.evidence.reliability import for_domain
from engine.retrieval.search.step import StepResult


def stated_in_chain(steps: Sequence[StepResult]) -> dict[str, str]:
    """The attributes the chain's texts state (the parser's reading of each text step; a later step's value
    wins)."""
    from engine.retrieval.text.parser import parse

    stated: dict[str, str] = {}
    for step in steps:
        if step.query.text:
            stated.update(parse(step.query.text).attributes)
        for key, value in step.query.required.items():
            if value is not None:
                stated[key] = value
    return stated


def kept_scores(step: StepResult) -> tuple[np.ndarray, np.ndarray]:
    """(the step's kept rows, their scores)."""
    at = np.searchsorted(step.rows, step.kept)
    return np.asarray(step.kept, dtype=np.int64), np.asarray(step.scores, dtype=np.float64)[at]


def _readings_after(session, step: StepResult | None, hidden: Iterable[str]):
    """(readings of the open keys, candidate weights) after ``step`` (default the last), or None when the gallery
    holds no evidence, nothing is kept or there is no step."""
    steps = session.steps
    if step is None:
        if not steps:
            return None
        step = steps[-1]
    chain = steps[: step.index + 1] if step.index < len(steps) and steps[step.index] is step else (*steps, step)
    evidence = evidence_for(session.gallery)
    rows, scores = kept_scores(step)
    if evidence is None or rows.size == 0:
        return None
    keys = open_keys(stated_in_chain(chain), hidden)
    recorded = session.gallery.ranking
    reliability = for_domain(None if recorded is None else recorded["domain"])
    return gallery_readings(evidence, rows, keys, session.attribute_sources, reliability), candidate_weights(scores)


def questions_after(session, step: StepResult | None = None, *, hidden: Iterable[str] = (),
                    condition: str | None = None, prior: WitnessPrior | None = None,
                    top: int | None = TOP) -> list[dict[str, Any]]:
    """The best ``top`` questions after ``step`` of ``session`` (default its last step): keys the chain up to
    that step has not stated and ``hidden`` does not name, over the step's kept candidates, for a witness who
    saw the person under ``condition`` (None or ``"ordinary"``: ordinary viewing; else a condition of the prior,
    an unknown one refused naming the choices; see ``engine.retrieval.evidence.next_question``). Empty when the
    gallery holds no evidence or nothing is kept."""
    prior = prior or load_prior()
    condition = prior.condition(condition)
    found = _readings_after(session, step, hidden)
    if found is None:
        return []
    readings, weights = found
    return rank_questions(readings, weights, prior, condition=condition, top=top)


def questions_by_condition(session, step: StepResult | None = None, *, hidden: Iterable[str] = (),
                           prior: WitnessPrior | None = None,
                           top: int | None = TOP) -> dict[str, tuple[dict[str, Any], ...]]:
    """``questions_after`` under every viewing condition of the prior (``WitnessPrior.choices``, ``"ordinary"``
    first), the gallery's evidence read and each key scored once (only the prior's factor differs), so a step
    costs what one condition does and switching the condition later needs no search."""
    prior = prior or load_prior()
    found = _readings_after(session, step, hidden)
    if found is None:
        return {choice: () for choice in prior.choices}
    scored = score_keys(*found)  # the costly part, once
    return {choice: tuple(rank_scored(scored, prior, condition=choice, top=top)) for choice in prior.choices}
