"""CUHK-PEDES: ``reid_raw.json`` (records ``split``, ``captions``, ``file_path``, ``processed_tokens``, ``id``),
images under ``imgs/`` (e.g. ``imgs/CUHK01/0363004.png``); splits train / val / test."""

from __future__ import annotations

from pathlib import Path

from engine.ingest.datasets.captioned import CaptionedLayout, read_captioned
from engine.ingest.datasets.records import DatasetIndex

LAYOUT = CaptionedLayout(name="cuhk-pedes", annotation_names=("reid_raw.json",), path_field="file_path",
                         splits=("train", "val", "test"))


def read_cuhk_pedes(root: Path, *, check_images: bool = True, allowed_root: Path | None = None) -> DatasetIndex:
    """Read CUHK-PEDES from its folder or from a ``reid_raw.json``-shaped file (see ``captioned``)."""
    return read_captioned(LAYOUT, root, check_images=check_images, allowed_root=allowed_root)
