"""The collaborators behind ``AppState``, each on its own: ``CaseSession`` (store and open case),
``GallerySession`` (gallery, encoder, ground truth), ``StepHistory`` (sessions and results of the steps) and the
mark checks. Refusals are ``ActionRefused`` errors whose message says what to do."""

from __future__ import annotations

import numpy as np
import pytest

from app.jobs import ReplayOutcome
from app.state import KeepRule
from app.state.case_session import ActionRefused, CaseSession
from app.state.gallery_session import GallerySession
from app.state.marks import check_items, check_mark_state, record_marks
from app.state.step_history import StepHistory
from app.store import CaseStore
from engine.index import Gallery
from engine.index.errors import GalleryMismatchError
from engine.retrieval.encoding.views import gallery_views
from engine.retrieval.search import StepQuery
from engine.retrieval.search.encoder import FingerprintEncoder

DIM = 8
N = 30


@pytest.fixture(scope="module")
def gallery(tmp_path_factory):
    rng = np.random.default_rng(3)
    views = gallery_views(DIM)
    vectors = {view: rng.standard_normal((N, DIM)).astype(np.float32) for view in views}
    for view in views:
        vectors[view] /= np.linalg.norm(vectors[view], axis=1, keepdims=True)
    items = [{"id": f"i{k:02d}", "source": "walk.mp4", "frame": k, "camera": "cam1", "identity": f"p{k % 3}"}
             for k in range(N)]
    gallery = Gallery.create(tmp_path_factory.mktemp("parts") / "gallery", views, "ckpt-parts")
    gallery.add(items, vectors)
    return gallery


@pytest.fixture
def cases(tmp_path):
    session = CaseSession()
    store = CaseStore.open(tmp_path / "cases.db", actor="tester")
    session.use_store(store, owned=True)
    yield session
    session.close_store()


def test_a_case_session_without_a_store_or_case_says_what_to_open():
    session = CaseSession()
    assert session.cases() == [] and session.case_id is None and session.marks() == {}
    with pytest.raises(ActionRefused, match="^Open a case database first$"):
        session.create("x")
    with pytest.raises(ActionRefused, match="^Open or create a case first$"):
        session.require_case()
    assert session.plan(None) == []


def test_a_case_session_records_a_gallery_once_and_keeps_only_its_marks(cases, gallery):
    case_id = cases.create("Platform 2")
    assert cases.load(case_id).case.title == "Platform 2" and cases.gallery_id is None
    identity = GallerySession.identify(gallery)
    cases.register_gallery(identity)
    first = cases.gallery_id
    assert first is not None and cases.known_gallery_id(identity) == first
    cases.register_gallery(identity)
    assert cases.gallery_id == first and len(cases.case.galleries) == 1
    cases.write(lambda store, cid: store.mark(cid, first, "i03", "confirmed"))
    assert cases.marks() == {"i03": "confirmed"}
    cases.gallery_id = None
    assert cases.marks() == {}  # marks belong to a gallery of the case
    other = cases.create("Another")
    assert not cases.adopt(cases.store.load_case(other))  # not the open case
    assert cases.case_id == case_id and cases.step(12345) is None


class FixedEncoder(FingerprintEncoder):
    fingerprint = "ckpt-parts"
    attribute_weight = None

    def level_and_source(self, text):
        return "C", "parser"

    def encode_text(self, text):
        return np.ones(DIM, np.float32) / np.sqrt(DIM)

    def encode_fused(self, text, sketch, ir):
        return self.encode_text(text)


def test_a_gallery_session_refuses_a_stranger_model_and_an_unknown_identity(gallery):
    session = GallerySession()
    with pytest.raises(ActionRefused, match="Open a gallery before"):
        session.check_target("p1")
    assert session.check_target(None) is None
    session.use(gallery, FixedEncoder(), GallerySession.identify(gallery))
    stranger = FixedEncoder()
    stranger.fingerprint = "another"
    with pytest.raises(GalleryMismatchError):
        session.use(gallery, stranger, None)
    assert session.encoder.fingerprint == "ckpt-parts" and session.identity is not None
    assert session.check_target("  p1 ") == "p1"
    with pytest.raises(ActionRefused, match="has no identity 'p9'"):
        session.check_target("p9")
    session.target = "p2"
    fresh = session.session_factory(0.25)()
    assert fresh.steps == () and fresh.rho == 0.25 and fresh.target_identity == "p2"


def test_step_history_keeps_sessions_per_step_and_reports_a_disagreeing_rerun(gallery):
    galleries = GallerySession()
    galleries.use(gallery, FixedEncoder(), None)
    fresh = galleries.session_factory(0.5)
    history = StepHistory()
    assert history.activate(None, None, {}) is None  # no case or gallery
    start = history.activate(None, fresh, {"i01": "rejected", "i02": "confirmed"})
    assert start is history.session and start.rejected == ("i01",) and start.confirmed == ("i02",)
    assert history.activate(7, fresh, {}) is None  # a head whose path was never run here
    result = start.step(StepQuery(text="a person", k=10))
    snapshot = start.branch(-1)
    outcome = ReplayOutcome(start, {7: result}, {7: snapshot}, differences=(1,))
    assert "different kept items at step 1" in history.adopt_replay(outcome)
    assert history.result(7) is result
    again = history.activate(7, fresh, {})
    assert again is not snapshot and len(again.steps) == 1 and again.rejected == ()
    ranked = sorted(((result.item_ids[int(row)], float(score)) for row, score in zip(result.rows, result.scores,
                                                                                     strict=True)),
                    key=lambda pair: -pair[1])
    (top, top_score), (low, low_score) = ranked[0], ranked[-1]
    below = history.confirmed_below(7, KeepRule("threshold", top_score), {top: "confirmed", low: "confirmed"})
    assert below == [(low, pytest.approx(low_score))]  # the top item sits on the cut, not below it
    assert history.confirmed_below(7, KeepRule("k", 3), {"i02": "confirmed"}) == []
    history.retarget("p1")
    assert history.session.target_identity == "p1" and history.snapshots[7].target_identity == "p1"


def test_marks_are_checked_before_they_are_stored(cases, gallery):
    with pytest.raises(ActionRefused, match="A mark is one of confirmed, rejected, cleared, not 'maybe'"):
        check_mark_state("maybe")
    with pytest.raises(ActionRefused, match="Open a gallery to mark its items"):
        check_items(gallery, None, ["i01"])
    with pytest.raises(ActionRefused, match="Item 'zz' is not in the open gallery"):
        check_items(gallery, 1, ["i01", "zz"])
    case_id = cases.create("Marks")
    cases.load(case_id)
    cases.register_gallery(GallerySession.identify(gallery))
    done, changed, failure = record_marks(cases.store, case_id, cases.gallery_id, None, ["i01", "i02"], "rejected",
                                          None)
    assert (done, changed, failure) == (2, True, None)
    cases.write(lambda store, cid: store.set_status(cid, "closed"))
    done, changed, failure = record_marks(cases.store, case_id, cases.gallery_id, None, ["i03"], "rejected", None)
    assert (done, changed) == (0, False) and "closed" in str(failure)
