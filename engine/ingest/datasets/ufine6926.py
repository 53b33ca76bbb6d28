"""UFine6926 (UFineBench): one JSON array of records ``{"split", "id", "file_path", "captions"}`` with
``file_path`` like ``images/1.jpg`` relative to the dataset folder (UFineBench README, "Annotation
format"; loaders built on it join the dataset folder with ``file_path``).

The README does not name the annotation file. Inside a dataset folder this reader takes the first of
``UFine6926.json``, ``ufine6926.json``, ``UFine6926_Annotations.json`` (the name pattern of the sibling
``UFine3C_Annotations.json``), else the folder's only ``*.json``; or pass the JSON file itself.
Splits: train / val / test (the README shows ``train``; ``val``/``test`` accepted).
"""

from __future__ import annotations

from pathlib import Path

from engine.ingest.datasets.captioned import CaptionedLayout, read_captioned
from engine.ingest.datasets.records import DatasetIndex

LAYOUT = CaptionedLayout(name="ufine6926",
                         annotation_names=("UFine6926.json", "ufine6926.json", "UFine6926_Annotations.json"),
                         path_field="file_path", splits=("train", "val", "test"), image_folder=None,
                         any_single_json=True)


def read_ufine6926(root: Path, *, check_images: bool = True,
                   allowed_root: Path | None = None) -> DatasetIndex:
    """Read UFine6926 from its folder or from its JSON file (see the module docstring)."""
    return read_captioned(LAYOUT, root, check_images=check_images, allowed_root=allowed_root)
