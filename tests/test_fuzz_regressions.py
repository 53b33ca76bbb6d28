"""Inputs ``bench/fuzz.py`` found crashing or hanging the CLI, each reproduced exactly: every one must now end
in a named error (exit code 1 or 2, the input and the problem in the message, no traceback) or a clean success."""

from __future__ import annotations

import json
import os
import shutil
import time

import pytest
from typer.testing import CliRunner

from engine.index import Gallery
from engine.lab.world.build import build_world
from engine.retrieval.models import create, save
from engine.retrieval.models.checkpoint import CONFIG_FILE, METADATA_FILE
from lineup.cli import app


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory):
    return save(create("tiny", device="cpu"), tmp_path_factory.mktemp("fuzz_ck") / "good")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz_world") / "world"
    build_world(root, identities=2, images_per_identity=2, seed=0, workers=1)
    return root


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=True)


def assert_named(result, *words: str, code: int = 2) -> None:
    """Exit ``code`` through ``typer.Exit`` (no exception escaped, no traceback) with every word in the output."""
    assert result.exit_code == code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    for word in words:
        assert word in result.output, (word, result.output)


def damaged_copy(good, tmp_path, name, edit):
    folder = tmp_path / name
    folder.mkdir()
    for file in good.iterdir():
        (folder / file.name).write_bytes(file.read_bytes())
    edit(folder)
    return folder


def edit_config(**changes):
    def edit(folder):
        config = json.loads((folder / CONFIG_FILE).read_text())
        for dotted, value in changes.items():
            target = config
            *parents, key = dotted.split(".")
            for parent in parents:
                target = target[parent]
            target[key] = value
        (folder / CONFIG_FILE).write_text(json.dumps(config))
    return edit


def test_config_stacking_a_billion_layers_is_refused_not_built(tiny_checkpoint, tmp_path):
    """fuzz seed 0 case 36: ``vision.layers`` 10**9 hung ``checkpoint info`` building the model block by block."""
    checkpoint = damaged_copy(tiny_checkpoint, tmp_path, "layers", edit_config(**{"vision.layers": 10**9}))
    started = time.monotonic()
    assert_named(invoke("checkpoint", "info", checkpoint), "config.json", "'vision.layers' 1000000000 is over the "
                                                                          "limit of 256")
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("dotted", ["embed_dim", "vision.width", "text.context_length"])
def test_config_declaring_a_huge_model_is_compared_with_the_weights_before_allocating(tiny_checkpoint, tmp_path,
                                                                                     dotted):
    """A config whose sizes disagree with its weights: a named mismatch from the weights header, without building
    a model of 10**8-wide layers (which raised a raw allocation error or exhausted memory)."""
    checkpoint = damaged_copy(tiny_checkpoint, tmp_path, "huge", edit_config(**{dotted: 10**8}))
    assert_named(invoke("checkpoint", "info", checkpoint), "weights.safetensors does not match its config")


@pytest.mark.parametrize("text", ["[]", "5", '"text"'])
def test_metadata_that_is_not_an_object_is_named(tiny_checkpoint, tmp_path, text):
    """``metadata.json`` holding a list raised ``AttributeError: 'list' object has no attribute 'get'``."""
    checkpoint = damaged_copy(tiny_checkpoint, tmp_path, "meta", lambda f: (f / METADATA_FILE).write_text(text))
    assert_named(invoke("checkpoint", "info", checkpoint), "metadata.json is corrupt: expected a JSON object")


def test_metadata_with_a_data_fingerprint_of_the_wrong_type_is_shown(tiny_checkpoint, tmp_path):
    def edit(folder):
        metadata = json.loads((folder / METADATA_FILE).read_text())
        (folder / METADATA_FILE).write_text(json.dumps({**metadata, "data_fingerprint": [1, 2]}))

    checkpoint = damaged_copy(tiny_checkpoint, tmp_path, "fingerprint", edit)
    result = invoke("checkpoint", "info", checkpoint, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["world"] is None


def test_world_manifest_with_bytes_that_are_not_utf8_is_named(world, tiny_checkpoint, tmp_path):
    """A manifest of random bytes (fuzz ``world:binary``) gave the bare ``'utf-8' codec can't decode …``."""
    broken = tmp_path / "world"
    broken.mkdir()
    (broken / "manifest.jsonl").write_bytes((world / "manifest.jsonl").read_bytes().splitlines()[0] + b"\n\x83\xff{}\n")
    for args in (["world", "export", broken, "--out", tmp_path / "export.json"],
                 ["world", "benchmarks", broken, "--out", tmp_path / "benchmarks"],
                 ["ingest", broken, "--gallery", tmp_path / "gallery", "--checkpoint", tiny_checkpoint,
                  "--device", "cpu"]):
        result = invoke(*args)
        assert result.exit_code in (1, 2), result.output
        assert "Traceback" not in result.output and "codec can't decode" not in result.output
        assert "manifest.jsonl: line 2" in result.output and "not UTF-8 text" in result.output, result.output


@pytest.mark.parametrize("special", ["dev-zero", "fifo"])
def test_a_pipe_or_device_named_like_an_image_is_skipped_not_read_forever(world, tmp_path, special):
    """fuzz seed 1 cases 215 and 418: ``detect`` on a folder whose ``bad.jpg`` links to ``/dev/zero`` hashed it
    forever (a named pipe would block the read); now it is listed as skipped and the folder goes on."""
    folder = tmp_path / "source"
    folder.mkdir()
    bad = folder / "bad.jpg"
    if special == "fifo":
        os.mkfifo(bad)
    else:
        bad.symlink_to("/dev/zero")
    good = next((world / "images").rglob("*.jpg"))
    (folder / "good.jpg").write_bytes(good.read_bytes())
    result = invoke("detect", folder, "--detector", "hog")
    assert result.exit_code in (0, 1), result.output  # 1: the good image holds nobody the detector finds
    assert "Traceback" not in result.output
    assert f"{bad}: not a regular file" in result.output
    alone = invoke("detect", bad)
    assert_named(alone, str(bad), "is not a regular file or folder")
    sketch = invoke("search", "--gallery", tmp_path / "none", "--sketch", bad)
    assert sketch.exit_code == 2 and "Traceback" not in sketch.output


def test_a_pipe_in_a_built_world_is_skipped_at_ingest(world, tiny_checkpoint, tmp_path):
    copy = tmp_path / "world"
    shutil.copytree(world, copy)
    victim = sorted((copy / "images").rglob("*.jpg"))[0]
    victim.unlink()
    os.mkfifo(victim)
    result = invoke("ingest", copy, "--gallery", tmp_path / "gallery", "--checkpoint", tiny_checkpoint,
                    "--device", "cpu")
    assert result.exit_code == 0, result.output
    assert f"{victim}: is not a regular file" in result.output


@pytest.fixture
def gallery(tmp_path):
    return Gallery.create(tmp_path / "g", {"rgb": 4}, "some-model").root


@pytest.mark.parametrize(("field", "value"), [
    ("view_models", "x"),  # fuzz seed 1 case 407: AttributeError: 'str' object has no attribute 'get'
    ("view_models", {"rgb": 5}), ("views", [1, 2]), ("indexes", {"rgb": "flat"}), ("count", "3"),
    ("count", -1), ("count", 1.5),  # fuzz seed 1 case 666: TypeError from the float count
    ("items_bytes", None), ("ivf_threshold", 0), ("recall_target", "high"),
    ("model_fingerprint", 7),
])
def test_gallery_json_fields_of_the_wrong_type_are_named(gallery, field, value):
    meta = json.loads((gallery / "gallery.json").read_text())
    (gallery / "gallery.json").write_text(json.dumps({**meta, field: value}))
    for args in (["gallery", "info", gallery], ["gallery", "verify", gallery],
                 ["gallery", "rebuild", gallery, "--attributes"]):
        assert_named(invoke(*args), "gallery.json", f"field {field!r} must be")


def test_items_bytes_far_past_the_file_is_named_without_reading_that_much(gallery):
    """fuzz seed 1 case 612: ``items_bytes`` 10**18 made ``gallery verify`` allocate a buffer of that size
    (MemoryError)."""
    meta = json.loads((gallery / "gallery.json").read_text())
    (gallery / "gallery.json").write_text(json.dumps({**meta, "items_bytes": 10**18}))
    for args in (["gallery", "verify", gallery], ["search", "--gallery", gallery, "--text", "a man"]):
        assert_named(invoke(*args), "items.jsonl holds 0 bytes but gallery.json records 1000000000000000000")


def test_config_with_a_width_pytorch_cannot_size_is_named(tiny_checkpoint, tmp_path):
    """fuzz seed 1 case 982: ``vision.width`` 10**18 raised ``RuntimeError: Storage size calculation
    overflowed`` out of ``checkpoint info``."""
    checkpoint = damaged_copy(tiny_checkpoint, tmp_path, "width", edit_config(**{"vision.width": 10**18}))
    assert_named(invoke("checkpoint", "info", checkpoint), "config.json describes a model that cannot be built")


def test_a_pipe_among_crops_is_skipped_not_opened(world, tiny_checkpoint, tmp_path):
    """fuzz seed 1 case 996: ``ingest --crops`` on a folder holding a named pipe ``bad.png`` blocked in OpenCV's
    header check forever."""
    folder = tmp_path / "crops"
    folder.mkdir()
    os.mkfifo(folder / "bad.png")
    (folder / "good.jpg").write_bytes(next((world / "images").rglob("*.jpg")).read_bytes())
    result = invoke("ingest", folder, "--crops", "--gallery", tmp_path / "gallery", "--checkpoint", tiny_checkpoint,
                    "--device", "cpu")
    assert result.exit_code == 0, result.output
    assert f"{folder / 'bad.png'}: not a regular file" in result.output
    assert_named(invoke("ingest", folder / "bad.png", "--crops", "--gallery", tmp_path / "other", "--checkpoint",
                        tiny_checkpoint, "--device", "cpu"), "bad.png is not a regular file")


def test_a_view_file_holding_a_nul_byte_is_named(gallery):
    """fuzz seed 1 cases 138 and 797: a view ``file`` of ``"\\u0000"`` gave the bare ``embedded null byte``."""
    meta = json.loads((gallery / "gallery.json").read_text())
    meta["views"]["rgb"]["file"] = "\x00"
    (gallery / "gallery.json").write_text(json.dumps(meta))
    assert_named(invoke("gallery", "verify", gallery), "gallery.json", "view 'rgb' file", "holds a NUL byte")


@pytest.mark.parametrize("value", ["1e400", "nan", "-inf"])
def test_a_time_bound_that_is_not_finite_names_the_option(value, tmp_path):
    """fuzz seed 1 case 662: ``--after 1e400`` was read as infinity and refused later as ``time_range bound must
    be a finite number``, not naming the option."""
    gallery = Gallery.create(tmp_path / "g", {"rgb": 4}, "some-model").root
    result = invoke("search", "--gallery", gallery, "--text", "a man", "--after", value)
    assert_named(result, f"--after: time {value!r} is not finite")


def test_a_tile_grid_of_billions_is_refused(world, tmp_path):
    """fuzz seed 2 case 366: ``ingest --tiles 99999x99999`` planned ten billion detector runs per frame (a hang)."""
    image = next((world / "images").rglob("*.jpg"))
    for args in (["detect", image, "--tiles", "99999x99999"],
                 ["ingest", image, "--gallery", tmp_path / "g", "--tiles", "99999x99999"]):
        assert_named(invoke(*args), "tiles '99999x99999': at most 16 rows and 16 columns")


def test_an_onnx_input_size_of_a_hundred_thousand_pixels_is_refused(world, tmp_path):
    """fuzz seed 2 case 511: ``--onnx-size 100000x100000`` allocated a 27.9 GiB input blob (numpy
    ``_ArrayMemoryError``)."""
    from engine.kernel.resources import resource_path

    image = next((world / "images").rglob("*.jpg"))
    model = resource_path("models", "detectors", "yolox_nano.onnx")
    for layout in ("yolox", "yolo"):
        result = invoke("detect", image, "--detector", model, "--onnx-layout", layout, "--onnx-size", "100000x100000")
        assert_named(result, "input size '100000x100000' is over the limit of 4096 pixels a side")


def test_a_case_database_with_an_empty_schema_revision_is_named(tmp_path):
    """fuzz seed 2 case 652: ``alembic_version`` holding ``''`` made ``report verify`` fail on an Alembic
    ``AssertionError``; opening the store for writing too."""
    import sqlite3

    from app.store import CaseStore
    from app.store.database import check_revision_read_only
    from app.store.errors import NotACaseDatabaseError

    db = tmp_path / "cases.db"
    with CaseStore.open(db, actor="examiner") as store:
        store.create_case("A case")
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE alembic_version SET version_num = ''")
    message = "records an empty case-store schema revision ''"
    with pytest.raises(NotACaseDatabaseError, match=message):
        check_revision_read_only(db)
    with pytest.raises(NotACaseDatabaseError, match=message):
        CaseStore.open(db, actor="examiner")
    assert_named(invoke("report", "export", "--db", db, "--case", 1, "--out", tmp_path / "case.html"), message)


def test_reid_scenarios_mixing_all_and_none_name_the_input(world, tmp_path):
    """fuzz seed 0 cases 16 and 600: ``--reid all,none`` was refused without naming what was given."""
    result = invoke("ingest", world, "--gallery", tmp_path / "g", "--reid", "all,none")
    assert_named(result, "unknown re-identification scenarios ['all', 'none'] in 'all,none'", "'all' or 'none' alone")
