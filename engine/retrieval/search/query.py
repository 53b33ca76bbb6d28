"""One step's query: what to search with, how many to keep, and which cameras/times to allow."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from engine.kernel.images import ImageInputError, read_image
from engine.kernel.keep_rules import KEEP_RULES, KeepRuleError, check_keep
from engine.kernel.ontology import LEVELS, ONTOLOGY
from engine.kernel.query_modalities import modalities, query_kind
from engine.retrieval.search.errors import QueryInputError

ImageInput = str | Path | np.ndarray

QUERY_MIN_SIDE = 4  # pixels; a smaller sketch or IR image carries nothing to search with
QUERY_MAX_SIDE = 1024  # pixels; larger query images are shrunk before any tensor is made


def _finite_number(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise QueryInputError(f"{what} must be a finite number, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class StepQuery:
    """A step's query. Give any of ``text``/``sketch``/``ir`` (combined = fused query) or ``example`` (a gallery
    item id: find similar; with ``outfit_changed`` the person may have changed clothes since, and the step adds
    the likeness of the biometrics the checkpoint's heads read, ``engine.retrieval.search.outfit_change``). Keep rule:
    at most one of ``rho`` (fraction, default the session's), ``k`` (count) or ``threshold`` (minimum score).
    ``cameras`` and ``time_range`` (seconds, inclusive, None = open) filter the candidates; ``level``
    overrides the parser/classifier; ``target_identity`` marks ground truth.

    Hybrid ranking (``engine.retrieval.evidence.ranking``): ``attribute_weight`` overrides the session's w for this
    step; ``require`` makes attributes hard filters: attribute keys the text states (``["top_color"]``) or
    ``{key: value}`` pairs (a value the text states differently is an error; a pair the text does not state
    joins the stated attributes); candidates whose evidence makes the value clearly unlikely are filtered out
    like the camera/time filters.

    ``whole_gallery``: the step scores every item of the gallery the session searches (less the rejected ones,
    confirmed ones kept) instead of the items the previous step kept, e.g. following a sighting to the next
    camera (``engine.retrieval.search.follow``), where the person's other sightings were cut by earlier steps
    that looked for them on one camera."""

    text: str | None = None
    sketch: ImageInput | None = field(default=None, compare=False)
    ir: ImageInput | None = field(default=None, compare=False)
    example: str | None = None
    outfit_changed: bool = False
    scenario: str | None = None
    level: str | None = None
    rho: float | None = None
    k: int | None = None
    threshold: float | None = None
    cameras: frozenset[str] | None = None
    time_range: tuple[float | None, float | None] | None = None
    target_identity: str | None = None
    attribute_weight: float | None = None
    require: tuple[tuple[str, str | None], ...] | None = None
    whole_gallery: bool = False

    def __post_init__(self) -> None:
        text = self.text.strip() if isinstance(self.text, str) else self.text
        if text is not None and not isinstance(text, str):
            raise QueryInputError(f"text must be a string, got {type(self.text).__name__}")
        object.__setattr__(self, "text", text or None)
        if self.example is not None and (not isinstance(self.example, str) or not self.example):
            raise QueryInputError(f"example must be a gallery item id, got {self.example!r}")
        has_image = self.sketch is not None or self.ir is not None
        if self.example is not None and (self.text is not None or has_image):
            raise QueryInputError("an example-item query (find similar) cannot be combined with text, sketch or IR")
        if self.example is None and self.text is None and not has_image:
            raise QueryInputError("the query is empty: give text, a sketch, an IR image or an example item")
        if self.scenario is not None and self.example is None:
            raise QueryInputError("scenario applies to example-item (find similar) queries only")
        if not isinstance(self.outfit_changed, bool):
            raise QueryInputError(f"outfit_changed must be true or false, got {self.outfit_changed!r}")
        if self.outfit_changed and self.example is None:
            raise QueryInputError("outfit_changed applies to example-item (find similar) queries only")
        if self.outfit_changed and self.scenario is not None:
            raise QueryInputError("outfit_changed ranks by biometrics, not by a scenario's view: give one of "
                                  "outfit_changed and scenario")
        if not isinstance(self.whole_gallery, bool):
            raise QueryInputError(f"whole_gallery must be true or false, got {self.whole_gallery!r}")
        if self.level is not None and self.level not in LEVELS:
            raise QueryInputError(f"level must be one of {list(LEVELS)}, got {self.level!r}")
        rules = [name for name in KEEP_RULES if getattr(self, name) is not None]
        if len(rules) > 1:
            raise QueryInputError(f"give at most one keep rule (rho, k or threshold), got {rules}")
        for rule in rules:
            try:
                object.__setattr__(self, rule, check_keep(rule, getattr(self, rule)))
            except KeepRuleError as exc:
                raise QueryInputError(str(exc)) from None
        if self.cameras is not None:
            cameras = frozenset([self.cameras] if isinstance(self.cameras, str) else self.cameras)
            if not cameras or not all(isinstance(c, str) and c for c in cameras):
                raise QueryInputError(f"cameras must be a non-empty set of camera names, got {self.cameras!r}")
            object.__setattr__(self, "cameras", cameras)
        if self.time_range is not None:
            if len(self.time_range) != 2:
                raise QueryInputError(f"time_range must be (start, end), got {self.time_range!r}")
            start, end = (None if v is None else _finite_number(v, "time_range bound") for v in self.time_range)
            if start is not None and end is not None and start > end:
                raise QueryInputError(f"time_range starts after it ends: {self.time_range!r}")
            object.__setattr__(self, "time_range", (start, end))
        if self.attribute_weight is not None and not _finite_number(self.attribute_weight, "attribute_weight") >= 0:
            raise QueryInputError(f"attribute_weight must be ≥ 0, got {self.attribute_weight}")
        if self.require is not None:
            object.__setattr__(self, "require", _requirements(self.require))

    @property
    def required(self) -> dict[str, str | None]:
        """Required attribute key → value (None: the value the text states)."""
        return dict(self.require or ())
    @property
    def kind(self) -> str:
        """'example', or the modalities joined by '+' (e.g. 'text+sketch'; ``engine.kernel.query_modalities``)."""
        return query_kind(m.name for m in modalities() if getattr(self, m.name, None) is not None)


def _requirements(value: object) -> tuple[tuple[str, str | None], ...] | None:
    """``require`` as sorted (key, value or None) pairs, each key an ontology attribute, each value canonical."""
    if isinstance(value, str):
        pairs: list = [(value, None)]
    elif isinstance(value, Mapping):
        pairs = list(value.items())
    else:
        try:
            pairs = [item if isinstance(item, tuple) else (item, None) for item in value]  # type: ignore[union-attr]
        except TypeError:
            raise QueryInputError(f"require must be attribute keys or {{key: value}}, got {value!r}") from None
    out: dict[str, str | None] = {}
    for pair in pairs:
        if len(pair) != 2:
            raise QueryInputError(f"require entries must be keys or (key, value) pairs, got {pair!r}")
        key, wanted = pair
        if key not in ONTOLOGY.attributes:
            raise QueryInputError(f"require: {key!r} is not an attribute of the ontology ({', '.join(ONTOLOGY.keys)})")
        if wanted is not None and wanted not in ONTOLOGY.attributes[key]:
            raise QueryInputError(f"require: {key}={wanted!r} is not one of {list(ONTOLOGY.attributes[key])}")
        if key in out and out[key] is not None and wanted is not None and out[key] != wanted:
            raise QueryInputError(f"require: {key} is required as both {out[key]!r} and {wanted!r}")
        out[key] = wanted if wanted is not None else out.get(key)
    return tuple(sorted(out.items())) or None


def _shrunk(image: np.ndarray) -> np.ndarray:
    factor = QUERY_MAX_SIDE / max(image.shape[:2])
    if factor >= 1:
        return image
    size = (max(1, round(image.shape[1] * factor)), max(1, round(image.shape[0] * factor)))
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA)


def load_image(value: ImageInput, what: str) -> np.ndarray:
    """An RGB uint8 image [H, W, 3] from a file path or an array (grey images are repeated to 3 channels).

    Files are read by ``engine.kernel.images`` (size checked from the header, truncation refused); images are shrunk
    to ``QUERY_MAX_SIDE`` pixels on their long side before anything else, and images under ``QUERY_MIN_SIDE``
    pixels on a side are refused."""
    if isinstance(value, np.ndarray):
        image = value
        if image.ndim == 2:
            image = np.repeat(image[:, :, None], 3, axis=2)
        if image.ndim != 3 or image.shape[2] != 3 or image.shape[0] < 1 or image.shape[1] < 1:
            raise QueryInputError(f"{what} image must be [H, W, 3] or [H, W], got shape {value.shape}")
        if image.dtype != np.uint8:
            raise QueryInputError(f"{what} image must be uint8, got {image.dtype}")
        if min(image.shape[:2]) < QUERY_MIN_SIDE:
            raise QueryInputError(f"{what} image is {image.shape[1]} × {image.shape[0]} pixels, smaller than the "
                                  f"{QUERY_MIN_SIDE}-pixel minimum side: it carries nothing to search with")
        return _shrunk(image)
    if not isinstance(value, str | Path):
        raise QueryInputError(f"{what} must be an image file path or an array, got {type(value).__name__}")
    path = Path(value)
    if path.is_dir():
        raise QueryInputError(f"{what} file {path} is a folder, not an image")
    if not path.is_file():
        if path.is_symlink() or path.exists():
            raise QueryInputError(f"{what} file {path} is not a regular file (a broken or looping link, a named "
                                  "pipe or a device), not an image")
        raise QueryInputError(f"{what} file {path} does not exist")
    try:
        image = read_image(path, min_side=QUERY_MIN_SIDE, max_side=QUERY_MAX_SIDE)
    except ImageInputError as exc:
        raise QueryInputError(f"{what} file {path} is not a readable image: {exc.reason}") from None
    return cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
