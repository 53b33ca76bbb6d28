"""App state: the objects widgets listen to (``AppState``), the query the panel builds (``QuerySpec``), the
timeline's rows, "add next" sentences and the replay of a stored case's steps."""

from app.jobs import StepOutcome
from app.state.app_state import AppState
from app.state.query_spec import DEFAULT_RHO, KEEP_KINDS, KeepRule, QuerySpec, describe_keep
from app.state.replay import ReplayOutcome, ReplayStep, apply_marks, path_to, replay, replay_plan, step_query
from app.state.suggestions import KEY_LABELS, append_sentence, label, suggestion_sentence, value_label
from app.state.timeline_rows import TimelineRow, query_summary, timeline_rows
from app.state.working_state import Filters, QueryInputs, WorkingState

__all__ = [
    "DEFAULT_RHO",
    "KEEP_KINDS",
    "KEY_LABELS",
    "AppState",
    "Filters",
    "KeepRule",
    "QueryInputs",
    "QuerySpec",
    "ReplayOutcome",
    "ReplayStep",
    "StepOutcome",
    "TimelineRow",
    "append_sentence",
    "apply_marks",
    "describe_keep",
    "label",
    "path_to",
    "query_summary",
    "replay",
    "replay_plan",
    "step_query",
    "suggestion_sentence",
    "timeline_rows",
    "value_label",
    "WorkingState",
]
