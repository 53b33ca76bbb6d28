"""A built synthetic world: ``manifest.jsonl`` beside its images, one JSON object per line.

Fields read (others are kept in ``extra`` untouched): ``id`` (str or int), ``image`` (path relative to
the world folder), ``identity`` (int), ``outfit`` (int), ``attributes`` (canonical ontology keys and
values), ``camera`` (str or int), ``modality`` (``rgb``/``ir``/``sketch``), ``resolution``
(``HR``/``mild``/``mid``/``ultra``), ``descriptions`` ({level: text}, levels UC..UF); optional ``time``,
``daytime``, ``view``, and ``split`` (default ``train``: a world is built per purpose, and a benchmark
world is built from a seed never used in training).

A sample's ``captions`` are its descriptions from UC to UF; ``extra`` holds ``id``, ``attributes``,
``descriptions``, ``resolution``, ``relative_image`` and the optional fields.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.ingest.datasets.records import (
    DatasetFormatError,
    DatasetIndex,
    DatasetNotFoundError,
    Sample,
    as_identity,
    as_relative_path,
    as_text,
    existing_image,
    require_field,
)
from engine.kernel import jsonio
from engine.kernel.ontology import LEVELS, ONTOLOGY
from engine.kernel.vocabulary import IMAGE_MODALITIES, WORLD_RESOLUTIONS

MANIFEST = "manifest.jsonl"
OPTIONAL_FIELDS: tuple[str, ...] = ("time", "daytime", "view")


def manifest_path(root: Path) -> Path:
    """The manifest of a world folder (or the manifest file itself)."""
    root = Path(root)
    if root.is_file():
        return root
    if not root.is_dir():
        raise DatasetNotFoundError(root, "world folder")
    manifest = root / MANIFEST
    if not manifest.is_file():
        raise DatasetNotFoundError(manifest, "world manifest")
    return manifest


def read_manifest(manifest: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, record) for every non-blank line; bad JSON or bytes that are not UTF-8 name the file and
    line."""
    records = []
    with open(manifest, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DatasetFormatError(manifest, f"line {number}", None,
                                         f"not UTF-8 text (byte {exc.start + 1})") from None
            if not line.strip():
                continue
            try:
                record = jsonio.loads(line, "manifest")
            except jsonio.JsonInputError as exc:  # not JSON, nested too deep, too large: the line named
                problem = str(exc).removeprefix("manifest: ").replace("not valid JSON", "invalid JSON:", 1)
                raise DatasetFormatError(manifest, f"line {number}", None, problem) from None
            if not isinstance(record, dict):
                raise DatasetFormatError(manifest, f"line {number}", None,
                                         f"expected a JSON object, got {type(record).__name__}")
            records.append((number, record))
    return records


def read_world(root: Path, *, check_images: bool = True) -> DatasetIndex:
    """Read a world folder (or its manifest file) into a ``DatasetIndex``; image paths resolve against the
    manifest's folder."""
    manifest = manifest_path(root)
    base = manifest.parent
    samples = []
    seen: dict[str, int] = {}
    for number, record in read_manifest(manifest):
        sample = world_sample(record, manifest, f"line {number}", base, check_images)
        if sample.extra["id"] in seen:
            raise DatasetFormatError(manifest, f"line {number}", "id",
                                     f"duplicate id {sample.extra['id']!r} (first on line {seen[sample.extra['id']]})")
        seen[sample.extra["id"]] = number
        samples.append(sample)
    return DatasetIndex("world", base, tuple(samples), {"manifest": str(manifest)})


def world_sample(record: dict[str, Any], file: Path, where: str, base: Path, check_images: bool) -> Sample:
    """Validate one manifest record and turn it into a ``Sample``."""
    raw_id = require_field(record, file, where, "id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or str(raw_id) == "":
        raise DatasetFormatError(file, where, "id", f"expected a non-empty string or integer, got {raw_id!r}")
    relative = as_relative_path(require_field(record, file, where, "image"), file, where, "image")
    identity = as_identity(require_field(record, file, where, "identity"), file, where, "identity")
    outfit = as_identity(require_field(record, file, where, "outfit"), file, where, "outfit")
    attributes = _attributes(require_field(record, file, where, "attributes"), file, where)
    camera = require_field(record, file, where, "camera")
    if isinstance(camera, bool) or not isinstance(camera, (str, int)) or str(camera) == "":
        raise DatasetFormatError(file, where, "camera", f"expected a camera name or number, got {camera!r}")
    modality = _choice(require_field(record, file, where, "modality"), IMAGE_MODALITIES, file, where, "modality")
    resolution = _choice(require_field(record, file, where, "resolution"), WORLD_RESOLUTIONS, file, where, "resolution")
    descriptions = _descriptions(require_field(record, file, where, "descriptions"), file, where)
    split = as_text(record.get("split", "train"), file, where, "split")
    extra = {"id": str(raw_id), "attributes": attributes, "descriptions": descriptions, "resolution": resolution,
             "relative_image": relative}
    extra.update({name: record[name] for name in OPTIONAL_FIELDS if name in record})
    return Sample(image=existing_image(base, relative, file, where, "image", check_images), identity=identity,
                  split=split, captions=tuple(descriptions[level] for level in LEVELS if level in descriptions),
                  camera=str(camera), modality=modality, outfit=outfit, extra=extra)


def _choice(value: Any, allowed: tuple[str, ...], file: Path, where: str, name: str) -> str:
    if value not in allowed:
        raise DatasetFormatError(file, where, name, f"{value!r} is not one of {list(allowed)}")
    return value


def _attributes(value: Any, file: Path, where: str) -> dict[str, str]:
    if not isinstance(value, dict):
        raise DatasetFormatError(file, where, "attributes", f"expected an object, got {type(value).__name__}")
    for key, item in value.items():
        if key not in ONTOLOGY.attributes:
            raise DatasetFormatError(file, where, f"attributes.{key}", "unknown attribute key")
        if item not in ONTOLOGY.attributes[key]:
            raise DatasetFormatError(file, where, f"attributes.{key}",
                                     f"value {item!r} is not one of {list(ONTOLOGY.attributes[key])}")
    return dict(value)


def _descriptions(value: Any, file: Path, where: str) -> dict[str, str]:
    if not isinstance(value, dict):
        raise DatasetFormatError(file, where, "descriptions", f"expected an object, got {type(value).__name__}")
    for level, text in value.items():
        if level not in LEVELS:
            raise DatasetFormatError(file, where, f"descriptions.{level}", f"level is not one of {list(LEVELS)}")
        if not isinstance(text, str) or not text.strip():
            raise DatasetFormatError(file, where, f"descriptions.{level}", f"expected a non-empty string, got {text!r}")
    return dict(value)
