"""Errors a search session raises; each names the input and the problem."""

from __future__ import annotations

from engine.retrieval.encoding.errors import QueryInputError, SearchError

__all__ = ["NoCandidatesError", "QueryInputError", "SearchError", "SessionStateError"]


class NoCandidatesError(SearchError):
    """The step has nothing left to rank (every item was eliminated, rejected or filtered out)."""


class SessionStateError(SearchError):
    """An operation does not fit the session's state (undo with no steps, branch from a missing step)."""
