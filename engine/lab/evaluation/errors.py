"""The one error type of the evaluation package."""

from __future__ import annotations


class EvaluationError(ValueError):
    """An evaluation that cannot run as asked: wrong protocol for the source, a benchmark without queries,
    a model that lacks the component a protocol needs. The message names the input and the problem."""
