"""Which gallery view a query searches: decided here and nowhere else (docs/methods.md §1.9).

View names (the gallery stores one float16 matrix per name):

- ``text:<level>`` for level in UC, C, M, F, UF: image vectors from that level's granularity expert, searched by
  text-only queries of that level (CMAM: score = cos(v^g, t), g = the query's level);
- ``rgb``: image vectors at the image-query level, searched by sketch, IR and fused queries (FlexiReID:
  every fused mode is matched against v^rgb), by text when the gallery has no per-level views, and by a
  gallery item used as the example ("find similar") that names no scenario;
- ``reid:<scenario>`` for the Uni-AT scenarios (DT-ST … AD-LT): re-identification features, searched by a
  find-similar query that names its scenario. Without a scenario find-similar prefers ``rgb``: on the shipped
  checkpoint it ranks at least as well as the scenario tokens in all six any-time scenarios of the unseen world
  (mAP) and better on the real clips' crops (docs/training-notes.md, "Find similar searches the gallery
  embedding"); a gallery without ``rgb`` falls back to its first ``reid:`` view;
- ``appearance``: vectors from a re-identification network (``engine.perception.appearance``: a shipped one or a
user's),
  not from the checkpoint. Find-similar searches it first when the gallery has it (unless the query names a
  scenario);
- ``appearance:grey``: the same network's vectors of each crop converted to grey
(``engine.perception.appearance.grey``),
  stored beside ``appearance``. A sketch or IR query on a gallery that has it is ranked by the same network's
  vector of the query image converted to grey (encoding ``appearance``: the checkpoint is not used), and so is
  a find-similar step whose example is an infrared item: neither side then carries colour. Without it (built
  worlds) sketch and IR queries search ``rgb`` as before (docs/real-footage.md, "Sketch and infrared on
  footage").

``biometrics`` is not a stored matrix: a find-similar step whose person may have changed clothes mixes the
``appearance`` view's similarity (``rgb`` on a gallery without it) with the stored attribute evidence
(``engine.retrieval.search.outfit_change``); steps record it as their view.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from engine.index.errors import GalleryMismatchError
from engine.kernel.ontology import LEVELS
from engine.perception.appearance.views import APPEARANCE_GREY_VIEW, APPEARANCE_VIEW
from engine.retrieval.encoding.errors import QueryInputError

TEXT_PREFIX = "text:"
IMAGE_QUERY_VIEW = "rgb"
REID_PREFIX = "reid:"
BIOMETRICS_VIEW = "biometrics"


def text_view(level: str) -> str:
    if level not in LEVELS:
        raise QueryInputError(f"level must be one of {list(LEVELS)}, got {level!r}")
    return TEXT_PREFIX + level


def reid_view(scenario: str) -> str:
    if not isinstance(scenario, str) or not scenario:
        raise QueryInputError(f"scenario must be a non-empty string, got {scenario!r}")
    return REID_PREFIX + scenario


def gallery_views(dim: int, *, levels: Iterable[str] = LEVELS, image: bool = True,
                  scenarios: Iterable[str] = (), reid_dim: int | None = None) -> dict[str, int]:
    """The views an ingest should store for a model: ``{name: dimension}``."""
    views = {text_view(level): dim for level in levels}
    if image:
        views[IMAGE_QUERY_VIEW] = dim
    for scenario in scenarios:
        views[reid_view(scenario)] = reid_dim or dim
    return views


@dataclass(frozen=True)
class Route:
    """The view a query searches and how its vector is made: ``text``, ``fused``, ``example`` (``biometrics``:
    the example's ``rgb`` vector, mixed with the stored evidence) or ``appearance`` (the appearance network's
    vector of the query image in grey)."""

    view: str
    encoding: str


def route(*, has_text: bool, has_image: bool, example: bool, scenario: str | None, level: str | None,
          available: Mapping[str, int], outfit_changed: bool = False, example_infrared: bool = False) -> Route:
    """Pick the view for a query (see module docstring); raises ``GalleryMismatchError`` if the gallery lacks it.
    ``example_infrared``: the find-similar example is an infrared item."""
    if example and outfit_changed:
        if IMAGE_QUERY_VIEW not in available and APPEARANCE_VIEW not in available:
            raise GalleryMismatchError(f"find similar across an outfit change mixes in view {APPEARANCE_VIEW!r} or "
                                       f"{IMAGE_QUERY_VIEW!r}, which the gallery lacks (it has {list(available)})")
        return Route(BIOMETRICS_VIEW, "biometrics")
    if example:
        if scenario is not None:
            view = reid_view(scenario)
            if view not in available:
                present = [v for v in available if v.startswith(REID_PREFIX)]
                raise GalleryMismatchError(f"find-similar scenario {scenario!r} needs view {view!r}; "
                                           f"the gallery has {present or 'no re-identification views'}")
            return Route(view, "example")
        if example_infrared and APPEARANCE_GREY_VIEW in available:
            return Route(APPEARANCE_GREY_VIEW, "example")
        if APPEARANCE_VIEW in available:
            return Route(APPEARANCE_VIEW, "example")
        if IMAGE_QUERY_VIEW in available:
            return Route(IMAGE_QUERY_VIEW, "example")
        reid = [v for v in available if v.startswith(REID_PREFIX)]
        if reid:
            return Route(reid[0], "example")
        raise GalleryMismatchError(f"find-similar needs a {REID_PREFIX}<scenario> or {IMAGE_QUERY_VIEW!r} view; "
                                   f"the gallery has {list(available)}")
    if has_image:
        if APPEARANCE_GREY_VIEW in available:
            return Route(APPEARANCE_GREY_VIEW, "appearance")
        if IMAGE_QUERY_VIEW not in available:
            raise GalleryMismatchError(f"sketch and IR queries search view {APPEARANCE_GREY_VIEW!r} or "
                                       f"{IMAGE_QUERY_VIEW!r}; the gallery has neither (it has {list(available)})")
        return Route(IMAGE_QUERY_VIEW, "fused")
    if has_text:
        if level is not None and text_view(level) in available:
            return Route(text_view(level), "text")
        if IMAGE_QUERY_VIEW in available:
            return Route(IMAGE_QUERY_VIEW, "fused")
        raise GalleryMismatchError(f"text queries of level {level!r} search view {TEXT_PREFIX}{level}, which the "
                                   f"gallery lacks (it has {list(available)})")
    raise QueryInputError("the query is empty: give text, a sketch, an IR image or an example item")
