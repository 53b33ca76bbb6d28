"""Paths read from data files stay inside their allowed root: dataset annotation files, world manifests,
gallery.json view files, the gallery journal, the attribute evidence store; ``..``, absolute paths and symbolic
links that lead out are refused by name."""

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from engine.index import Gallery, GalleryCorruptError, GalleryItem
from engine.index.evidence_table import EvidenceTable, folder_of
from engine.index.journal import JOURNAL_FILE
from engine.ingest import ingest
from engine.ingest.datasets import DatasetFormatError, read_dataset, read_spec
from engine.kernel.ontology import ATTRIBUTE_KEYS, LEVELS, ONTOLOGY
from engine.kernel.paths import PathEscapeError, contained, is_contained
from lineup.cli import app


def _image(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    assert cv2.imwrite(str(path), np.full((32, 16, 3), 90, np.uint8))
    return path


def _world_record(image: str) -> dict:
    return {"id": "0", "image": image, "identity": 0, "outfit": 0, "camera": 0, "modality": "rgb",
            "resolution": "HR", "attributes": {key: ONTOLOGY.attributes[key][0] for key in ATTRIBUTE_KEYS},
            "descriptions": {lv: f"{lv} text" for lv in LEVELS}}


def test_contained_refuses_climbing_absolute_and_symlinked_escapes(tmp_path):
    root = tmp_path / "root"
    _image(root / "a" / "x.png")
    _image(tmp_path / "secret" / "x.png")
    assert contained(root, "a/x.png") == (root / "a" / "x.png").resolve()
    assert contained(root, "a/../a/x.png") == (root / "a" / "x.png").resolve()
    with pytest.raises(PathEscapeError, match=r"'\.\./secret/x\.png' resolves to .*secret.*outside the allowed"):
        contained(root, "../secret/x.png", "image")
    with pytest.raises(PathEscapeError):
        contained(root, "/etc/passwd")
    (root / "link").symlink_to(tmp_path / "secret")
    assert not is_contained(root, "link/x.png")
    (root / "inner").symlink_to(root / "a")
    assert is_contained(root, "inner/x.png")


def test_world_manifest_image_outside_the_world_is_refused(tmp_path):
    world = tmp_path / "world"
    _image(tmp_path / "secret" / "x.jpg")
    world.mkdir()
    (world / "manifest.jsonl").write_text(json.dumps(_world_record("../secret/x.jpg")) + "\n")
    with pytest.raises(DatasetFormatError, match=r"line 1: field 'image': '\.\./secret/x\.jpg' resolves to"):
        read_dataset("world", world)

    class Encoder:
        views, fingerprint = {"rgb": 4}, "e-1"

        def __call__(self, crops, modalities, resolutions):
            return {"rgb": np.tile(np.eye(4, dtype=np.float32)[:1], (len(crops), 1))}

    summary = ingest(world, tmp_path / "g", Encoder())
    (report,) = summary.sources
    assert report.status == "skipped" and "outside the allowed folder" in report.reason
    assert not list((tmp_path / "g" / "crops").rglob("*.*"))


def test_annotation_paths_outside_the_dataset_root_are_refused(tmp_path):
    root = tmp_path / "CUHK-PEDES"
    _image(root / "imgs" / "p1" / "0.jpg")
    record = {"id": 1, "split": "train", "captions": ["a man"], "processed_tokens": [["a"]]}
    (root / "reid_raw.json").write_text(json.dumps([{**record, "file_path": "p1/0.jpg"},
                                                    {**record, "file_path": "../../../../etc/passwd"}]))
    with pytest.raises(DatasetFormatError, match=r"record 1: field 'file_path': .*etc/passwd.*outside the allowed"):
        read_dataset("cuhk-pedes", root, check_images=False)
    with pytest.raises(DatasetFormatError, match="outside the allowed"):
        read_spec(f"cuhk-pedes:{root / 'reid_raw.json'}", check_images=False)
    # an explicit allowed root admits paths that climb into it, and no further
    (root / "reid_raw.json").write_text(json.dumps([{**record, "file_path": "../sibling/0.jpg"}]))
    _image(tmp_path / "sibling" / "0.jpg")
    index = read_spec(f"cuhk-pedes:{root / 'reid_raw.json'}?root={tmp_path}")
    assert index.samples[0].image.resolve() == (tmp_path / "sibling" / "0.jpg").resolve()
    with pytest.raises(DatasetFormatError, match="outside the allowed"):
        read_spec(f"cuhk-pedes:{root / 'reid_raw.json'}?root={root}")
    with pytest.raises(ValueError, match="lists its folders"):
        read_dataset("market1501", root, allowed_root=tmp_path)


def _gallery(tmp_path) -> Path:
    gallery = Gallery.create(tmp_path / "g", {"rgb": 4}, "ckpt")
    crop = _image(tmp_path / "crop.png")
    vectors = np.eye(4, dtype=np.float32)[:2]
    gallery.add([GalleryItem(id=f"i{k}", source="clip.mp4", frame=k) for k in range(2)], {"rgb": vectors})
    del crop
    return tmp_path / "g"


def test_gallery_view_file_outside_the_gallery_is_refused_and_rebuild_writes_nothing_outside(tmp_path):
    root = _gallery(tmp_path)
    meta = json.loads((root / "gallery.json").read_text())
    meta["views"]["rgb"]["file"] = "../../outside/owned"
    (root / "gallery.json").write_text(json.dumps(meta))
    (tmp_path / "outside").mkdir()
    with pytest.raises(GalleryCorruptError, match=r"view 'rgb' file '\.\./\.\./outside/owned.*outside the allowed"):
        Gallery.open(root)
    result = CliRunner().invoke(app, ["gallery", "rebuild", str(root)])
    assert result.exit_code != 0 and "outside the allowed folder" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert list((tmp_path / "outside").iterdir()) == []


def test_a_journal_that_moves_files_out_of_the_gallery_is_refused(tmp_path):
    root = _gallery(tmp_path)
    victim = _image(tmp_path / "victim.png")
    meta = json.loads((root / "gallery.json").read_text())
    (root / JOURNAL_FILE).write_text(json.dumps({"moves": [], "gallery": meta, "delete": ["../victim.png"],
                                                 "gallery_id": meta["id"]}))
    with pytest.raises(GalleryCorruptError, match="journal deletion '../victim.png'.*outside"):
        Gallery.open(root, finish_changes=True)
    assert victim.is_file()


def test_evidence_store_file_names_stay_in_its_folder(tmp_path):
    root = _gallery(tmp_path)
    folder = folder_of(root)
    folder.mkdir(parents=True, exist_ok=True)
    from engine.index.evidence_table import COLUMN_NAMES, FORMAT_VERSION, META_FILE

    meta = {"format": FORMAT_VERSION, "generation": "0/../../../x", "rows": 0, "ids_bytes": 0,
            "columns": list(COLUMN_NAMES), "sources": {}}
    (folder / META_FILE).write_text(json.dumps(meta))
    with pytest.raises(GalleryCorruptError, match="generation must be a whole number"):
        EvidenceTable.read(root)
    shutil.rmtree(folder)
