"""A truncated or corrupt checkpoint is a named error (file and problem) in the library and through every CLI
command that loads one: checkpoint info, search, ingest, eval."""

import json

import pytest
from typer.testing import CliRunner

from engine.index import Gallery
from engine.lab.train.warm_start import warm_start
from engine.retrieval.models import create, load, save
from engine.retrieval.models.checkpoint import CONFIG_FILE, WEIGHTS_FILE, CheckpointError
from lineup.cli import app


@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    root = tmp_path_factory.mktemp("ck")
    good = save(create("tiny", device="cpu"), root / "good")
    truncated = save(create("tiny", device="cpu"), root / "truncated")
    data = (truncated / WEIGHTS_FILE).read_bytes()
    (truncated / WEIGHTS_FILE).write_bytes(data[: len(data) // 2])
    garbage = save(create("tiny", device="cpu"), root / "garbage")
    (garbage / WEIGHTS_FILE).write_bytes(b"\x00" * 64)
    config = save(create("tiny", device="cpu"), root / "config")
    (config / CONFIG_FILE).write_text('{"name": "tiny", ')
    return {"good": good, "truncated": truncated, "garbage": garbage, "config": config, "root": root}


@pytest.mark.parametrize("name", ["truncated", "garbage"])
def test_library_names_the_weights_file(damaged, name):
    with pytest.raises(CheckpointError, match=rf"{name}/weights\.safetensors is corrupt or truncated"):
        load(damaged[name], device="cpu")
    with pytest.raises(CheckpointError, match="corrupt or truncated"):
        warm_start(create("tiny", device="cpu"), damaged[name])


def test_library_names_a_corrupt_config(damaged):
    with pytest.raises(CheckpointError, match=r"config/config\.json is corrupt: invalid JSON"):
        load(damaged["config"], device="cpu")


def _clean_failure(result, pattern: str) -> None:
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)  # no uncaught exception, no traceback
    assert pattern in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("name", ["truncated", "config"])
def test_cli_commands_give_a_named_error(damaged, tmp_path, name):
    runner = CliRunner()
    checkpoint = str(damaged[name])
    pattern = "is corrupt"
    _clean_failure(runner.invoke(app, ["checkpoint", "info", checkpoint]), pattern)
    gallery = Gallery.create(tmp_path / "g", {"rgb": 4}, "some-model")
    _clean_failure(runner.invoke(app, ["search", "--gallery", str(gallery.root), "--checkpoint", checkpoint,
                                       "--text", "a man", "--device", "cpu"]), pattern)
    (tmp_path / "in").mkdir()
    _clean_failure(runner.invoke(app, ["ingest", str(tmp_path / "in"), "--gallery", str(tmp_path / "h"),
                                       "--checkpoint", checkpoint, "--device", "cpu"]), pattern)
    world = tmp_path / "world"
    world.mkdir()
    (world / "manifest.jsonl").write_text("")
    _clean_failure(runner.invoke(app, ["eval", "--checkpoint", checkpoint, "--world", str(world), "--protocol", "modes",
                                       "--device", "cpu"]), pattern)
    assert json.loads(runner.invoke(app, ["checkpoint", "info", str(damaged["good"]), "--json"]).stdout)["path"]
