"""App state: the objects widgets listen to (``AppState``), the query the panel builds (``QuerySpec``), the
timeline's rows, "add next" sentences and the replay of a stored case's steps.

The parts of the state are plain Python and import no Qt (docs/architecture.md); ``AppState``, the Qt facade
over them, and the names re-exported from the background jobs (``app.jobs``, which run on Qt's thread pool)
are imported on first use, so importing a part does not load Qt.
"""

from importlib import import_module
from typing import TYPE_CHECKING

from app.state.query_spec import DEFAULT_RHO, KEEP_KINDS, KeepRule, QuerySpec, describe_keep
from app.state.replay import ReplayStep, path_to, replay_plan, step_query
from app.state.suggestions import KEY_LABELS, append_sentence, label, suggestion_sentence, value_label
from app.state.timeline_rows import TimelineRow, query_summary, timeline_rows
from app.state.working_state import Filters, QueryInputs, WorkingState

if TYPE_CHECKING:
    from app.jobs import ReplayOutcome, StepOutcome, apply_marks, replay
    from app.state.app_state import AppState

# ``replay`` names the job's function (``app.jobs.rerun_steps.replay``), as it always has, not the submodule
# ``app.state.replay`` that importing it bound here.
globals().pop("replay", None)

#: Names that load Qt, imported when first asked for: name -> module.
_ON_FIRST_USE = {"AppState": "app.state.app_state", "ReplayOutcome": "app.jobs", "StepOutcome": "app.jobs",
                 "apply_marks": "app.jobs", "replay": "app.jobs"}


def __getattr__(name: str) -> object:
    if name not in _ON_FIRST_USE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_ON_FIRST_USE[name]), name)
    globals()[name] = value
    return value


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
