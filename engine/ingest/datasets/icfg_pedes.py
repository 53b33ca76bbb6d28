"""ICFG-PEDES: ``ICFG-PEDES.json`` with the CUHK-PEDES record shape (``split``, ``captions``,
``file_path``, ``processed_tokens``, ``id``), images under ``imgs/``; splits train / test."""

from __future__ import annotations

from pathlib import Path

from engine.ingest.datasets.captioned import CaptionedLayout, read_captioned
from engine.ingest.datasets.records import DatasetIndex

LAYOUT = CaptionedLayout(name="icfg-pedes", annotation_names=("ICFG-PEDES.json",), path_field="file_path",
                         splits=("train", "test"))


def read_icfg_pedes(root: Path, *, check_images: bool = True, allowed_root: Path | None = None) -> DatasetIndex:
    """Read ICFG-PEDES from its folder or from its JSON file (see ``captioned``)."""
    return read_captioned(LAYOUT, root, check_images=check_images, allowed_root=allowed_root)
