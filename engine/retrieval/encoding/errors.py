"""Errors of a query's input, raised while encoding it or picking its view; each names the input and the problem."""

from __future__ import annotations


class SearchError(ValueError):
    """Base class for search-session errors."""


class QueryInputError(SearchError):
    """A step query is empty, contradictory, or names a file that cannot be read."""
