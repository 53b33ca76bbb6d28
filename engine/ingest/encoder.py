"""The model side of ingest: crops → one unit vector per gallery view.

The views and their names are decided by the search (``engine.retrieval.encoding.views.gallery_views``); for a model:

- ``text:UC`` … ``text:UF``: the image embedding through each granularity level's expert (one
  ``encode_images_all_levels`` pass); a text query searches the view of its level (docs/methods.md §1.9);
- ``rgb``: the embedding at ``granularity.image_query_level``, searched by sketch, IR and fused queries and by
  find-similar;
- ``reid:<scenario>`` for each scenario asked for (default ``AD-LT``, the all-day, clothing-change feature
  that serves any pair of cameras and times): the Uni-AT re-identification feature (``encode_reid``), only
  when the model has scenario tokens; searched by a find-similar query that names the scenario.

Every crop is encoded with its own modality (rgb / ir) and resolution level (the model's resolution
embedding, CRST) by ``engine.retrieval.encoding.model_encoder.encode_items``, the one gallery-side encoder: crops are
BGR uint8 as OpenCV decodes them, one call to the encoder is one model batch. The gallery records
``engine.retrieval.models.checkpoint.model_fingerprint`` and refuses vectors from any other model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np

from engine.ingest.errors import IngestError
from engine.kernel.vocabulary import WORLD_TO_MODEL_RESOLUTION
from engine.retrieval.encoding.model_encoder import DEFAULT_REID_SCENARIOS, encode_items, model_views


def parse_scenarios(text: str) -> tuple[str, ...]:
    """Re-identification views from ``"AD-LT"``, ``"DT-ST,AD-LT"``, ``"all"`` or ``"none"``."""
    from engine.retrieval.models import SCENARIOS

    words = [w.strip() for w in (text or "").split(",") if w.strip()]
    if words == ["all"]:
        return tuple(SCENARIOS)
    if words in ([], ["none"]):
        return ()
    by_name = {s.lower(): s for s in SCENARIOS}
    unknown = [w for w in words if w.lower() not in by_name]
    if unknown:
        raise IngestError(f"unknown re-identification scenarios {unknown} in {text!r}; use {list(SCENARIOS)} "
                          "(comma-separated), or 'all' or 'none' alone")
    return tuple(dict.fromkeys(by_name[w.lower()] for w in words))


class Encoder(Protocol):
    """What ingest needs from the model: view names with dimensions, a fingerprint, and a batch encoder."""

    views: dict[str, int]
    fingerprint: str

    def __call__(self, crops: Sequence[np.ndarray], modalities: Sequence[str],
                 resolutions: Sequence[str]) -> Mapping[str, np.ndarray]: ...


class ModelEncoder:
    """``Encoder`` over a ``PersonSearchModel`` (views listed in the module docstring)."""

    def __init__(self, model, reid_scenarios: Sequence[str] = DEFAULT_REID_SCENARIOS) -> None:
        from engine.retrieval.models import SCENARIOS
        from engine.retrieval.models.checkpoint import model_fingerprint

        unknown = [s for s in reid_scenarios if s not in SCENARIOS]
        if unknown:
            raise IngestError(f"unknown re-identification scenarios {unknown}; known: {list(SCENARIOS)}")
        self.model = model.eval()
        self.scenarios = tuple(reid_scenarios) if model.scenario_heads is not None else ()
        self.views = model_views(model, self.scenarios)
        probe = self._encode([np.zeros((8, 4, 3), np.uint8)], ["rgb"], ["HR"])
        dims = {view: int(array.shape[1]) for view, array in probe.items()}
        if self.views != dims:
            raise IngestError(f"the model gives views {dims}, the search expects {self.views}")
        self.fingerprint = model_fingerprint(model)

    def __call__(self, crops: Sequence[np.ndarray], modalities: Sequence[str],
                 resolutions: Sequence[str]) -> dict[str, np.ndarray]:
        if not len(crops) == len(modalities) == len(resolutions):
            raise IngestError(f"encode needs one modality and resolution per crop, got {len(crops)} crops, "
                              f"{len(modalities)} modalities, {len(resolutions)} resolutions")
        if not crops:
            return {view: np.zeros((0, dim), np.float32) for view, dim in self.views.items()}
        return self._encode(crops, modalities, resolutions)

    def _encode(self, crops: Sequence[np.ndarray], modalities: Sequence[str],
                resolutions: Sequence[str]) -> dict[str, np.ndarray]:
        unknown = [r for r in resolutions if r not in WORLD_TO_MODEL_RESOLUTION]
        if unknown:
            raise IngestError(f"resolution {unknown[0]!r} is not one of {list(WORLD_TO_MODEL_RESOLUTION)}")
        try:
            return encode_items(self.model, crops, list(modalities), list(resolutions), scenarios=self.scenarios,
                                batch_size=len(crops))
        except ValueError as exc:
            raise IngestError(str(exc)) from exc
