"""The gallery views an appearance network makes: its name for each, and whether the crop is made colourless
first. Retrieval routes queries to them (``engine.retrieval.encoding.views``)."""

from __future__ import annotations

APPEARANCE_VIEW = "appearance"
APPEARANCE_GREY_VIEW = "appearance:grey"
#: The views an appearance network makes, each from the crop as ``grey`` says (False: the crop as stored).
APPEARANCE_VIEWS: dict[str, bool] = {APPEARANCE_VIEW: False, APPEARANCE_GREY_VIEW: True}
