"""Progressive search: steps, Top-k reduction, filters, marks, find-similar, undo/branch, final ranking."""

from engine.search.encoder import QueryEncoder
from engine.search.errors import NoCandidatesError, QueryInputError, SearchError, SessionStateError
from engine.search.opening import open_search, query_encoder
from engine.search.query import StepQuery
from engine.search.ranking import FinalRanking
from engine.search.session import SearchSession
from engine.search.step import StepResult

__all__ = [
    "FinalRanking",
    "NoCandidatesError",
    "QueryEncoder",
    "QueryInputError",
    "SearchError",
    "SearchSession",
    "SessionStateError",
    "StepQuery",
    "StepResult",
    "open_search",
    "query_encoder",
]
