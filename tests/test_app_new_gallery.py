"""Gallery → New gallery… (an ingest queue with progress, ETA and cancel that opens the gallery it made) and a
relaunch that reopens the last case with its own gallery (or says plainly that the gallery is missing)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from app.jobs import BackgroundJob
from app.main_window import MainWindow
from app.state import AppState
from app.state.ingest_queue import CANCELLED, DONE, IngestQueue
from app.store import CaseStore
from app.views.new_gallery_dialog import NewGalleryDialog
from engine.index import Gallery

WAIT = 10_000
DIM = 4


def unit(x):
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


class FramesJob(BackgroundJob):
    """Stands in for ``IngestFootageJob``: reads ``frames`` frames (progress, cancellable) and adds one item per
    frame to the destination gallery, recording a version as an ingest does."""

    name = "Ingesting"

    def __init__(self, entry, frames=6, delay=0.03):
        self.entry, self.frames, self.delay = entry, frames, delay

    def run(self, job):
        root = self.entry.destination
        gallery = Gallery.open(root) if (root / "gallery.json").is_file() else Gallery.create(root, {"rgb": DIM},
                                                                                                  "ckpt")
        for done in range(self.frames):
            job.progress(done, self.frames, f"Ingesting {self.entry.source.name}")
            time.sleep(self.delay)
        start = len(gallery)
        items = [{"id": f"{self.entry.source.name}-{k}", "source": str(self.entry.source), "frame": k}
                 for k in range(self.frames)]
        gallery.add(items, {"rgb": unit(np.random.default_rng(start).standard_normal((self.frames, DIM)))})
        gallery.record_version([str(self.entry.source)])
        job.progress(self.frames, self.frames, f"Ingesting {self.entry.source.name}")

        class Summary:
            def totals(self_inner):
                return {"items_added": self.frames}

        return Summary()


def test_the_new_gallery_queue_runs_two_sources_with_progress_and_cancel(qtbot, tmp_path):
    state = AppState()
    sources = []
    for name in ("cam1", "cam2", "cam3"):
        (tmp_path / name).mkdir()
        sources.append(tmp_path / name)
    queue = IngestQueue(state.jobs, make_job=FramesJob)
    dialog = NewGalleryDialog(queue)
    qtbot.addWidget(dialog)
    assert dialog.add_source(sources[0], "footage") is None  # no destination yet: said plainly
    assert "Choose the folder" in dialog.status_label.text()
    destination = tmp_path / "new-gallery"
    dialog.set_destination(destination)
    assert dialog.add_source(tmp_path / "nowhere", "crops") is None
    assert "does not exist" in dialog.status_label.text()
    first, second, third = (dialog.add_source(s, "footage") for s in sources)
    seen = []
    queue.changed.connect(lambda index: seen.append((index, queue.describe(index))))
    dialog.cancel(third)  # queued: never starts
    assert queue.entries[third].status == CANCELLED
    with qtbot.waitSignal(dialog.gallery_ready, timeout=WAIT) as ready:
        dialog.start()
    assert ready.args == [destination]
    assert [e.status for e in queue.entries] == [DONE, DONE, CANCELLED]
    assert any(index == first and "frames/s" in text and "left" in text for index, text in seen)
    assert dialog.progress_bar(second).value() == dialog.progress_bar(second).maximum() == 6
    assert dialog.row_text(first).startswith("Done: 6 items added")
    assert [(v.version, v.items) for v in Gallery.open(destination).versions()] == [(1, 6), (2, 12)]
    assert "2 sources ingested, 1 cancelled" in dialog.status_label.text()


def test_a_running_source_is_cancelled_and_the_next_one_runs(qtbot, tmp_path):
    state = AppState()
    for name in ("slow", "next"):
        (tmp_path / name).mkdir()
    queue = IngestQueue(state.jobs, make_job=lambda entry: FramesJob(entry, frames=200, delay=0.02)
                        if entry.source.name == "slow" else FramesJob(entry))
    slow = queue.add(tmp_path / "slow", "footage", tmp_path / "g")
    queue.add(tmp_path / "next", "footage", tmp_path / "g")
    with qtbot.waitSignal(queue.finished, timeout=WAIT) as finished:
        queue.start()
        qtbot.waitUntil(lambda: queue.entries[slow].done > 2, timeout=WAIT)
        queue.cancel(slow)
    assert [e.status for e in queue.entries] == [CANCELLED, DONE]
    assert finished.args[0] == [tmp_path / "g"]
    assert len(Gallery.open(tmp_path / "g")) == 6


@pytest.fixture
def case_on_a_gallery(tmp_path):
    root = tmp_path / "station"
    gallery = Gallery.create(root, {"rgb": DIM}, "ckpt")
    gallery.add([{"id": f"i{k}", "source": "a.mp4", "frame": k} for k in range(12)],
                {"rgb": unit(np.random.default_rng(1).standard_normal((12, DIM)))})
    gallery.record_version(["a.mp4"])
    with CaseStore.open(tmp_path / "cases.db", actor="tester") as store:
        case_id = store.create_case("Platform 4")
        store.add_gallery(case_id, root.resolve(), gallery.fingerprint(), "ckpt", 12, version=1)
    return tmp_path / "cases.db", case_id, root


def test_relaunch_reopens_the_last_case_with_its_own_gallery(qtbot, case_on_a_gallery):
    db, case_id, root = case_on_a_gallery
    state = AppState()
    assert state.open_store(db)
    window = MainWindow(state, None)
    qtbot.addWidget(window)
    assert state.open_case(case_id)
    with qtbot.waitSignal(state.gallery_changed, timeout=WAIT):
        assert window.open_case_gallery() is not None
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    assert state.gallery.root.resolve() == root.resolve() and len(state.gallery) == 12
    assert len(state.case.galleries) == 1 and state.gallery_id == state.case.galleries[0].id
    window.close()
    state.close()


def test_relaunch_says_plainly_when_the_cases_gallery_is_missing(qtbot, case_on_a_gallery):
    import shutil

    db, case_id, root = case_on_a_gallery
    shutil.rmtree(root)
    state = AppState()
    assert state.open_store(db)
    window = MainWindow(state, None)
    qtbot.addWidget(window)
    assert state.open_case(case_id)
    assert window.open_case_gallery() is False
    assert "which is missing" in window.banner.text() and str(root.resolve()) in window.banner.text()
    assert state.gallery is None
    window.close()
    state.close()
