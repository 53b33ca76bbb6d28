"""Progressive search: steps, Top-k reduction, filters, marks, find-similar, undo/branch, final ranking."""

from engine.retrieval.search.encoder import QueryEncoder
from engine.retrieval.search.errors import NoCandidatesError, QueryInputError, SearchError, SessionStateError
from engine.retrieval.search.opening import open_search, query_encoder
from engine.retrieval.search.query import StepQuery
from engine.retrieval.search.ranking import FinalRanking
from engine.retrieval.search.session import SearchSession
from engine.retrieval.search.step import StepResult

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
