"""Ingest with a user's appearance network: ``WithAppearance(encoder, network)`` is an ``Encoder`` that gives
the checkpoint's views and the ``appearance`` view (``engine.appearance``) for every batch of crops.

It records the network's fingerprint as ``view_models`` (stored by the gallery when it is created, and checked
against an existing gallery's record by ``check_view_models``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from engine.appearance import AppearanceNetwork
from engine.appearance.gallery_view import check_view_model
from engine.encoding.views import APPEARANCE_VIEW
from engine.ingest.encoder import Encoder
from engine.ingest.errors import IngestError


class WithAppearance:
    """``encoder``'s views plus ``appearance`` from ``network``; the checkpoint's model and fingerprint pass on."""

    def __init__(self, encoder: Encoder, network: AppearanceNetwork) -> None:
        if APPEARANCE_VIEW in encoder.views:
            raise IngestError(f"the encoder already gives a view named {APPEARANCE_VIEW!r}")
        self.encoder = encoder
        self.network = network
        self.views = {**encoder.views, APPEARANCE_VIEW: network.dim}
        self.fingerprint = encoder.fingerprint
        self.model = getattr(encoder, "model", None)
        self.view_models = {APPEARANCE_VIEW: network.fingerprint}

    def __call__(self, crops: Sequence[np.ndarray], modalities: Sequence[str],
                 resolutions: Sequence[str]) -> Mapping[str, np.ndarray]:
        vectors = dict(self.encoder(crops, modalities, resolutions))
        vectors[APPEARANCE_VIEW] = self.network.encode(crops)
        return vectors


def check_view_models(gallery, encoder: Any) -> None:
    """Refuse an encoder whose extra views disagree with what ``gallery`` stores: an ``appearance`` view made by
    another file, or a gallery with an ``appearance`` view and an encoder without one."""
    network = getattr(encoder, "network", None)
    if network is not None:
        check_view_model(gallery, network)
        return
    if APPEARANCE_VIEW in gallery.views:
        recorded = gallery.view_model(APPEARANCE_VIEW) or {}
        raise IngestError(f"the gallery {gallery.root} has an {APPEARANCE_VIEW!r} view made by "
                          f"{recorded.get('file', 'an appearance model')}: ingest into it with --appearance "
                          "and that file")
