"""A user's own appearance (re-identification) network as an extra gallery view named ``appearance``
(``engine.encoding.views.APPEARANCE_VIEW``): the ONNX network and its normalisation, and the view added to or
recomputed in an existing gallery from its stored crops (``engine.appearance.gallery_view``). Lineup ships
no such network."""

from engine.appearance.errors import AppearanceModelError
from engine.appearance.network import AppearanceNetwork, read_layout, same_model
from engine.appearance.normalisation import Normalisation, parse_normalisation

__all__ = ["AppearanceModelError", "AppearanceNetwork", "Normalisation", "parse_normalisation", "read_layout",
           "same_model"]
