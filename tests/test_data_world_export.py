"""World manifest reader and the CUHK-PEDES export round trip (a hand-written world, not the builder)."""

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from engine.ingest.datasets import DatasetFormatError, DatasetNotFoundError, read_dataset
from engine.kernel.ontology import ATTRIBUTE_KEYS, LEVELS, ONTOLOGY
from engine.lab.data.export import export_cuhk_pedes, identity_splits


def _attributes(k: int) -> dict:
    return {key: ONTOLOGY.attributes[key][(k + i) % len(ONTOLOGY.attributes[key])]
            for i, key in enumerate(ATTRIBUTE_KEYS)}


def write_world(root: Path, identities: int = 10) -> list[dict]:
    """Per identity: RGB HR, RGB mid, IR HR and sketch HR images, one outfit."""
    records = []
    for identity in range(identities):
        for n, (modality, resolution) in enumerate([("rgb", "HR"), ("rgb", "mid"), ("ir", "HR"), ("sketch", "HR")]):
            rel = f"images/{identity:03d}/{n}.png"
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            assert cv2.imwrite(str(root / rel), np.full((16, 8, 3), identity * 10, np.uint8))
            records.append({"id": f"{identity:03d}-{n}", "image": rel, "identity": identity, "outfit": 0,
                            "attributes": _attributes(identity), "camera": n % 2, "time": 12.5, "daytime": "day",
                            "modality": modality, "resolution": resolution, "view": "front",
                            "descriptions": {lv: f"{lv} text of person {identity}" for lv in LEVELS}})
    (root / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return records


def test_world_reader(tmp_path):
    records = write_world(tmp_path, identities=3)
    index = read_dataset("world", tmp_path)
    assert len(index) == len(records) == 12 and index.identities == (0, 1, 2)
    sample = index.samples[2]
    assert sample.modality == "ir" and sample.camera == "0" and sample.outfit == 0 and sample.split == "train"
    assert sample.captions == tuple(f"{lv} text of person 0" for lv in LEVELS)
    assert sample.extra["resolution"] == "HR" and sample.extra["attributes"] == _attributes(0)
    assert sample.extra["daytime"] == "day" and sample.image == tmp_path / "images/000/2.png"
    assert len(read_dataset("world", tmp_path / "manifest.jsonl")) == 12


@pytest.mark.parametrize(("edit", "pattern"), [
    (lambda r: r.pop("identity"), r"manifest\.jsonl: line 2: field 'identity': missing"),
    (lambda r: r.__setitem__("modality", "thermal"), r"line 2: field 'modality': 'thermal' is not one of"),
    (lambda r: r.__setitem__("resolution", "low"), r"line 2: field 'resolution'"),
    (lambda r: r["attributes"].__setitem__("top_color", "teal"), r"line 2: field 'attributes.top_color': value 'teal'"),
    (lambda r: r["attributes"].__setitem__("glasses", "yes"), r"line 2: field 'attributes.glasses': unknown"),
    (lambda r: r["descriptions"].__setitem__("XL", "x"), r"line 2: field 'descriptions.XL'"),
    (lambda r: r.__setitem__("outfit", 1.5), r"line 2: field 'outfit': expected an integer"),
    (lambda r: r.__setitem__("image", "images/none.png"), r"line 2: field 'image': image not found"),
    (lambda r: r.__setitem__("id", "000-0"), r"line 2: field 'id': duplicate id '000-0' \(first on line 1\)"),
])
def test_world_manifest_errors(tmp_path, edit, pattern):
    records = write_world(tmp_path, identities=1)
    edit(records[1])
    (tmp_path / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(DatasetFormatError, match=pattern):
        read_dataset("world", tmp_path)


def test_world_manifest_bad_json_and_missing(tmp_path):
    write_world(tmp_path, identities=1)
    with open(tmp_path / "manifest.jsonl", "a") as fh:
        fh.write("\n{not json\n")
    with pytest.raises(DatasetFormatError, match=r"manifest\.jsonl: line 6: invalid JSON"):
        read_dataset("world", tmp_path)
    with pytest.raises(DatasetNotFoundError, match="world manifest not found"):
        read_dataset("world", tmp_path / "images")
    with pytest.raises(DatasetNotFoundError, match="world folder not found"):
        read_dataset("world", tmp_path / "missing")


def test_identity_splits_are_deterministic_80_10_10():
    split = identity_splits(range(20), seed=0)
    assert split == identity_splits(reversed(range(20)), seed=0)
    assert sorted(split.values()).count("train") == 16 and list(split.values()).count("test") == 2
    tiny = identity_splits([5, 6, 7])
    assert sorted(tiny.values()) == ["test", "train", "val"]
    with pytest.raises(ValueError, match="fractions"):
        identity_splits([1, 2], fractions=(0.5, 0.6, 0.1))


@pytest.mark.parametrize("out_name", ["export/cuhk.json", "cuhk.json"])
def test_export_round_trip_with_cuhk_reader(tmp_path, out_name):
    world = tmp_path / "world"
    records = write_world(world, identities=10)
    out = (world if out_name == "cuhk.json" else tmp_path) / out_name
    n = export_cuhk_pedes(world, out)
    rgb = [r for r in records if r["modality"] == "rgb"]
    assert n == len(rgb) == 20
    raw = json.loads(out.read_text())
    assert set(raw[0]) == {"split", "captions", "file_path", "processed_tokens", "id"}
    assert raw[0]["processed_tokens"][0] == ["uc", "text", "of", "person", "0"]
    if out_name == "cuhk.json":
        index = read_dataset("cuhk-pedes", out)
    else:  # its paths climb out of export/ into world/: the folder holding both must be named as the root
        with pytest.raises(DatasetFormatError, match=r"resolves to .*world.*outside the allowed folder"):
            read_dataset("cuhk-pedes", out)
        index = read_dataset("cuhk-pedes", out, allowed_root=tmp_path)
    assert [s.image.resolve() for s in index] == [(world / r["image"]).resolve() for r in rgb]
    assert [s.identity for s in index] == [r["identity"] for r in rgb]
    assert index.samples[0].captions == tuple(rgb[0]["descriptions"][lv] for lv in LEVELS)
    per_identity = {}
    for s in index:
        per_identity.setdefault(s.identity, set()).add(s.split)
    assert all(len(v) == 1 for v in per_identity.values())
    assert [len(index.split(s).identities) for s in ("train", "val", "test")] == [8, 1, 1]
    assert not list(out.parent.glob(".*.tmp"))


def test_export_resolution_filter_and_empty(tmp_path):
    write_world(tmp_path, identities=3)
    assert export_cuhk_pedes(tmp_path, tmp_path / "hr.json", resolutions={"HR"}) == 3
    with pytest.raises(ValueError, match="resolutions"):
        export_cuhk_pedes(tmp_path, tmp_path / "x.json", resolutions={"4K"})
    lines = [json.loads(x) for x in (tmp_path / "manifest.jsonl").read_text().splitlines()]
    (tmp_path / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines if r["modality"] != "rgb"))
    with pytest.raises(ValueError, match="no RGB images"):
        export_cuhk_pedes(tmp_path, tmp_path / "none.json")
