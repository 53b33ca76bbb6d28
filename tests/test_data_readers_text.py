"""Readers of the text-person-search layouts (CUHK-PEDES, ICFG-PEDES, RSTPReid, UFine6926) on tiny fixtures."""

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from engine.ingest.datasets import (
    READERS,
    DatasetFormatError,
    DatasetNotFoundError,
    parse_dataset_spec,
    read_dataset,
    read_spec,
)


def _image(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    assert cv2.imwrite(str(path), np.full((8, 4, 3), 120, np.uint8))


def _records(path_field: str, splits: list[str], prefix: str = "") -> list[dict]:
    """Three identities (one per split), two images each, two captions per image."""
    out = []
    for identity, split in zip((11, 12, 13), splits, strict=True):
        for k in range(2):
            out.append({"id": identity, "split": split, path_field: f"{prefix}p{identity}/{k}.jpg",
                        "captions": [f"person {identity} view {k}", f"another text for {identity}"],
                        "processed_tokens": [["person"], ["another"]]})
    return out


def _layout(root: Path, annotation: str, records: list[dict], image_dir: str | None, path_field: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / annotation).write_text(json.dumps(records), encoding="utf-8")
    base = root / image_dir if image_dir else root
    for record in records:
        _image(base / record[path_field])
    return root


@pytest.fixture
def cuhk(tmp_path):
    return _layout(tmp_path / "CUHK-PEDES", "reid_raw.json", _records("file_path", ["train", "val", "test"]),
                   "imgs", "file_path")


def test_cuhk_pedes_counts_splits_identities_captions(cuhk):
    index = read_dataset("cuhk-pedes", cuhk)
    assert len(index) == 6 and index.captions == 12
    assert index.splits == ("train", "val", "test")
    assert index.identities == (11, 12, 13)
    test = index.split("test")
    assert [s.identity for s in test] == [13, 13]
    first = index.samples[0]
    assert first.image == cuhk / "imgs" / "p11" / "0.jpg" and first.image.is_file()
    assert first.captions == ("person 11 view 0", "another text for 11")
    assert first.modality == "rgb" and first.camera is None and first.outfit is None
    with pytest.raises(ValueError, match="no split 'query'"):
        index.split("query")


def test_icfg_pedes_reads_train_and_test_and_rejects_val(tmp_path):
    root = _layout(tmp_path / "ICFG", "ICFG-PEDES.json", _records("file_path", ["train", "test", "test"]),
                   "imgs", "file_path")
    index = read_dataset("icfg-pedes", root)
    assert index.splits == ("train", "test") and len(index.split("test")) == 4
    bad = _layout(tmp_path / "ICFG2", "ICFG-PEDES.json", _records("file_path", ["train", "val", "test"]),
                  "imgs", "file_path")
    with pytest.raises(DatasetFormatError, match=r"ICFG-PEDES\.json: record 2: field 'split': 'val'"):
        read_dataset("icfg-pedes", bad)


def test_rstpreid_uses_img_path(tmp_path):
    root = _layout(tmp_path / "RSTPReid", "data_captions.json", _records("img_path", ["train", "val", "test"]),
                   "imgs", "img_path")
    index = read_dataset("rstpreid", root)
    assert len(index) == 6 and index.split("val").identities == (12,)
    assert index.samples[-1].image == root / "imgs" / "p13" / "1.jpg"


def test_ufine6926_paths_are_relative_to_the_dataset_folder(tmp_path):
    records = _records("file_path", ["train", "train", "test"], prefix="images/")
    root = _layout(tmp_path / "UFine6926", "UFine6926.json", records, None, "file_path")
    index = read_dataset("ufine6926", root)
    assert index.samples[0].image == root / "images" / "p11" / "0.jpg"
    assert index.split("train").identities == (11, 12)
    other = _layout(tmp_path / "U2", "annotations_v1.json", records, None, "file_path")
    assert len(read_dataset("ufine6926", other)) == 6  # the folder's only JSON


def test_annotation_file_as_root_resolves_images_beside_it(cuhk):
    index = read_dataset("cuhk-pedes", cuhk / "reid_raw.json", check_images=False)
    assert index.samples[0].image == cuhk / "p11" / "0.jpg"
    with pytest.raises(DatasetFormatError, match="image not found"):
        read_dataset("cuhk-pedes", cuhk / "reid_raw.json")


def _broken(cuhk: Path, edit) -> Path:
    records = json.loads((cuhk / "reid_raw.json").read_text())
    edit(records)
    (cuhk / "reid_raw.json").write_text(json.dumps(records))
    return cuhk


@pytest.mark.parametrize(("edit", "pattern"), [
    (lambda r: r[3].pop("id"), r"reid_raw\.json: record 3: field 'id': missing"),
    (lambda r: r[1].__setitem__("captions", "one caption"), r"record 1: field 'captions': expected a non-empty list"),
    (lambda r: r[2].__setitem__("captions", ["ok", 5]), r"record 2: field 'captions\[1\]'"),
    (lambda r: r[0].__setitem__("id", "eleven"), r"record 0: field 'id': expected an integer identity"),
    (lambda r: r[4].__setitem__("file_path", "/abs/x.jpg"), r"record 4: field 'file_path': expected a relative path"),
    (lambda r: r[5].__setitem__("file_path", "p13/missing.jpg"), r"record 5: field 'file_path': image not found"),
    (lambda r: r[0].__setitem__("split", "dev"), r"record 0: field 'split': 'dev' is not one of"),
    (lambda r: r.__setitem__(1, ["not", "an", "object"]), r"record 1: expected a JSON object"),
])
def test_malformed_records_name_file_record_and_field(cuhk, edit, pattern):
    root = _broken(cuhk, edit)
    with pytest.raises(DatasetFormatError, match=pattern) as info:
        read_dataset("cuhk-pedes", root)
    assert info.value.file == root / "reid_raw.json"


def test_string_ids_are_accepted(cuhk):
    root = _broken(cuhk, lambda r: r[0].__setitem__("id", "11"))
    assert read_dataset("cuhk-pedes", root).samples[0].identity == 11


def test_invalid_json_and_wrong_top_level(cuhk):
    (cuhk / "reid_raw.json").write_text('[{"id": 1,\n "split": }]')
    with pytest.raises(DatasetFormatError, match=r"reid_raw\.json: line 2 column \d+: invalid JSON"):
        read_dataset("cuhk-pedes", cuhk)
    (cuhk / "reid_raw.json").write_text('{"id": 1}')
    with pytest.raises(DatasetFormatError, match="expected a JSON array"):
        read_dataset("cuhk-pedes", cuhk)


def test_missing_root_and_missing_annotation(tmp_path):
    with pytest.raises(DatasetNotFoundError, match="cuhk-pedes root not found"):
        read_dataset("cuhk-pedes", tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetNotFoundError, match=r"annotation file .*reid_raw\.json"):
        read_dataset("cuhk-pedes", tmp_path / "empty")
    with pytest.raises(FileNotFoundError):
        read_dataset("rstpreid", tmp_path / "empty")


def test_dataset_specs(cuhk):
    spec = parse_dataset_spec(f"CUHK-PEDES:{cuhk}")
    assert spec.reader == "cuhk-pedes" and spec.path == cuhk
    assert len(read_spec(f"cuhk-pedes:{cuhk}")) == 6
    assert parse_dataset_spec("world:/a/b:c").path == Path("/a/b:c")
    for bad in ("cuhk-pedes", "cuhk-pedes:", "mars:/data"):
        with pytest.raises(ValueError, match="READER:PATH|unknown reader"):
            parse_dataset_spec(bad)
    with pytest.raises(ValueError, match="unknown dataset reader"):
        read_dataset("mars", cuhk)
    assert set(READERS) == {"cuhk-pedes", "icfg-pedes", "rstpreid", "ufine6926", "sysu-mm01", "market1501",
                            "pku-sketch", "world"}
