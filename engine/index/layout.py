"""A gallery folder's fixed layout and rules shared by its reads and writes: the format version, the metadata
file, view names and their file stems, batch size, the unit-norm tolerance of stored vectors and the gallery
domains."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.index import journal
from engine.index.errors import GalleryCorruptError, GalleryInputError
from engine.kernel.timefmt import utc_stamp

FORMAT_VERSION = 1
GALLERY_FILE = journal.GALLERY_FILE
DEFAULT_BATCH = 4096
NORM_TOLERANCE = 0.02
VIEW_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9:_.+-]{0,63}$")
ProgressFn = Callable[[int, int], None]
#: What a gallery's items are: crops of a built synthetic world, or of real footage (videos, images, crops).
GALLERY_DOMAINS: tuple[str, ...] = ("world", "footage")
#: the time a write stamps in the gallery's metadata ("updated")
now = utc_stamp


@dataclass(frozen=True)
class AddReport:
    added: int
    skipped: int  # ids already in the gallery (a resumed ingest)


def file_stem(view: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", view)


def check_views(views: Mapping[str, int]) -> dict[str, dict[str, Any]]:
    if not views:
        raise GalleryInputError("a gallery needs at least one view")
    out: dict[str, dict[str, Any]] = {}
    stems: dict[str, str] = {}
    for name, dim in views.items():
        if not isinstance(name, str) or not VIEW_NAME.match(name):
            raise GalleryInputError(f"view name {name!r} must be 1-64 characters of letters, digits and ':_.+-'")
        if isinstance(dim, bool) or not isinstance(dim, int) or dim <= 0:
            raise GalleryInputError(f"view {name!r} needs a positive integer dimension, got {dim!r}")
        stem = file_stem(name)
        if stem.lower() in stems:
            raise GalleryInputError(f"views {stems[stem.lower()]!r} and {name!r} would share the file name {stem!r}")
        stems[stem.lower()] = name
        out[name] = {"dim": dim, "file": stem}
    return out


def check_view_models(models: Mapping[str, Mapping[str, Any]], views: Mapping[str, Any]) -> dict[str, dict]:
    unknown = sorted(set(models) - set(views))
    if unknown:
        raise GalleryInputError(f"view fingerprints given for views {unknown} the gallery does not have")
    for view, model in models.items():
        if not isinstance(model, Mapping) or not model:
            raise GalleryInputError(f"the fingerprint of view {view!r} must be a non-empty JSON object")
    return {view: dict(model) for view, model in models.items()}


#: gallery.json fields → (what they must be, test); optional fields are checked when present
_META_FIELDS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "model_fingerprint": ("a string", lambda v: isinstance(v, str)),
    "views": ("a JSON object", lambda v: isinstance(v, dict)),
    "count": ("a whole number >= 0", lambda v: _is_count(v)),
    "items_bytes": ("a whole number >= 0", lambda v: _is_count(v)),
    "ivf_threshold": ("a whole number >= 1", lambda v: _is_count(v) and v >= 1),
    "indexes": ("a JSON object of objects", lambda v: isinstance(v, dict) and all(isinstance(e, dict)
                                                                                 for e in v.values())),
    "view_models": ("a JSON object of objects", lambda v: isinstance(v, dict) and all(isinstance(e, dict)
                                                                                     for e in v.values())),
    "versions": ("a list of objects", lambda v: isinstance(v, list) and all(isinstance(e, dict) for e in v)),
    "id": ("a non-empty string", lambda v: isinstance(v, str) and 0 < len(v) <= 64),
    "content_head": ("64 lowercase hex digits", lambda v: isinstance(v, str) and re.fullmatch(r"[0-9a-f]{64}", v)
                     is not None),
    "recall_target": ("a number in (0, 1]", lambda v: isinstance(v, int | float) and not isinstance(v, bool)
                      and 0 < v <= 1),
}


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def check_meta_types(path: Path, meta: dict[str, Any]) -> None:
    """``GalleryCorruptError`` naming the file and field when a gallery.json field has the wrong type."""
    for key, (what, valid) in _META_FIELDS.items():
        if key in meta and not valid(meta[key]):
            raise GalleryCorruptError(f"{path}: field {key!r} must be {what}, got {json.dumps(meta[key])[:80]}")
