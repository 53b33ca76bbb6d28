"""Ingest on Ray (engine.ingest.cluster, docs/scaling.md): two local Ray workers give the gallery one process
gives (same items in the same order, same crops, vectors and evidence); a writer killed with SIGKILL half way
resumes without duplicates; a worker lost half way is replaced and its unit read again without duplicates;
without Ray the command names the extra to install."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from engine.index import Gallery
from engine.index import evidence_table as evidence_store
from engine.ingest.markers import read_marker
from engine.ingest.sources import WorldSource
from lineup.cli import app

REPO = Path(__file__).parent.parent
needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                               reason="Ray is not installed (the cluster extra: pip install 'lineup[cluster]')")
SMALL = ["--batch", "2", "--world-shard", "4"]  # 24 images: 6 shards, 12 commits


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    from engine.lab.world.build import build_world

    root = tmp_path_factory.mktemp("ray") / "world"
    build_world(root, identities=6, images_per_identity=5, seed=11, workers=1)
    return root


@pytest.fixture(scope="module")
def plain(world, tiny_checkpoint, tmp_path_factory):
    """The gallery one process makes (``--workers 1``)."""
    root = tmp_path_factory.mktemp("plain") / "g"
    result = CliRunner().invoke(app, ["ingest", str(world), "--gallery", str(root), "--checkpoint",
                                      str(tiny_checkpoint), *SMALL])
    assert result.exit_code == 0, result.output
    return Gallery.open(root)


def assert_same_gallery(root: Path, plain: Gallery) -> None:
    """The items of ``plain`` in its order, each once, with its crop, vectors and evidence; verify clean."""
    gallery = Gallery.open(root)
    assert gallery.ids == plain.ids and len(set(gallery.ids)) == len(gallery)
    assert [i.crop_sha256 for i in gallery.iter_items()] == [i.crop_sha256 for i in plain.iter_items()]
    assert [i.to_json() for i in gallery.iter_items()] == [i.to_json() for i in plain.iter_items()]
    for view in plain.views:
        assert np.allclose(gallery.vectors(view), plain.vectors(view), atol=2e-3)
    table, expected = evidence_store.EvidenceTable.read(root), evidence_store.EvidenceTable.read(plain.root)
    assert sorted(table.row_of) == sorted(expected.row_of)
    for item_id, row in table.row_of.items():
        assert np.array_equal(table.matrix("pixels")[row], expected.matrix("pixels")[expected.row_of[item_id]],
                              equal_nan=True)
    assert gallery.verify() == []


@needs_ray
def test_two_workers_give_the_gallery_one_process_gives(world, plain, tiny_checkpoint, tmp_path):
    root = tmp_path / "g"
    result = CliRunner().invoke(app, ["ingest", str(world), "--gallery", str(root), "--checkpoint",
                                      str(tiny_checkpoint), "--workers", "2", "--json", *SMALL])
    assert result.exit_code == 0, result.output
    assert_same_gallery(root, plain)
    summary = __import__("json").loads(result.output.strip().splitlines()[-1])
    assert summary["totals"]["items_added"] == len(plain) and summary["totals"]["sources_read"] == 1
    assert "6 sketches left out" in summary["sources"][0]["notes"][0]  # the shards' notes add up to the world's
    assert read_marker(root, WorldSource(world).key)["items"] == len(plain)  # the world is done as a whole
    again = CliRunner().invoke(app, ["ingest", str(world), "--gallery", str(root), "--checkpoint",
                                     str(tiny_checkpoint), *SMALL])  # one process finds it done
    assert again.exit_code == 0 and "done before" in again.output and len(Gallery.open(root)) == len(plain)


@needs_ray
def test_a_killed_writer_resumes_without_duplicates(world, plain, tiny_checkpoint, tmp_path):
    root = tmp_path / "g"
    notice = tmp_path / "paused"
    env = dict(os.environ, LINEUP_PAUSE_AT="gallery:batch-committed@5", LINEUP_PAUSE_NOTICE=str(notice))
    process = subprocess.Popen([sys.executable, "-m", "lineup", "ingest", str(world), "--gallery", str(root),
                                "--checkpoint", str(tiny_checkpoint), "--workers", "2", *SMALL],
                               cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    try:
        while not notice.exists():
            assert process.poll() is None, f"the ingest exited with {process.returncode} before it paused"
            assert time.monotonic() < deadline, "the ingest never committed its fifth batch"
            time.sleep(0.1)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    killed = Gallery.open(root, finish_changes=True)
    assert 0 < len(killed) < len(plain) and len(set(killed.ids)) == len(killed)
    assert read_marker(root, WorldSource(world).key) is None
    result = CliRunner().invoke(app, ["ingest", str(world), "--gallery", str(root), "--checkpoint",
                                      str(tiny_checkpoint), "--workers", "2", "--json", *SMALL])
    assert result.exit_code == 0, result.output
    assert_same_gallery(root, plain)
    totals = __import__("json").loads(result.output.strip().splitlines()[-1])["totals"]
    assert totals["items_added"] + totals["items_present"] == len(plain) and totals["items_added"] < len(plain)
    leftovers = [f for f in Path(__import__("tempfile").gettempdir()).glob("lineup-ray-*")
                 if (f / "ingest.pid").is_file() and (f / "ingest.pid").read_text().strip() == str(process.pid)]
    assert leftovers == []  # the killed writer's Ray folder was swept by the next ingest


class DyingEncoder:
    """The test checkpoint's encoder in a worker that dies (the process ends at once) at its second batch, once:
    ``flag`` marks that it has."""

    def __init__(self, base, flag: str) -> None:
        self.base, self.flag, self.calls = base, flag, 0
        self.views, self.fingerprint, self.model = base.views, base.fingerprint, base.model

    def __call__(self, crops, modalities, resolutions):
        self.calls += 1
        if self.calls == 2 and not os.path.exists(self.flag):
            Path(self.flag).write_text("died\n")
            os._exit(1)
        return self.base(crops, modalities, resolutions)


def dying_encoder(checkpoint: str, flag: str):
    from engine.ingest import ModelEncoder
    from engine.retrieval.models.discovery import load_model

    return DyingEncoder(ModelEncoder(load_model(Path(checkpoint), device="cpu")), flag)


@needs_ray
def test_a_lost_worker_is_replaced_and_its_unit_read_again(world, plain, tiny_checkpoint, tmp_path):
    import ray.cloudpickle

    from engine.ingest import IngestOptions
    from engine.ingest.cluster import ingest_on_ray

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this test module
    flag = tmp_path / "died"
    summary = ingest_on_ray(world, tmp_path / "g", partial(dying_encoder, str(tiny_checkpoint), str(flag)),
                            options=IngestOptions(batch_size=2), workers=2, world_shard=4)
    assert flag.exists()  # a worker did die
    assert summary.totals()["items_added"] == len(plain) and summary.totals()["items_present"] == 0
    assert_same_gallery(tmp_path / "g", plain)


def test_without_ray_the_command_names_the_extra(world, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    for extra in (["--workers", "2"], ["--ray", "head:6379"]):
        result = CliRunner().invoke(app, ["ingest", str(world), "--gallery", str(tmp_path / "g"), *extra])
        assert result.exit_code != 0
        assert "pip install 'lineup[cluster]'" in result.output and "Ray" in result.output
        assert not (tmp_path / "g").exists()
