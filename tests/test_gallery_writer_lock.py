"""One writer per gallery: the OS lock refuses a second writer (thread or process) with the holder's pid and
start time, a holder file left by a dead writer blocks nobody, and readers open the last commit without it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from engine.index import Gallery, GalleryBusyError, writing
from engine.index import evidence_table as evidence_store
from engine.index.writer_lock import HOLDER_FILE, LOCK_FILE, holder

REPO = Path(__file__).parent.parent
DIM = 8


def unit(rng, n):
    x = rng.standard_normal((n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def items(start, n):
    return [{"id": f"item{i}", "source": "clip.mp4", "frame": i} for i in range(start, start + n)]


@pytest.fixture
def gallery(tmp_path):
    g = Gallery.create(tmp_path / "g", {"rgb": DIM}, "model-1")
    g.add(items(0, 4), {"rgb": unit(np.random.default_rng(0), 4)})
    return g


def in_thread(fn):
    """Run ``fn`` in another thread; return what it raised (or None)."""
    caught = []

    def run():
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - the test inspects it
            caught.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(30)
    return caught[0] if caught else None


def test_a_second_writer_is_refused_with_the_holders_pid_and_nothing_is_written(gallery):
    rng = np.random.default_rng(1)
    with writing(gallery.root):
        record = holder(gallery.root)
        assert record["pid"] == os.getpid() and "T" in record["started"]
        other = Gallery.open(gallery.root)  # a reader: opens without the lock
        assert len(other) == 4
        error = in_thread(lambda: other.add(items(4, 2), {"rgb": unit(rng, 2)}))
        assert isinstance(error, GalleryBusyError)
        assert str(error).startswith(f"gallery {gallery.root} is being written by process {os.getpid()} (started ")
        for write in (lambda: other.remove(["item0"]), lambda: other.rebuild(),
                      lambda: other.record_ranking("world", 0.5, "test"),
                      lambda: evidence_store.append(gallery.root, ["item0"], [{}]),
                      lambda: evidence_store.rewrite(gallery.root, ["item0"], [{}])):
            assert isinstance(in_thread(write), GalleryBusyError)
        gallery.add(items(4, 1), {"rgb": unit(rng, 1)})  # the holder's own thread may write (re-entrant)
    assert len(Gallery.open(gallery.root)) == 5 and Gallery.open(gallery.root).verify() == []
    assert evidence_store.EvidenceTable.read(gallery.root) is None
    assert not (gallery.root / HOLDER_FILE).exists()  # removed when the hold ends


def test_a_stale_holder_file_of_a_dead_process_blocks_nobody(gallery):
    (gallery.root / HOLDER_FILE).write_text(json.dumps({"pid": 999_999_999, "started": "2020-01-01T00:00:00+00:00"}))
    gallery.add(items(4, 2), {"rgb": unit(np.random.default_rng(2), 2)})
    assert len(Gallery.open(gallery.root)) == 6


def test_a_writer_sees_what_another_committed_since_it_opened(gallery):
    rng = np.random.default_rng(3)
    stale = Gallery.open(gallery.root)
    gallery.add(items(4, 2), {"rgb": unit(rng, 2)})
    stale.add(items(6, 1), {"rgb": unit(rng, 1)})  # re-reads the commit under the lock before appending
    final = Gallery.open(gallery.root)
    assert final.ids == [f"item{i}" for i in range(7)] and final.verify() == []


def test_the_lock_files_do_not_make_a_folder_non_empty(tmp_path):
    with writing(tmp_path / "g"):
        assert (tmp_path / "g" / LOCK_FILE).exists()
        created = Gallery.create(tmp_path / "g", {"rgb": DIM}, "model-1")
    assert len(created) == 0


def test_a_process_killed_while_writing_leaves_a_lock_that_blocks_nobody(gallery, tmp_path):
    script = textwrap.dedent(f"""
        import sys, time
        from engine.index import writing
        with writing({str(gallery.root)!r}):
            print("holding", flush=True)
            time.sleep(120)
    """)
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert process.stdout.readline().strip() == "holding"
        with pytest.raises(GalleryBusyError, match=f"being written by process {process.pid} "):
            gallery.add(items(4, 1), {"rgb": unit(np.random.default_rng(4), 1)})
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    assert holder(gallery.root)["pid"] == process.pid  # its holder file is still there, the OS lock is not
    gallery.add(items(4, 1), {"rgb": unit(np.random.default_rng(4), 1)})
    assert len(Gallery.open(gallery.root)) == 5


@pytest.mark.slow
def test_a_reader_opening_during_an_add_sees_the_last_commit(tmp_path):
    """A writer stopped right after a batch's commit, before it saved the indexes: a reader opens that commit
    (its index caught up in memory from the committed vectors) and searches it."""
    root = tmp_path / "g"
    rng = np.random.default_rng(5)
    vectors = unit(rng, 12)
    np.save(tmp_path / "v.npy", vectors)
    Gallery.create(root, {"rgb": DIM}, "model-1").add(items(0, 4), {"rgb": vectors[:4]})
    script = textwrap.dedent(f"""
        import numpy as np
        from engine.index import Gallery
        vectors = np.load({str(tmp_path / "v.npy")!r})
        items = [{{"id": f"item{{i}}", "source": "clip.mp4", "frame": i}} for i in range(4, 12)]
        Gallery.open({str(root)!r}).add(items, {{"rgb": vectors[4:]}}, batch_size=3)
    """)
    notice = tmp_path / "paused"
    env = dict(os.environ, LINEUP_PAUSE_AT="gallery:batch-committed@2", LINEUP_PAUSE_NOTICE=str(notice))
    process = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, env=env, stderr=subprocess.DEVNULL)
    try:
        wait_for(notice, process)
        reader = Gallery.open(root)
        assert len(reader) == 10 and reader.ids == [f"item{i}" for i in range(10)]
        rows, scores = reader.search("rgb", vectors[9], 3)
        assert rows[0] == 9 and scores[0] == pytest.approx(1, abs=1e-3)
        with pytest.raises(GalleryBusyError, match=f"process {process.pid} "):
            reader.add(items(12, 1), {"rgb": unit(rng, 1)})
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    assert any(p.kind == "index_count" for p in Gallery.open(root).verify())  # the kill left the indexes behind
    assert Gallery.open(root).catch_up() == ["rgb"]
    assert Gallery.open(root).verify() == [] and len(Gallery.open(root)) == 10


def wait_for(notice: Path, process: subprocess.Popen, limit: float = 120.0) -> None:
    """Wait until the subprocess reports that it stopped at its pause point."""
    deadline = time.monotonic() + limit
    while not notice.exists():
        assert process.poll() is None, f"the writer exited with {process.returncode} before its pause point"
        assert time.monotonic() < deadline, "the writer never reached its pause point"
        time.sleep(0.05)


def test_a_reader_whose_open_races_a_commit_reads_the_new_commit(gallery, monkeypatch):
    """A writer commits (and saves its index) after the reader read gallery.json and before it read the index:
    the reader sees an index ahead of its commit, notices gallery.json changed, and opens the new commit."""
    from engine.index import indexes

    real_peek = indexes.peek
    rng = np.random.default_rng(6)
    raced = []

    def peek_after_a_commit(path):
        if not raced:
            raced.append(in_thread(lambda: gallery.add(items(4, 3), {"rgb": unit(rng, 3)})))
        return real_peek(path)

    monkeypatch.setattr(indexes, "peek", peek_after_a_commit)
    reader = Gallery.open(gallery.root)
    assert raced == [None] and len(reader) == 7 and reader.ids[-1] == "item6"


def test_an_index_ahead_of_its_commit_without_a_writer_is_reported(gallery):
    from engine.index import GalleryIndexError, indexes

    bigger, _ = indexes.build(np.asarray(unit(np.random.default_rng(7), 6), dtype=np.float16), "flat")
    indexes.save(bigger, gallery.root / "index" / "rgb.faiss")
    with pytest.raises(GalleryIndexError, match="holds 6 vectors but the gallery has 4 items"):
        Gallery.open(gallery.root)
