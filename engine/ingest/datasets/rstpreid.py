"""RSTPReid: ``data_captions.json`` (records ``id``, ``img_path``, ``captions``, ``split``), images under
``imgs/``; splits train / val / test."""

from __future__ import annotations

from pathlib import Path

from engine.ingest.datasets.captioned import CaptionedLayout, read_captioned
from engine.ingest.datasets.records import DatasetIndex

LAYOUT = CaptionedLayout(name="rstpreid", annotation_names=("data_captions.json",), path_field="img_path",
                         splits=("train", "val", "test"))


def read_rstpreid(root: Path, *, check_images: bool = True, allowed_root: Path | None = None) -> DatasetIndex:
    """Read RSTPReid from its folder or from its JSON file (see ``captioned``)."""
    return read_captioned(LAYOUT, root, check_images=check_images, allowed_root=allowed_root)
