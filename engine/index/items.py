"""Gallery items: one JSON object per line in ``items.jsonl`` (row i = line i = vector row i). The columns a
search reads per row are ``engine.index.columns``'."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from engine.index.errors import GalleryInputError
from engine.kernel.ontology import ONTOLOGY

ITEMS_FILE = "items.jsonl"

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_OPTIONAL_STR = ("camera", "source_sha256", "crop_sha256", "resolution", "crop", "identity", "modality")


@dataclass(frozen=True)
class GalleryItem:
    """One person crop. ``time`` is seconds (footage clock or POSIX time); ``box`` is (x, y, w, h) in source
    pixels; ``crop`` a path relative to the gallery folder; ``identity`` ground truth where known."""

    id: str
    source: str
    frame: int | None = None
    time: float | None = None
    camera: str | None = None
    box: tuple[float, float, float, float] | None = None
    track: int | None = None
    source_sha256: str | None = None
    crop_sha256: str | None = None
    resolution: str | None = None
    crop: str | None = None
    identity: str | None = None
    modality: str | None = None
    attributes: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        where = f"item {self.id!r}"
        if not isinstance(self.id, str) or not self.id.strip() or "\n" in self.id:
            raise GalleryInputError(f"item id must be a non-empty single-line string, got {self.id!r}")
        if not isinstance(self.source, str) or not self.source:
            raise GalleryInputError(f"{where}: source must be a non-empty string, got {self.source!r}")
        if self.frame is not None and (isinstance(self.frame, bool) or not isinstance(self.frame, int)):
            raise GalleryInputError(f"{where}: frame must be an integer, got {self.frame!r}")
        if self.time is not None:
            if isinstance(self.time, bool) or not isinstance(self.time, int | float) or not math.isfinite(self.time):
                raise GalleryInputError(f"{where}: time must be a finite number of seconds, got {self.time!r}")
            object.__setattr__(self, "time", float(self.time))
        if self.box is not None:
            box = tuple(self.box)
            if len(box) != 4 or not all(isinstance(v, int | float) and math.isfinite(v) for v in box):
                raise GalleryInputError(f"{where}: box must be four finite numbers (x, y, w, h), got {self.box!r}")
            if box[2] <= 0 or box[3] <= 0:
                raise GalleryInputError(f"{where}: box width and height must be positive, got {self.box!r}")
            object.__setattr__(self, "box", box)
        if self.track is not None and (isinstance(self.track, bool) or not isinstance(self.track, int)):
            raise GalleryInputError(f"{where}: track must be an integer, got {self.track!r}")
        for name in _OPTIONAL_STR:
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise GalleryInputError(f"{where}: {name} must be a non-empty string or None, got {value!r}")
        for name in ("source_sha256", "crop_sha256"):
            value = getattr(self, name)
            if value is not None and not _HEX64.match(value):
                raise GalleryInputError(f"{where}: {name} must be 64 lowercase hex digits, got {value!r}")
        if self.crop is not None:
            check_relative_path(self.crop, where)
        attributes = dict(self.attributes)
        try:
            ONTOLOGY.validate(attributes)
        except ValueError as exc:
            raise GalleryInputError(f"{where}: {exc}") from None
        object.__setattr__(self, "attributes", attributes)

    def to_json(self) -> str:
        """One compact JSON line (None fields and empty attributes left out)."""
        data = {}
        for name in _FIELDS:
            value = getattr(self, name)
            if value is not None and value != {}:
                data[name] = list(value) if name == "box" else value
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GalleryItem:
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise GalleryInputError(f"item {data.get('id')!r} has unknown fields {sorted(unknown)}")
        if "id" not in data or "source" not in data:
            raise GalleryInputError(f"an item needs 'id' and 'source', got fields {sorted(data)}")
        return cls(**data)


_FIELDS = tuple(f.name for f in fields(GalleryItem))


def as_item(value: GalleryItem | Mapping[str, Any]) -> GalleryItem:
    if isinstance(value, GalleryItem):
        return value
    if isinstance(value, Mapping):
        return GalleryItem.from_dict(value)
    raise GalleryInputError(f"an item must be a GalleryItem or a mapping, got {type(value).__name__}")


def check_relative_path(path: str, where: str) -> None:
    """A crop path must stay inside the gallery folder (relative, no '..')."""
    parts = path.replace("\\", "/").split("/")
    if path.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", path) or ".." in parts or "" in parts:
        raise GalleryInputError(f"{where}: crop path {path!r} must be relative to the gallery folder, without '..'")
