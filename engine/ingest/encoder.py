"""The model side of ingest: crops → one unit vector per gallery view.

The views and their names are decided by the search (``engine.search.views.gallery_views``); for a model:

- ``text:UC`` … ``text:UF``: the image embedding through each granularity level's expert (one
  ``encode_images_all_levels`` pass); a text query searches the view of its level (METHODS §1.9);
- ``rgb``: the embedding at ``granularity.image_query_level``, searched by sketch, IR and fused queries;
- ``reid:<scenario>`` for each scenario asked for (default ``AD-LT``, the all-day, clothing-change feature
  that serves any pair of cameras and times): the Uni-AT re-identification feature (``encode_reid``), only
  when the model has scenario tokens.

Every crop is encoded with its own modality (rgb / ir) and resolution level (the model's resolution
embedding, CRST). Crops are BGR uint8 as OpenCV decodes them; they go through ``model.prepare_images``
(resize to the model's input, mean/std), crops of one size in one call, like the evaluation does.

``model_fingerprint`` is SHA-256 over the resolved config JSON and every weight tensor's bytes in name order:
a gallery records it and refuses vectors from any other model.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Protocol

import cv2
import numpy as np

from engine.ingest.errors import IngestError
from engine.ingest.resolution import MODEL_RESOLUTION
from engine.ontology import LEVELS
from engine.search.views import IMAGE_QUERY_VIEW, gallery_views, reid_view, text_view

DEFAULT_REID_SCENARIOS: tuple[str, ...] = ("AD-LT",)


def parse_scenarios(text: str) -> tuple[str, ...]:
    """Re-identification views from ``"AD-LT"``, ``"DT-ST,AD-LT"``, ``"all"`` or ``"none"``."""
    from engine.models import SCENARIOS

    words = [w.strip() for w in (text or "").split(",") if w.strip()]
    if words == ["all"]:
        return tuple(SCENARIOS)
    if words in ([], ["none"]):
        return ()
    by_name = {s.lower(): s for s in SCENARIOS}
    unknown = [w for w in words if w.lower() not in by_name]
    if unknown:
        raise IngestError(f"unknown re-identification scenarios {unknown}; use {list(SCENARIOS)}, 'all' or 'none'")
    return tuple(dict.fromkeys(by_name[w.lower()] for w in words))


class Encoder(Protocol):
    """What ingest needs from the model: view names with dimensions, a fingerprint, and a batch encoder."""

    views: dict[str, int]
    fingerprint: str

    def __call__(self, crops: Sequence[np.ndarray], modalities: Sequence[str],
                 resolutions: Sequence[str]) -> Mapping[str, np.ndarray]: ...


def model_fingerprint(model) -> str:
    """SHA-256 of the model's config and weights (see the module docstring)."""
    import torch

    digest = hashlib.sha256(json.dumps(model.config.to_dict(), sort_keys=True).encode())
    for name, tensor in sorted(model.state_dict().items()):
        flat = tensor.detach().to("cpu").contiguous().reshape(-1)
        digest.update(f"{name}:{tensor.dtype}:{tuple(tensor.shape)}\n".encode())
        digest.update(flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b"")
    return digest.hexdigest()


class ModelEncoder:
    """``Encoder`` over a ``PersonSearchModel`` (views listed in the module docstring)."""

    def __init__(self, model, reid_scenarios: Sequence[str] = DEFAULT_REID_SCENARIOS) -> None:
        from engine.models import SCENARIOS

        unknown = [s for s in reid_scenarios if s not in SCENARIOS]
        if unknown:
            raise IngestError(f"unknown re-identification scenarios {unknown}; known: {list(SCENARIOS)}")
        self.model = model.eval()
        self.scenarios = tuple(reid_scenarios) if model.scenario_heads is not None else ()
        self.image_level = model.config.granularity.image_query_level
        probe = self._encode([np.zeros((8, 4, 3), np.uint8)], ["rgb"], ["HR"])
        dims = {view: int(array.shape[1]) for view, array in probe.items()}
        self.views = gallery_views(dims[IMAGE_QUERY_VIEW], scenarios=self.scenarios,
                                   reid_dim=dims[reid_view(self.scenarios[0])] if self.scenarios else None)
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

    def _prepare(self, crops: Sequence[np.ndarray]):
        import torch

        rows: list = [None] * len(crops)
        by_size: dict[tuple[int, int], list[int]] = {}
        for index, crop in enumerate(crops):
            if crop.ndim != 3 or crop.shape[2] != 3 or crop.dtype != np.uint8 or 0 in crop.shape:
                raise IngestError(f"crop {index} must be a non-empty BGR uint8 image H×W×3, got "
                                  f"{crop.dtype} {crop.shape}")
            by_size.setdefault(crop.shape[:2], []).append(index)
        for indices in by_size.values():
            batch = np.stack([cv2.cvtColor(crops[i], cv2.COLOR_BGR2RGB) for i in indices]).transpose(0, 3, 1, 2)
            prepared = self.model.prepare_images(torch.from_numpy(np.ascontiguousarray(batch)))
            for row, index in enumerate(indices):
                rows[index] = prepared[row : row + 1]
        return torch.cat(rows)

    def _encode(self, crops: Sequence[np.ndarray], modalities: Sequence[str],
                resolutions: Sequence[str]) -> dict[str, np.ndarray]:
        try:
            model_resolutions = [MODEL_RESOLUTION[r] for r in resolutions]
        except KeyError as exc:
            raise IngestError(f"resolution {exc.args[0]!r} is not one of {list(MODEL_RESOLUTION)}") from None
        images = self._prepare(crops)
        stacked = self.model.encode_images_all_levels(images, list(modalities), model_resolutions)
        out = {text_view(level): stacked[:, i].float().cpu().numpy() for i, level in enumerate(LEVELS)}
        out[IMAGE_QUERY_VIEW] = out[text_view(self.image_level)]
        for scenario in self.scenarios:
            vectors = self.model.encode_reid(images, scenario, modality=list(modalities), resolution=model_resolutions)
            out[reid_view(scenario)] = vectors.float().cpu().numpy()
        return out
