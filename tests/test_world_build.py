"""World builder: manifest records, allocation, determinism across runs and workers, atomicity, CLI."""

import json
from datetime import datetime
from pathlib import Path

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from engine.kernel.ontology import ATTRIBUTE_KEYS, LEVELS, ONTOLOGY
from engine.lab.world.build import WorldBuildError, build_world, outfit_count, plan_identity
from engine.lab.world.cameras import IR_CAMERAS, RGB_CAMERAS, daytime_of
from engine.lab.world.identities import BIOMETRIC_KEYS
from engine.lab.world.modalities import RESOLUTIONS
from lineup.cli import app

FIELDS = ["id", "image", "identity", "outfit", "attributes", "camera", "time", "daytime", "modality", "resolution",
          "view", "descriptions"]


def _records(manifest: Path) -> list[dict]:
    return [json.loads(line) for line in manifest.read_text(encoding="utf-8").splitlines()]


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("world") / "w"
    calls = []
    manifest = build_world(out, identities=4, images_per_identity=6, seed=11, workers=1,
                           progress=lambda done, total: calls.append((done, total)))
    assert manifest == out / "manifest.jsonl"
    assert calls[0] == (0, 24) and calls[-1] == (24, 24)
    return out


def test_manifest_fields_and_types(world):
    records = _records(world / "manifest.jsonl")
    assert len(records) == 24 and len({r["id"] for r in records}) == 24
    for r in records:
        assert list(r)[:len(FIELDS)] == FIELDS
        assert isinstance(r["id"], str) and isinstance(r["image"], str) and (world / r["image"]).is_file()
        assert isinstance(r["identity"], int) and isinstance(r["outfit"], int) and r["outfit"] >= 0
        attrs = r["attributes"]
        ONTOLOGY.validate(attrs)
        assert list(attrs) == [k for k in ATTRIBUTE_KEYS if k in attrs]
        assert ("hat_color" in attrs) == (attrs["hat_type"] != "none")
        assert ("carrying_color" in attrs) == (attrs["carrying_type"] != "none")
        assert datetime.fromisoformat(r["time"]).isoformat(timespec="seconds") == r["time"]
        assert daytime_of(r["time"]) == r["daytime"] or r["modality"] == "sketch"
        assert r["modality"] in ("rgb", "ir", "sketch") and r["resolution"] in RESOLUTIONS
        assert r["view"] in ("front", "back", "side")
        assert set(r["descriptions"]) == set(LEVELS) and all(isinstance(t, str) and t for t in
                                                              r["descriptions"].values())
        if r["modality"] == "rgb":
            assert r["camera"] in RGB_CAMERAS and r["daytime"] == "day"
        elif r["modality"] == "ir":
            assert r["camera"] in IR_CAMERAS and r["daytime"] == "night"
        else:
            assert r["camera"] == "sketch"


def test_image_files_have_native_sizes_and_channels(world):
    for r in _records(world / "manifest.jsonl"):
        img = cv2.imread(str(world / r["image"]), cv2.IMREAD_UNCHANGED)
        assert img.shape[:2] == RESOLUTIONS[r["resolution"]]
        assert img.ndim == (3 if r["modality"] == "rgb" else 2), r["image"]
        if r["modality"] == "sketch":
            assert r["image"].endswith(".png") and (img >= 240).mean() > 0.7


def test_allocation_per_identity(world):
    records = _records(world / "manifest.jsonl")
    for identity in range(4):
        mine = [r for r in records if r["identity"] == identity]
        sketches = [r for r in mine if r["modality"] == "sketch"]
        assert len(sketches) == 1
        assert (sketches[0]["outfit"], sketches[0]["view"], sketches[0]["resolution"]) == (0, "front", "HR")
        assert {r["outfit"] for r in mine} == {0, 1}
        assert {r["modality"] for r in mine} == {"rgb", "ir", "sketch"}
        bios = {tuple(r["attributes"][k] for k in BIOMETRIC_KEYS) for r in mine}
        assert len(bios) == 1, "clothing changes keep biometrics"
        tops = {r["outfit"]: (r["attributes"]["top_type"], r["attributes"]["top_color"]) for r in mine}
        assert tops[0] != tops[1]
        days = {r["outfit"]: r["time"][:10] for r in mine if r["modality"] == "rgb"}
        assert days[0] != days[1], "a changed outfit is worn on another day"
        for outfit in (0, 1):
            rgb_cams = [r["camera"] for r in mine if r["outfit"] == outfit and r["modality"] == "rgb"]
            assert len(rgb_cams) == len(set(rgb_cams)), "same-outfit RGB images come from different cameras"


@pytest.mark.parametrize("n", [2, 5, 6, 10, 13, 24])
def test_plan_rule(n):
    shots = plan_identity(7, n, np.random.default_rng(n))
    assert len(shots) == n and [s.index for s in shots] == list(range(n))
    assert shots[0].modality == "sketch" and sum(s.modality == "sketch" for s in shots) == 1
    assert {s.outfit for s in shots} == set(range(outfit_count(n)))
    assert outfit_count(n) >= 2 or n < 6
    if n == 10:
        kinds = [(s.outfit, s.modality) for s in shots[1:]]
        assert kinds.count((0, "rgb")) == 3 and kinds.count((0, "ir")) == 2
        assert kinds.count((1, "rgb")) == 2 and kinds.count((1, "ir")) == 2
        assert sum(s.resolution != "HR" for s in shots) == 1


def test_world_json_is_written_last_and_counts_match(world):
    info = json.loads((world / "world.json").read_text(encoding="utf-8"))
    assert info["seed"] == 11 and info["identities"] == 4 and info["images_per_identity"] == 6
    assert info["counts"]["images"] == 24 and info["counts"]["outfits"] == 8
    assert info["counts"]["modality"]["sketch"] == 4
    assert [c["id"] for c in info["cameras"]] == [f"cam0{i}" for i in range(1, 9)]
    assert not list(world.glob(".*tmp"))


def test_builds_are_byte_identical_across_runs_and_workers(world, tmp_path):
    again = tmp_path / "again"
    build_world(again, identities=4, images_per_identity=6, seed=11, workers=1)
    parallel = tmp_path / "parallel"
    build_world(parallel, identities=4, images_per_identity=6, seed=11, workers=2)
    reference = _files(world)
    assert _files(again) == reference
    assert _files(parallel) == reference
    other = tmp_path / "other"
    build_world(other, identities=4, images_per_identity=6, seed=12, workers=1)
    assert _files(other)["manifest.jsonl"] != reference["manifest.jsonl"]


@pytest.mark.parametrize("kwargs,pattern", [
    ({"identities": 0}, "identities must be ≥ 1"),
    ({"identities": 2.5}, "identities must be an integer"),
    ({"identities": True}, "identities must be an integer"),
    ({"images_per_identity": 1}, "images_per_identity must be ≥ 2"),
    ({"seed": -1}, "seed must be ≥ 0"),
    ({"workers": 0}, "workers must be ≥ 1"),
    ({"progress": 5}, "progress must be callable"),
])
def test_bad_arguments(tmp_path, kwargs, pattern):
    args = {"identities": 2, "images_per_identity": 3, "seed": 0, "workers": 1}
    args.update(kwargs)
    with pytest.raises(WorldBuildError, match=pattern):
        build_world(tmp_path / "w", **args)


def test_refuses_non_empty_or_file_output(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("x")
    with pytest.raises(WorldBuildError, match="not empty"):
        build_world(tmp_path / "full", 1, 2, 0)
    (tmp_path / "file").write_text("x")
    with pytest.raises(WorldBuildError, match="not a folder"):
        build_world(tmp_path / "file", 1, 2, 0)


def test_interrupted_build_does_not_look_complete(tmp_path):
    def stop(done, total):
        if done >= 3:
            raise KeyboardInterrupt

    out = tmp_path / "w"
    with pytest.raises(KeyboardInterrupt):
        build_world(out, identities=3, images_per_identity=3, seed=0, progress=stop)
    assert not (out / "world.json").exists() and not (out / "manifest.jsonl").exists()
    assert not list(out.glob(".*tmp"))


def test_cli_world_build_and_sheet(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["world", "build", "--out", str(tmp_path / "w"), "--identities", "2",
                                 "--images-per-identity", "3", "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert len(_records(tmp_path / "w" / "manifest.jsonl")) == 6
    result = runner.invoke(app, ["world", "build", "--out", str(tmp_path / "w"), "--identities", "2"])
    assert result.exit_code == 2 and "not empty" in result.output
    result = runner.invoke(app, ["world", "build", "--out", str(tmp_path / "v"), "--identities", "2",
                                 "--palette", "vivid", "--workers", "1"])
    assert result.exit_code == 2 and "palette 'vivid' is not one of ['reference', 'wide']" in result.output
    assert not (tmp_path / "v" / "world.json").exists()
    result = runner.invoke(app, ["world", "sheet", "--out", str(tmp_path / "sheet.png"), "--identities", "1"])
    assert result.exit_code == 0, result.output
    assert cv2.imread(str(tmp_path / "sheet.png")).shape[0] > 256


def test_a_wide_palette_world_keeps_the_labels_and_repaints_the_rgb_images(world, tmp_path):
    wide = tmp_path / "wide"
    build_world(wide, identities=4, images_per_identity=6, seed=11, workers=1, palette="wide")
    assert json.loads((wide / "world.json").read_text(encoding="utf-8"))["palette"] == "wide"
    assert json.loads((world / "world.json").read_text(encoding="utf-8"))["palette"] == "reference"
    records, reference = _records(wide / "manifest.jsonl"), _records(world / "manifest.jsonl")
    assert [(r["id"], r["attributes"], r["descriptions"]) for r in records] == \
        [(r["id"], r["attributes"], r["descriptions"]) for r in reference]
    rgb = [r["image"] for r in records if r["modality"] == "rgb"]
    changed = sum((wide / p).read_bytes() != (world / p).read_bytes() for p in rgb)
    assert changed == len(rgb)
    with pytest.raises(WorldBuildError, match="palette 'vivid' is not one of"):
        build_world(tmp_path / "bad", identities=2, images_per_identity=3, seed=0, palette="vivid")
