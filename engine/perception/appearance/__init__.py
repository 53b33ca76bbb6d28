"""An appearance (re-identification) network as the gallery views named ``appearance`` and ``appearance:grey``
(``engine.perception.appearance.views.APPEARANCE_VIEWS``): a shipped Open Model Zoo network
(``engine.perception.appearance.shipped``,
docs/pretrained-models.md) or a user's ONNX network and its normalisation, the grey side that sketch and IR
queries search (``engine.perception.appearance.grey``), and the views added to or recomputed in an existing gallery from
its stored crops (``engine.ingest.appearance_views``)."""

from engine.perception.appearance.errors import AppearanceModelError
from engine.perception.appearance.network import AppearanceNetwork, read_layout, same_model
from engine.perception.appearance.normalisation import Normalisation, parse_normalisation
from engine.perception.appearance.shipped import ShippedAppearanceNetwork, appearance_network

__all__ = ["AppearanceModelError", "AppearanceNetwork", "Normalisation", "ShippedAppearanceNetwork",
           "appearance_network", "parse_normalisation", "read_layout", "same_model"]
