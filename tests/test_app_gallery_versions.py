"""A case on a gallery that grows (docs/architecture.md, "Gallery versions"): footage ingested into the gallery an
open case searches leaves every step of the case re-runnable on the version it searched, searching on that
path stays within that version's items, the re-run on the grown gallery is offered and makes a new branch, and
the timeline names the version."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QThreadPool

from app.state import AppState, KeepRule, QuerySpec, timeline_rows
from app.store import CaseStore
from engine.index import Gallery
from engine.retrieval.encoding.views import gallery_views
from engine.retrieval.search.encoder import FingerprintEncoder

DIM = 8
N, GROWN = 90, 40
PEOPLE = 4
WAIT = 10_000


def unit(x):
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


class CentroidEncoder(FingerprintEncoder):
    """Text "... pK" → centroid K."""

    fingerprint = "ckpt-versions"
    attribute_weight = None

    def __init__(self, centres):
        self.centres = centres

    def level_and_source(self, text):
        return "C", "parser"

    def encode_text(self, text):
        return self.centres[int(text.split()[-1][1:])]

    def encode_fused(self, text, sketch, ir):
        return self.encode_text(text)


def make_items(rng, centres, start, stop):
    identity = rng.integers(0, PEOPLE, stop - start)
    views = gallery_views(DIM)
    vectors = {view: unit(centres[identity] + 0.5 * rng.standard_normal((stop - start, DIM))) for view in views}
    items = [{"id": f"cam{k % 2}/f{k:04d}", "source": "walk.mp4", "frame": k, "time": float(k),
              "camera": f"cam{k % 2}", "identity": f"p{identity[k - start]}"} for k in range(start, stop)]
    return items, vectors


@pytest.fixture
def grown_case(qtbot, tmp_path):
    """A case of two steps and a reject on v1 of a gallery, and the gallery grown to v2 afterwards (what an
    ingest does: items appended, a version recorded)."""
    rng = np.random.default_rng(5)
    centres = unit(rng.standard_normal((PEOPLE, DIM)))
    root = tmp_path / "gallery"
    gallery = Gallery.create(root, gallery_views(DIM), "ckpt-versions")
    gallery.add(*make_items(rng, centres, 0, N))
    assert gallery.record_version(["walk.mp4"]).version == 1
    pool = QThreadPool()
    pool.setMaxThreadCount(1)
    store = CaseStore.open(tmp_path / "cases.db", actor="tester")
    state = AppState(pool=pool)
    state.set_store(store)
    case_id = state.new_case("Grey coat")
    assert state.set_gallery(gallery, CentroidEncoder(centres))
    steps = []
    for text, keep in (("person p1", KeepRule()), ("person p2", KeepRule("k", 12))):
        with qtbot.waitSignal(state.step_recorded, timeout=WAIT) as blocker:
            assert state.search(QuerySpec(text=text, keep=keep)) is not None
        steps.append(blocker.args[0])
    rejected = state.step_result(steps[-1]).kept_ids[0]
    assert state.reject(rejected)
    state.close()

    grower = Gallery.open(root)  # another writer: an ingest of more footage
    grower.add(*make_items(rng, centres, N, N + GROWN))
    assert grower.record_version(["later.mp4"]).version == 2

    reopened = AppState(pool=pool)
    reopened.set_store(store)
    errors = []
    reopened.error.connect(errors.append)
    offers = []
    reopened.gallery_version_changed.connect(offers.append)
    assert reopened.open_case(case_id)
    assert reopened.set_gallery(Gallery.open(root), CentroidEncoder(centres))
    yield reopened, store, steps, rejected, offers, errors
    reopened.close()
    store.close()
    pool.waitForDone(WAIT)


def test_steps_of_a_grown_gallery_rerun_on_their_version_and_the_offer_appears(qtbot, grown_case):
    state, store, steps, rejected, offers, errors = grown_case
    searched = state.searched_version
    assert searched is not None and offers[-1] is searched
    assert (searched.version.version, searched.version.items) == (1, N)
    assert (searched.current.version, searched.current.items) == (2, N + GROWN)
    assert "gallery v1, 90 items" in searched.offer() and "gallery v2, 130 items" in searched.offer()
    assert state.gallery_id == state.case.step(steps[0]).gallery_id  # no new record: the case goes on on v1
    assert len(state.case.galleries) == 1
    assert state.marks == {rejected: "rejected"}

    with qtbot.waitSignal(state.session_changed, timeout=WAIT):
        assert state.restore_session() is not None
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    assert errors == []
    for step_id in steps:  # every step re-ran on v1 and kept what the case recorded
        assert tuple(state.step_result(step_id).kept_ids) == state.case.step(step_id).kept_ids

    with qtbot.waitSignal(state.step_recorded, timeout=WAIT) as blocker:
        state.search(QuerySpec(text="person p3", keep=KeepRule("k", 5)))
    assert errors == []
    assert int(state.step_result(blocker.args[0]).rows.max()) < N  # within v1's items
    later = Gallery.open(state.gallery.root).ids[N]
    assert not state.reject(later)
    assert "came with footage added after gallery v1" in errors[-1]


def test_the_rerun_on_the_grown_gallery_is_a_new_branch(qtbot, grown_case):
    state, store, steps, rejected, offers, errors = grown_case
    old_gallery = state.gallery_id
    with qtbot.waitSignal(state.gallery_version_changed, timeout=WAIT):
        assert state.rerun_on_grown_gallery() is not None
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    assert errors == [] and offers[-1] is None and state.searched_version is None
    case = store.load_case(state.case_id)
    assert len(case.steps) == 4 and len(case.active_path) == 2
    new_first, new_second = (case.step(i) for i in case.active_path)
    assert new_first.parent_id is None and new_first.id not in steps  # a branch from the start
    assert new_first.candidates_before == N + GROWN
    assert new_first.gallery_id == new_second.gallery_id == state.gallery_id != old_gallery
    assert {g.version for g in case.galleries} == {1, 2}
    assert state.marks == {rejected: "rejected"}
    assert state.session is not None and len(state.session.steps) == 2
    rows = timeline_rows(case, N + GROWN)
    assert any("gallery v1, 90 items" in row.keep for row in rows)
    assert any("gallery v2, 130 items" in row.keep for row in rows)
    # the old path is still there, on its version: branching back to it restricts the search again
    assert state.branch_from(steps[-1])
    assert state.searched_version is not None and state.gallery_id == old_gallery
