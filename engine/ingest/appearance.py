"""Ingest with an appearance network: ``WithAppearance(encoder, network)`` is an ``Encoder`` that gives the
checkpoint's views and the appearance views (``engine.perception.appearance.views.APPEARANCE_VIEWS``: ``appearance``
and, from the crops in grey, ``appearance:grey``; ``engine.perception.appearance``: a shipped re-identification
network or a user's ONNX file) for every batch of crops. An existing gallery made before the grey view existed
keeps only ``appearance`` (``lineup gallery rebuild --appearance`` adds the grey view).

It records the network's fingerprint for each of those views as ``view_models`` (stored by the gallery when it
is created, and checked against an existing gallery's record by ``check_view_models``).

``with_default_appearance`` decides the view when the command line names no ONNX file (``--appearance``
``auto``, ``none`` or a preset): a new gallery of footage, image folders or person crops gets the shipped
``balanced`` network under ``auto``; a new gallery of built worlds gets none (``AUTO_APPEARANCE``: on rendered
people the checkpoint's own ``rgb`` view finds the same person better, docs/pretrained-models.md); an existing
gallery keeps what it has (a shipped network recorded in it is loaded again by name)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engine.index import Gallery
from engine.index.writer_lock import is_empty_folder
from engine.ingest.appearance_views import check_view_model
from engine.ingest.encoder import Encoder
from engine.ingest.errors import IngestError
from engine.perception.appearance.grey import appearance_views
from engine.perception.appearance.shipped import appearance_network as make_network
from engine.perception.appearance.shipped import network_of_record
from engine.perception.appearance.views import APPEARANCE_GREY_VIEW, APPEARANCE_VIEW, APPEARANCE_VIEWS
from engine.perception.pretrained.registry import APPEARANCE_PRESETS, DEFAULT_APPEARANCE, shipped

APPEARANCE_CHOICES: tuple[str, ...] = ("auto", "none", *APPEARANCE_PRESETS)
#: The network ``auto`` gives a new gallery, by kind of source (None: no appearance view). A gallery with any
#: source that is not a built world gets it.
AUTO_APPEARANCE: dict[str, str | None] = {"video": DEFAULT_APPEARANCE, "images": DEFAULT_APPEARANCE,
                                          "crops": DEFAULT_APPEARANCE, "world": None}


class WithAppearance:
    """``encoder``'s views plus the appearance views from ``network`` (``grey=False``: ``appearance`` only, for a
    gallery made before the grey view); the checkpoint's model and fingerprint pass on."""

    def __init__(self, encoder: Encoder, network, *, grey: bool = True) -> None:
        self.appearance_views = tuple(v for v in APPEARANCE_VIEWS if grey or v != APPEARANCE_GREY_VIEW)
        taken = [v for v in self.appearance_views if v in encoder.views]
        if taken:
            raise IngestError(f"the encoder already gives a view named {taken[0]!r}")
        self.encoder = encoder
        self.network = network
        self.views = {**encoder.views, **{view: network.dim for view in self.appearance_views}}
        self.fingerprint = encoder.fingerprint
        self.model = getattr(encoder, "model", None)
        self.view_models = {view: network.fingerprint for view in self.appearance_views}

    def __call__(self, crops: Sequence[np.ndarray], modalities: Sequence[str],
                 resolutions: Sequence[str]) -> Mapping[str, np.ndarray]:
        vectors = dict(self.encoder(crops, modalities, resolutions))
        vectors.update(appearance_views(self.network, crops, self.appearance_views))
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


def auto_appearance(kinds: Collection[str]) -> str | None:
    """The preset ``auto`` gives a new gallery of these kinds of source (None: no appearance view)."""
    picks = {AUTO_APPEARANCE.get(kind, DEFAULT_APPEARANCE) for kind in kinds}
    picks.discard(None)
    return DEFAULT_APPEARANCE if DEFAULT_APPEARANCE in picks else (min(picks) if picks else None)


def with_default_appearance(encoder: Encoder, spec: str, root: str | Path, kinds: Collection[str]) -> Encoder:
    """``encoder`` with the appearance view ``spec`` asks for (see the module docstring); an encoder that already
    carries a network (a user's ONNX file) is returned as it is, less the grey view when an existing gallery
    has only ``appearance``."""
    root = Path(root)
    gallery = None if is_empty_folder(root) else Gallery.open(root, check_indexes=False, finish_changes=True)
    if isinstance(encoder, WithAppearance) and APPEARANCE_GREY_VIEW in encoder.views and gallery is not None \
            and APPEARANCE_VIEW in gallery.views and APPEARANCE_GREY_VIEW not in gallery.views:
        return WithAppearance(encoder.encoder, encoder.network, grey=False)
    if getattr(encoder, "network", None) is not None or APPEARANCE_VIEW in encoder.views:
        return encoder
    if gallery is not None:
        if APPEARANCE_VIEW not in gallery.views:
            if spec not in ("auto", "none"):
                raise IngestError(f"the gallery {root} has no {APPEARANCE_VIEW!r} view; add it with `lineup gallery "
                                  f"rebuild {root} --appearance {spec}` before ingesting into it with --appearance")
            return encoder
        recorded = gallery.view_model(APPEARANCE_VIEW)
        network = network_of_record(recorded)
        if network is None:  # a user's ONNX file made the view: check_view_models names it
            return encoder
        if spec not in ("auto", "none") and shipped(spec).bin_sha256 != network.sha256:
            raise IngestError(f"the gallery {root} holds an {APPEARANCE_VIEW!r} view made by {recorded.get('name')}; "
                              f"--appearance {spec} names another network (recompute the view with `lineup gallery "
                              "rebuild --appearance ... --replace-appearance`)")
        return WithAppearance(encoder, network, grey=APPEARANCE_GREY_VIEW in gallery.views)
    name = auto_appearance(kinds) if spec == "auto" else (None if spec == "none" else spec)
    return encoder if name is None else WithAppearance(encoder, make_network(name))


def appearance_choice(gallery) -> str:
    """In words, which view find-similar searches in ``gallery`` and why (recorded with its ranking settings)."""
    recorded = gallery.view_model(APPEARANCE_VIEW) if APPEARANCE_VIEW in gallery.views else None
    if recorded is None:
        return ("the checkpoint's own view: no appearance view (built worlds get none; on rendered people the "
                "checkpoint finds the same person better, docs/pretrained-models.md)")
    name = recorded.get("version") or recorded.get("file")
    return f"the appearance view, made by {name}"
