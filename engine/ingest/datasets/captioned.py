"""Shared reading of the text-person-search layouts: one JSON list of image records with captions.

CUHK-PEDES, ICFG-PEDES, RSTPReid and UFine6926 all ship one JSON array whose records name an image
(relative path), a person id, a split and a list of captions; they differ in the file name, the name
of the path field, the allowed splits and where the images live.

Finding images (binding for every reader built on this module and for ``engine.lab.data.export``):
- ROOT is the dataset folder: the annotation file is looked up by its standard name(s) inside it and
  image paths resolve against ``ROOT/<image folder>`` (``imgs/`` for CUHK/ICFG/RSTP; ROOT itself for
  UFine6926, whose paths already start with ``images/``); when that folder is absent, against ROOT.
- ROOT is the annotation JSON file itself: image paths resolve against the folder holding the file.
  This is how an exported world (``lineup world export``) is read back.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from engine.ingest.datasets.records import (
    DatasetFormatError,
    DatasetIndex,
    DatasetNotFoundError,
    Sample,
    as_captions,
    as_identity,
    as_relative_path,
    as_text,
    existing_image,
    require_field,
)
from engine.kernel import jsonio


@dataclass(frozen=True)
class CaptionedLayout:
    """What distinguishes one captioned JSON layout from another."""

    name: str
    annotation_names: tuple[str, ...]
    path_field: str
    splits: tuple[str, ...]
    image_folder: str | None = "imgs"
    any_single_json: bool = False


def load_json(file: Path) -> object:
    """Parse a JSON file; a syntax error names the file, line and column."""
    try:
        with open(file, "rb") as fh:
            raw = fh.read(jsonio.MAX_BYTES + 1)
        return json.loads(raw.decode("utf-8")) if _shallow(raw, file) else None
    except json.JSONDecodeError as exc:
        raise DatasetFormatError(file, f"line {exc.lineno} column {exc.colno}", None,
                                 f"invalid JSON: {exc.msg}") from exc
    except UnicodeDecodeError as exc:
        raise DatasetFormatError(file, None, None, f"not UTF-8 text: {exc}") from exc


def _shallow(raw: bytes, file: Path) -> bool:
    """Refuse a document over ``jsonio``'s size or depth limits (docs/hardening.md) before it is parsed."""
    if len(raw) > jsonio.MAX_BYTES:
        raise DatasetFormatError(file, None, None, f"more than the {jsonio.MAX_BYTES:,} bytes of JSON allowed")
    depth = jsonio.nesting_depth(raw)
    if depth > jsonio.MAX_DEPTH:
        raise DatasetFormatError(file, None, None, f"JSON nested {depth} levels deep, more than the "
                                                   f"{jsonio.MAX_DEPTH} allowed")
    return True


def locate(layout: CaptionedLayout, root: Path) -> tuple[Path, Path]:
    """(annotation file, image base folder) for a dataset folder or an annotation file."""
    root = Path(root)
    if root.is_file():
        return root, root.parent
    if not root.is_dir():
        raise DatasetNotFoundError(root, f"{layout.name} root")
    annotation = next((root / n for n in layout.annotation_names if (root / n).is_file()), None)
    if annotation is None and layout.any_single_json:
        candidates = sorted(p for p in root.glob("*.json") if p.is_file())
        if len(candidates) == 1:
            annotation = candidates[0]
    if annotation is None:
        raise DatasetNotFoundError(root / layout.annotation_names[0],
                                   f"{layout.name} annotation file (expected one of {list(layout.annotation_names)})")
    base = root
    if layout.image_folder is not None and (root / layout.image_folder).is_dir():
        base = root / layout.image_folder
    return annotation, base


def read_captioned(layout: CaptionedLayout, root: Path, *, check_images: bool = True,
                   allowed_root: Path | None = None) -> DatasetIndex:
    """Read a captioned JSON layout into a ``DatasetIndex`` (one ``Sample`` per image record). Image paths must
    resolve inside ``allowed_root``: by default the dataset folder given, or the folder holding the annotation
    file when the file itself is given."""
    annotation, base = locate(layout, root)
    allowed = Path(allowed_root) if allowed_root is not None else (annotation.parent if Path(root).is_file()
                                                                   else Path(root))
    records = load_json(annotation)
    if not isinstance(records, list):
        raise DatasetFormatError(annotation, None, None,
                                 f"expected a JSON array of image records, got {type(records).__name__}")
    samples = [_sample(layout, record, i, annotation, base, check_images, allowed) for i, record in enumerate(records)]
    return DatasetIndex(layout.name, Path(root), tuple(samples),
                        {"annotation": str(annotation), "image_root": str(base)})


def _sample(layout: CaptionedLayout, record: object, i: int, file: Path, base: Path, check: bool,
            allowed: Path) -> Sample:
    relative = as_relative_path(require_field(record, file, i, layout.path_field), file, i, layout.path_field)
    identity = as_identity(require_field(record, file, i, "id"), file, i, "id")
    split = _split(require_field(record, file, i, "split"), layout.splits, file, i)
    captions = as_captions(require_field(record, file, i, "captions"), file, i, "captions")
    image = existing_image(base, relative, file, i, layout.path_field, check, allowed)
    return Sample(image=image, identity=identity, split=split, captions=captions, modality="rgb",
                  extra={"path": relative, "record": i})


def _split(value: object, allowed: Collection[str], file: Path, i: int) -> str:
    split = as_text(value, file, i, "split")
    if split not in allowed:
        raise DatasetFormatError(file, i, "split", f"{split!r} is not one of {list(allowed)}")
    return split

