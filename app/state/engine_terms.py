"""The engine's terms the views show, named once for them so that no view imports the engine
(docs/architecture.md, "Inside app/"): the ontology of attributes and its granularity levels (docs/methods.md
§1.1), the query modalities the query panel can switch on (the engine's registry), the gallery views a sketch
or IR query ranks by, and how times are written and read on screen."""

from __future__ import annotations

from engine.kernel.ontology import LEVELS, ONTOLOGY
from engine.kernel.query_modalities import combinable
from engine.kernel.timefmt import read_screen_time, screen_time, screen_time_short
from engine.perception.appearance.views import APPEARANCE_GREY_VIEW
from engine.retrieval.encoding.views import IMAGE_QUERY_VIEW

__all__ = [
    "APPEARANCE_GREY_VIEW",
    "IMAGE_QUERY_VIEW",
    "LEVELS",
    "ONTOLOGY",
    "QUERY_CONTROLS",
    "level_label",
    "read_screen_time",
    "screen_time",
    "screen_time_short",
]

#: the query modalities that combine in one query (text, sketch, IR), each with its control's label and prompt
QUERY_CONTROLS = tuple(combinable())


def level_label(name: str) -> str:
    """The words of a granularity level ("C" → its label in the ontology)."""
    return next(level.label for level in ONTOLOGY.levels if level.name == name)
