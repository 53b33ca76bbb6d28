"""Gallery items: one JSON object per line in ``items.jsonl`` (row i = line i = vector row i), and the
in-memory columns the search session reads per candidate row (id, camera, time, identity, modality)."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from functools import partial
from typing import Any

import numpy as np

from engine.index.errors import GalleryCorruptError, GalleryInputError
from engine.kernel import jsonio
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


class _Codes:
    """Strings stored as int32 codes (−1 = missing) with their vocabulary."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._code: dict[str, int] = {}

    def code(self, name: str | None) -> int:
        if name is None:
            return -1
        found = self._code.get(name)
        if found is None:
            found = self._code[name] = len(self.names)
            self.names.append(name)
        return found

    def lookup(self, name: str) -> int | None:
        return self._code.get(name)


class ItemColumns:
    """Per-row columns for filters and relevance, plus the byte offset of each line in ``items.jsonl``."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.row_of: dict[str, int] = {}
        self.cameras = _Codes()
        self.identities = _Codes()
        self.modalities = _Codes()
        self._camera: list[np.ndarray] = []
        self._time: list[np.ndarray] = []
        self._identity: list[np.ndarray] = []
        self._modality: list[np.ndarray] = []
        self._offset: list[np.ndarray] = []
        self._packed: dict[str, np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def append(self, items: Iterable[GalleryItem | Mapping[str, Any]], line_lengths: Iterable[int], start: int) -> None:
        """Append rows; ``start`` is the byte offset of the first new line."""
        camera, time, identity, modality, offset = [], [], [], [], []
        position = start
        for item, length in zip(items, line_lengths, strict=True):
            get = item.get if isinstance(item, Mapping) else partial(getattr, item)
            item_id = get("id")
            self.row_of[item_id] = len(self.ids)
            self.ids.append(item_id)
            camera.append(self.cameras.code(get("camera")))
            value = get("time")
            time.append(np.nan if value is None else value)
            identity.append(self.identities.code(get("identity")))
            modality.append(self.modalities.code(get("modality")))
            offset.append(position)
            position += length
        self._camera.append(np.asarray(camera, dtype=np.int32))
        self._time.append(np.asarray(time, dtype=np.float64))
        self._identity.append(np.asarray(identity, dtype=np.int32))
        self._modality.append(np.asarray(modality, dtype=np.int32))
        self._offset.append(np.asarray(offset, dtype=np.int64))
        self._packed = None

    def _column(self, name: str) -> np.ndarray:
        if self._packed is None:
            packed = {}
            for key in ("camera", "time", "identity", "modality", "offset"):
                parts = getattr(self, f"_{key}")
                empty = np.zeros(0, dtype=np.float64 if key == "time" else np.int64)
                joined = np.concatenate(parts) if parts else empty
                parts[:] = [joined]
                packed[key] = joined
            self._packed = packed
        return self._packed[name]

    @property
    def camera(self) -> np.ndarray:
        return self._column("camera")

    @property
    def time(self) -> np.ndarray:
        return self._column("time")

    @property
    def identity(self) -> np.ndarray:
        return self._column("identity")

    @property
    def modality(self) -> np.ndarray:
        return self._column("modality")

    @property
    def offset(self) -> np.ndarray:
        return self._column("offset")


def read_columns(path, committed_bytes: int, expected_rows: int) -> ItemColumns:
    """Parse the committed part of ``items.jsonl`` into columns (bytes past ``committed_bytes`` are an
    interrupted append and are ignored)."""
    columns = ItemColumns()
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            data = fh.read(committed_bytes) if size >= committed_bytes else b""  # never a buffer past the file
    except OSError as exc:
        raise GalleryCorruptError(f"cannot read {path}: {exc}") from exc
    if size < committed_bytes:
        raise GalleryCorruptError(
            f"{path} holds {size} bytes but gallery.json records {committed_bytes}: the item list is truncated"
        )
    if len(data) != committed_bytes:
        raise GalleryCorruptError(
            f"{path} holds {len(data)} bytes but gallery.json records {committed_bytes}: the item list is truncated"
        )
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    elif lines:
        raise GalleryCorruptError(f"{path}: the last committed line is incomplete")
    if len(lines) != expected_rows:
        raise GalleryCorruptError(f"{path} holds {len(lines)} items but gallery.json records {expected_rows}")
    records = []
    for number, line in enumerate(lines, start=1):
        try:
            record = jsonio.loads(line, f"{path} line {number}")
        except jsonio.JsonInputError as exc:  # not UTF-8, not JSON, nested too deep: the file and line named
            raise GalleryCorruptError(str(exc)) from None
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            raise GalleryCorruptError(f"{path} line {number} is not an item object with an 'id'")
        records.append(record)
    columns.append(records, (len(line) + 1 for line in lines), 0)
    if len(columns.row_of) != len(columns.ids):
        seen: set[str] = set()
        duplicate = next(i for i in columns.ids if i in seen or seen.add(i))
        raise GalleryCorruptError(f"{path} lists item id {duplicate!r} more than once")
    return columns
