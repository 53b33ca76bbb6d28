"""Errors a search session raises; each names the input and the problem."""

from __future__ import annotations


class SearchError(ValueError):
    """Base class for search-session errors."""


class QueryInputError(SearchError):
    """A step query is empty, contradictory, or names a file that cannot be read."""


class NoCandidatesError(SearchError):
    """The step has nothing left to rank (every item was eliminated, rejected or filtered out)."""


class SessionStateError(SearchError):
    """An operation does not fit the session's state (undo with no steps, branch from a missing step)."""
