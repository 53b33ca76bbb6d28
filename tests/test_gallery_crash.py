"""Crash safety: an add that fails or is killed part-way, and a remove interrupted after its journal."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from typer.testing import CliRunner

from engine.index import Gallery, journal, store, vector_file
from engine.index.errors import GalleryCorruptError, GalleryPendingChangeError
from lineup.cli import app

DIM = 8
VIEWS = {"text:UC": DIM, "rgb": DIM}


def unit(rng, n):
    x = rng.standard_normal((n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def items(n):
    return [{"id": f"i{k}", "source": "s.mp4", "frame": k, "camera": "c1"} for k in range(n)]


@pytest.fixture
def data():
    rng = np.random.default_rng(1)
    return items(100), {view: unit(rng, 100) for view in VIEWS}


def test_exception_mid_add_leaves_committed_batches_and_resumes(tmp_path, data, monkeypatch):
    records, vectors = data
    g = Gallery.create(tmp_path / "g", VIEWS, "ckpt")
    real_append = vector_file.append
    calls = {"n": 0}

    def failing_append(path, committed, dim, block):
        calls["n"] += 1
        if calls["n"] == 6:  # third batch, second view: first view already appended its rows
            raise OSError("disk full (simulated)")
        real_append(path, committed, dim, block)

    monkeypatch.setattr(vector_file, "append", failing_append)
    with pytest.raises(OSError, match="simulated"):
        g.add(records, vectors, batch_size=25)
    monkeypatch.setattr(vector_file, "append", real_append)

    reopened = Gallery.open(g.root)
    assert len(reopened) == 50
    assert reopened.verify() == []
    assert (g.root / "vectors" / "rgb.f16.npy").stat().st_size == vector_file.HEADER_BYTES + 50 * DIM * 2
    report = reopened.add(records, vectors, batch_size=25)
    assert (report.added, report.skipped) == (50, 50)
    final = Gallery.open(g.root)
    assert final.ids == [f"i{k}" for k in range(100)]
    assert final.verify() == []
    np.testing.assert_allclose(final.vectors("rgb"), vectors["rgb"], atol=1e-3)


def test_killed_add_is_invisible_and_trimmed_by_the_next_writer(tmp_path, data):
    records, vectors = data
    g = Gallery.create(tmp_path / "g", VIEWS, "ckpt")
    g.add(records[:40], {v: a[:40] for v, a in vectors.items()})
    old_index = (g.root / "index" / "rgb.faiss").read_bytes()
    g.add(records[40:60], {v: a[40:60] for v, a in vectors.items()})
    # a kill after a batch committed but before the index files were written, plus a half-written next batch:
    (g.root / "index" / "rgb.faiss").write_bytes(old_index)
    with open(g.root / "vectors" / "rgb.f16.npy", "ab") as fh:
        fh.write(b"\x01" * (DIM * 2 * 3 + 5))
    with open(g.root / "items.jsonl", "ab") as fh:
        fh.write(b'{"id":"i60","source":"s.mp4"}\n{"id":"i6')

    reopened = Gallery.open(g.root)
    assert len(reopened) == 60 and reopened.ids[-1] == "i59"
    rows, _ = reopened.search("rgb", vectors["rgb"][55], 1)  # the lagging index is caught up in memory
    assert rows.tolist() == [55]
    kinds = {p.kind for p in reopened.verify()}
    assert kinds == {"index_count"}  # the file on disk still lags until the next writer or a rebuild

    reopened.add(records, vectors)
    final = Gallery.open(g.root)
    assert final.ids == [f"i{k}" for k in range(100)]
    assert final.verify() == []
    np.testing.assert_allclose(final.vectors("rgb"), vectors["rgb"], atol=1e-3)


def test_remove_interrupted_after_its_journal_is_finished_by_the_next_writer_never_a_reader(tmp_path, data,
                                                                                            monkeypatch):
    records, vectors = data
    g = Gallery.create(tmp_path / "g", VIEWS, "ckpt")
    g.add(records[:30], {v: a[:30] for v, a in vectors.items()})

    def crash(root):
        if (root / journal.JOURNAL_FILE).exists():
            raise KeyboardInterrupt("killed after the journal was written")
        return False

    monkeypatch.setattr(journal, "roll_forward", crash)
    with pytest.raises(KeyboardInterrupt):
        g.remove(["i2", "i5"])
    monkeypatch.undo()
    assert (g.root / journal.JOURNAL_FILE).exists()
    snapshot = tmp_path / "copy"
    shutil.copytree(g.root, snapshot)

    before = {p.name: p.read_bytes() for p in g.root.rglob("*") if p.is_file()}
    with pytest.raises(GalleryPendingChangeError, match="unfinished remove or rebuild that no writer is applying"):
        Gallery.open(g.root)  # a reader changes nothing
    assert {p.name: p.read_bytes() for p in g.root.rglob("*") if p.is_file()} == before
    reopened = Gallery.open(g.root, finish_changes=True)
    assert len(reopened) == 28 and "i2" not in reopened
    assert not (g.root / journal.JOURNAL_FILE).exists()
    assert reopened.verify() == []
    # a second crash in the middle of applying the journal: some files already moved
    pending = sorted(snapshot.rglob("*" + journal.PENDING_SUFFIX))
    pending[0].replace(pending[0].with_name(pending[0].name[: -len(journal.PENDING_SUFFIX)]))
    again = Gallery.open(snapshot, finish_changes=True)
    assert len(again) == 28 and again.verify() == []


def test_a_planted_journal_is_never_applied(tmp_path, data):
    records, vectors = data
    g = Gallery.create(tmp_path / "g", VIEWS, "ckpt")
    g.add(records[:10], {v: a[:10] for v, a in vectors.items()})
    meta = json.loads((g.root / "gallery.json").read_text())
    items = g.root / "items.jsonl"
    planted = {"moves": [], "gallery": meta, "delete": ["items.jsonl"]}
    (g.root / journal.JOURNAL_FILE).write_text(json.dumps(planted))
    runner = CliRunner()
    for command in (["gallery", "verify", str(g.root)], ["gallery", "info", str(g.root)]):
        result = runner.invoke(app, command)
        assert result.exit_code != 0 and "no writer is applying" in result.output, result.output
        assert items.is_file()
    with pytest.raises(GalleryCorruptError, match="not written for this gallery"):
        Gallery.open(g.root, finish_changes=True)  # untagged
    planted["gallery_id"] = meta["id"]
    (g.root / journal.JOURNAL_FILE).write_text(json.dumps(planted))
    with pytest.raises(GalleryCorruptError, match="would delete items.jsonl, which is not a crop"):
        Gallery.open(g.root, finish_changes=True)
    planted.update(delete=[], moves=[["vectors/rgb.f16.npy", "items.jsonl"]])
    (g.root / journal.JOURNAL_FILE).write_text(json.dumps(planted))
    with pytest.raises(GalleryCorruptError, match="not a pending file onto its own name"):
        Gallery.open(g.root, finish_changes=True)
    assert items.is_file() and len(g) == 10


def test_failed_remove_before_its_journal_changes_nothing(tmp_path, data, monkeypatch):
    records, vectors = data
    g = Gallery.create(tmp_path / "g", VIEWS, "ckpt")
    g.add(records[:30], {v: a[:30] for v, a in vectors.items()})

    def crash(*args, **kwargs):
        raise OSError("crash while writing the new files")

    monkeypatch.setattr(store.indexes, "build", crash)
    with pytest.raises(OSError):
        g.remove(["i1"])
    monkeypatch.undo()
    reopened = Gallery.open(g.root)
    assert len(reopened) == 30 and reopened.verify() == []
    reopened.add(records[30:40], {v: a[30:40] for v, a in vectors.items()})  # the next writer clears leftovers
    assert not list(g.root.rglob("*" + journal.PENDING_SUFFIX))
