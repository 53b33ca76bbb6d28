"""A ``PersonSearchModel`` on both sides of the search: the query encoder a session uses, and the gallery-side
encoding of crops into every view the gallery stores (docs/methods.md §1.9; view names from
``engine.retrieval.encoding.views``, which alone decides which view a query searches).

Query side (``ModelQueryEncoder``):

- level of a description: the parser's attribute count through ``ONTOLOGY.level_of`` (docs/methods.md §1.1), with
  the model's GCR level classifier (docs/methods.md §1.8) when the parser finds no attribute (rule ``"parser"``), or
  the classifier first (rule ``"classifier"``); a step's ``level`` overrides both;
- text vectors for the ``text:<level>`` views: ``encode_text`` (one text tower, the level picks the image
  expert on the gallery side, CMAM), blended with the vector of the text's rewrite in the generator's words at
  the checkpoint's ``text_rewrite`` weight (``engine.retrieval.encoding.text_rewrite``);
- sketch, IR and mixed queries for the ``rgb`` view through ``model.fuse`` (FlexiReID CMQF, docs/methods.md §4);
  a checkpoint without fusion answers single-modality queries with the plain tower embedding;
- find-similar needs no model: the session reads the example item's stored ``appearance`` vector (a user's
  own network, ``engine.perception.appearance``), else its ``reid:<scenario>`` vector, else its ``rgb`` vector.

Gallery side (``encode_items``): BGR uint8 crops → ``{view: float32 [N, D]}`` for ``text:UC`` … ``text:UF``
(one ``encode_images_all_levels`` pass), ``rgb`` (= the ``granularity.image_query_level`` expert) and
``reid:<scenario>`` (``encode_reid``) when the model has scenario heads; each crop with its own modality
and resolution, in batches; ingest's ``ModelEncoder`` encodes through it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cached_property

import numpy as np

from engine.index.errors import GalleryMismatchError
from engine.kernel.ontology import LEVELS, ONTOLOGY
from engine.kernel.vocabulary import model_resolution
from engine.retrieval.encoding.errors import QueryInputError
from engine.retrieval.encoding.text_rewrite import NO_REWRITE, check_rewrite_weight, encode_rewritten
from engine.retrieval.encoding.views import (
    IMAGE_QUERY_VIEW,
    REID_PREFIX,
    TEXT_PREFIX,
    gallery_views,
    reid_view,
    text_view,
)

LEVEL_RULES: tuple[str, ...] = ("parser", "classifier")
DEFAULT_REID_SCENARIOS: tuple[str, ...] = ("AD-LT",)
DEFAULT_BATCH = 64


def model_views(model, scenarios: Iterable[str] = DEFAULT_REID_SCENARIOS) -> dict[str, int]:
    """``{view: dimension}`` a gallery made with ``model`` stores (re-identification views only when the model
    has scenario heads)."""
    scenarios = tuple(scenarios) if model.scenario_heads is not None else ()
    return gallery_views(model.config.embed_dim, scenarios=scenarios, reid_dim=model.config.vision.width)


def view_dimension(model, view: str) -> int | None:
    """The dimension ``model`` gives ``view``, or None when the model cannot make that view."""
    if view == IMAGE_QUERY_VIEW or (view.startswith(TEXT_PREFIX) and view[len(TEXT_PREFIX):] in LEVELS):
        return int(model.config.embed_dim)
    if view.startswith(REID_PREFIX) and model.scenario_heads is not None:
        from engine.retrieval.models import SCENARIOS

        if view[len(REID_PREFIX):] in SCENARIOS:
            return int(model.config.vision.width)
    return None


def check_gallery(model, gallery, fingerprint: str | None = None) -> None:
    """Raise ``GalleryMismatchError`` when ``model`` cannot search ``gallery``: a view it gives another
    dimension, a view it cannot make, or (dimensions agreeing) a different checkpoint fingerprint. Views another
    network made (``gallery.view_model(view)`` set, e.g. ``appearance``) are not the checkpoint's to check."""
    for view, dim in gallery.views.items():
        if gallery.view_model(view) is not None:
            continue
        mine = view_dimension(model, view)
        if mine is None:
            raise GalleryMismatchError(f"the gallery {gallery.root} stores view {view!r}, which this checkpoint "
                                       f"({model.config.name}) cannot make; use the checkpoint that built it")
        if mine != dim:
            raise GalleryMismatchError(f"the gallery {gallery.root} stores {dim}-dimensional vectors in view "
                                       f"{view!r}; this checkpoint ({model.config.name}) gives {mine}: use the "
                                       f"checkpoint that built the gallery")
    if fingerprint is None:
        from engine.retrieval.models.checkpoint import model_fingerprint

        fingerprint = model_fingerprint(model)
    gallery.check_model(fingerprint)


def _rgb_tensor(image: np.ndarray, what: str):
    import torch

    if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        shape = getattr(image, "shape", type(image).__name__)
        raise QueryInputError(f"the {what} image must be an RGB uint8 array [H, W, 3], got {shape}")
    if 0 in image.shape:
        raise QueryInputError(f"the {what} image is empty ({image.shape})")
    return torch.from_numpy(np.ascontiguousarray(image.transpose(2, 0, 1)))


class ModelQueryEncoder:
    """``engine.retrieval.search.encoder.QueryEncoder`` over a ``PersonSearchModel`` (see the module docstring)."""

    def __init__(self, model, *, level_rule: str = "parser", resolution: str = "hr",
                 attribute_weight: float | None = None, text_rewrite: float = NO_REWRITE) -> None:
        if level_rule not in LEVEL_RULES:
            raise QueryInputError(f"level rule must be one of {list(LEVEL_RULES)}, got {level_rule!r}")
        try:
            self.text_rewrite = check_rewrite_weight(text_rewrite)
        except ValueError as exc:
            raise QueryInputError(str(exc)) from None
        self.model = model.eval()
        self.attribute_weight = attribute_weight  # the checkpoint's w; None when it states none
        self.level_rule = level_rule
        self.resolution = resolution
        self._levels: dict[str, tuple[str | None, str]] = {}

    @cached_property
    def fingerprint(self) -> str:
        from engine.retrieval.models.checkpoint import model_fingerprint

        return model_fingerprint(self.model)

    def check_gallery(self, gallery) -> None:
        """Clear ``GalleryMismatchError`` when this checkpoint did not build ``gallery``."""
        check_gallery(self.model, gallery, self.fingerprint)

    # ------------------------------------------------------------------------------------------- level

    def level_and_source(self, text: str) -> tuple[str | None, str]:
        """(level, where it came from: "parser", "classifier" or "none") for a description (remembered)."""
        if text not in self._levels:
            self._levels[text] = self._level_and_source(text)
        return self._levels[text]

    def _level_and_source(self, text: str) -> tuple[str | None, str]:
        if self.level_rule == "classifier" and self.model.level_classifier is not None:
            return self._classified(text), "classifier"
        from engine.retrieval.text.parser import parse

        level = ONTOLOGY.level_of(parse(text).count)
        if level is not None:
            return level, "parser"
        if self.model.level_classifier is not None:
            return self._classified(text), "classifier"
        return None, "none"

    def level_for(self, text: str) -> str | None:
        return self.level_and_source(text)[0]

    def _classified(self, text: str) -> str:
        _, logits = self.model.encode_text([text])
        return LEVELS[int(logits[0].argmax())]

    # ------------------------------------------------------------------------------------------- vectors

    def encode_text(self, text: str) -> np.ndarray:
        vectors, _ = encode_rewritten(self.model.encode_text, [text], self.text_rewrite)
        return vectors[0].float().cpu().numpy()

    def encode_fused(self, text: str | None, sketch: np.ndarray | None, ir: np.ndarray | None) -> np.ndarray:
        given = [name for name, value in (("text", text), ("sketch", sketch), ("IR", ir)) if value is not None]
        if not given:
            raise QueryInputError("the query is empty: give text, a sketch or an IR image")
        images = {name: None if value is None else self._prepare(value, shown)
                  for name, shown, value in (("sketch", "sketch", sketch), ("ir", "IR", ir))}
        model = self.model
        if model.fusion is not None:
            vector = model.fuse(text=None if text is None else [text], sketch=images["sketch"], ir=images["ir"],
                                resolution=self.resolution)
            return vector[0].float().cpu().numpy()
        if len(given) > 1:
            raise QueryInputError(f"this checkpoint ({model.config.name}) has no query fusion, so it cannot combine "
                                  f"{' + '.join(given)}; give one of them")
        if text is not None:
            return self.encode_text(text)
        modality = "sketch" if sketch is not None else "ir"
        vector = model.encode_images(images[modality], modality=modality, resolution=self.resolution)
        return vector[0].float().cpu().numpy()

    def _prepare(self, image: np.ndarray, what: str):
        return self.model.prepare_images(_rgb_tensor(image, what).unsqueeze(0))


# ------------------------------------------------------------------------------------------- gallery side


def per_crop(value: str | Sequence[str], count: int, what: str) -> list[str]:
    """One label per crop: a single label repeated, or a sequence of exactly ``count``."""
    if isinstance(value, str):
        return [value] * count
    values = list(value)
    if len(values) != count:
        raise ValueError(f"one {what} per crop is needed: {count} crops, {len(values)} {what}s")
    return values


def prepared_batch(model, crops: Sequence[np.ndarray], start: int):
    """Crops (BGR uint8 [H, W, 3]) → one normalised tensor; crops of one size are resized together."""
    import cv2
    import torch

    groups: dict[tuple[int, int], list[int]] = {}
    for index, crop in enumerate(crops):
        if not isinstance(crop, np.ndarray) or crop.ndim != 3 or crop.shape[2] != 3 or crop.dtype != np.uint8 \
                or 0 in crop.shape:
            shape = getattr(crop, "shape", type(crop).__name__)
            raise ValueError(f"crop {start + index} must be a non-empty BGR uint8 image [H, W, 3], got {shape}")
        groups.setdefault(crop.shape[:2], []).append(index)
    rows: list = [None] * len(crops)
    for indices in groups.values():
        stack = np.stack([cv2.cvtColor(crops[i], cv2.COLOR_BGR2RGB) for i in indices]).transpose(0, 3, 1, 2)
        prepared = model.prepare_images(torch.from_numpy(np.ascontiguousarray(stack)))
        for position, index in enumerate(indices):
            rows[index] = prepared[position : position + 1]
    return torch.cat(rows)


def encode_items(
    model,
    crops: Sequence[np.ndarray],
    modalities: str | Sequence[str] = "rgb",
    resolutions: str | Sequence[str] = "HR",
    *,
    scenarios: Iterable[str] = DEFAULT_REID_SCENARIOS,
    batch_size: int = DEFAULT_BATCH,
) -> dict[str, np.ndarray]:
    """Unit vectors ``{view: float32 [N, D]}`` of BGR uint8 crops for every view of ``model_views(model,
    scenarios)``. ``modalities`` ("rgb"/"ir") and ``resolutions`` (world labels HR/mild/mid/ultra or the model's
    names) are one value for all crops or one per crop."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    views = model_views(model, scenarios)
    reid = [view[len(REID_PREFIX):] for view in views if view.startswith(REID_PREFIX)]
    count = len(crops)
    modality = per_crop(modalities, count, "modality")
    resolution = [model_resolution(r) for r in per_crop(resolutions, count, "resolution")]
    parts: dict[str, list[np.ndarray]] = {view: [] for view in views}
    image_level = model.config.granularity.image_query_level
    for start in range(0, count, batch_size):
        stop = min(count, start + batch_size)
        images = prepared_batch(model, crops[start:stop], start)
        levels = model.encode_images_all_levels(images, modality[start:stop], resolution[start:stop])
        levels = levels.float().cpu().numpy()
        for index, level in enumerate(LEVELS):
            parts[text_view(level)].append(levels[:, index])
        parts[IMAGE_QUERY_VIEW].append(levels[:, LEVELS.index(image_level)])
        for scenario in reid:
            vectors = model.encode_reid(images, scenario, modality=modality[start:stop],
                                        resolution=resolution[start:stop])
            parts[reid_view(scenario)].append(vectors.float().cpu().numpy())
    return {view: np.concatenate(blocks) if blocks else np.zeros((0, views[view]), np.float32)
            for view, blocks in parts.items()}

