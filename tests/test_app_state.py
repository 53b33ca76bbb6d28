"""AppState on a real gallery, search session and case store: every action is recorded in the store before
its signal, sessions follow undo/branch, marks reach the next step, a reopened case re-runs its path."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
from PySide6.QtCore import QThreadPool

from app.state import AppState, KeepRule, QuerySpec, replay_plan, timeline_rows
from app.store import CaseStore
from engine.index import Gallery
from engine.retrieval.encoding.views import gallery_views
from engine.retrieval.search.encoder import FingerprintEncoder

DIM = 8
N = 120
PEOPLE = 5
WAIT = 10_000


def unit(x):
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


class CentroidEncoder(FingerprintEncoder):
    """Text "... pK" → centroid K (level C); sketches and IR images → centroid 0; ``gate`` blocks
    encoding."""

    fingerprint = "ckpt-app"

    def __init__(self, centres):
        self.centres = centres
        self.gate: threading.Event | None = None
        self.entered = threading.Event()

    def level_for(self, text):
        return "C"

    attribute_weight = None  # the checkpoint states no attribute weight

    def level_and_source(self, text):
        return "C", "parser"

    def encode_text(self, text):
        self.entered.set()
        if self.gate is not None:
            self.gate.wait(5)
        return self.centres[int(text.split()[-1][1:])]

    def encode_fused(self, text, sketch, ir):
        return self.encode_text(text) if text else self.centres[0]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    rng = np.random.default_rng(11)
    centres = unit(rng.standard_normal((PEOPLE, DIM)))
    identity = rng.integers(0, PEOPLE, N)
    views = gallery_views(DIM)
    vectors = {view: unit(centres[identity] + 0.5 * rng.standard_normal((N, DIM))) for view in views}
    items = [{"id": f"cam{k % 3}/f{k:04d}", "source": "walk.mp4", "frame": k, "time": float(k),
              "camera": f"cam{k % 3}", "identity": f"p{identity[k]}"} for k in range(N)]
    gallery = Gallery.create(tmp_path_factory.mktemp("app-state") / "gallery", views, "ckpt-app")
    gallery.add(items, vectors)
    return gallery, centres


@pytest.fixture
def pool():
    pool = QThreadPool()
    pool.setMaxThreadCount(1)
    yield pool
    pool.waitForDone(WAIT)


@pytest.fixture
def store(tmp_path):
    with CaseStore.open(tmp_path / "cases.db", actor="tester") as store:
        yield store


@pytest.fixture
def state(qtbot, world, store, pool):
    gallery, centres = world
    state = AppState(pool=pool)
    state.set_store(store)
    assert state.new_case("Red jacket, platform 2") is not None
    assert state.set_gallery(gallery, CentroidEncoder(centres))
    errors = []
    state.error.connect(errors.append)
    state.test_errors = errors
    yield state
    state.close()


def search(qtbot, state, text, **keep):
    spec = QuerySpec(text=text, keep=KeepRule(**keep) if keep else KeepRule())
    with qtbot.waitSignal(state.step_recorded, timeout=WAIT) as blocker:
        assert state.search(spec) is not None
    return blocker.args[0]


def test_a_search_is_stored_before_it_is_announced(qtbot, state, store):
    seen = []
    state.case_changed.connect(lambda case: seen.append(None if case is None else len(case.steps)))
    step_id = search(qtbot, state, "person p1")
    assert state.test_errors == []
    stored = store.load_case(state.case_id)
    assert stored.active_path == (step_id,)
    assert seen[-1] == 1
    step = stored.step(step_id)
    assert step.candidates_before == N and step.candidates_after == math.ceil(0.5 * N)
    assert step.level == "C" and step.level_source == "parser"
    result = state.step_result(step_id)
    assert tuple(result.kept_ids) == step.kept_ids
    assert state.selected_step_id == step_id
    assert state.session.steps[-1] is result
    assert not state.busy


def test_steps_narrow_undo_and_branch_follow_the_store(qtbot, state, store):
    first = search(qtbot, state, "person p1")
    second = search(qtbot, state, "person p2", kind="k", value=10)
    third = search(qtbot, state, "person p1", kind="rho", value=0.5)
    case = store.load_case(state.case_id)
    assert [case.step(i).candidates_before for i in (first, second, third)] == [N, math.ceil(0.5 * N), 10]
    assert case.step(third).candidates_after == 5

    assert state.undo_step()
    assert state.head_step_id == second and state.selected_step_id == second
    assert [s.index for s in state.session.steps] == [0, 1]
    assert store.load_case(state.case_id).step(third).undone

    assert state.branch_from(first)
    assert state.head_step_id == first and len(state.session.steps) == 1
    fourth = search(qtbot, state, "person p3", kind="k", value=7)
    case = store.load_case(state.case_id)
    assert case.step(fourth).parent_id == first and case.active_path == (first, fourth)
    assert case.step(fourth).candidates_before == math.ceil(0.5 * N)
    rows = timeline_rows(case, N)
    # creation order: the first line stays 1 → 2 → 3, the new step is a branch labelled 2a
    assert [(r.step_id, r.lane, r.label) for r in rows] == [(None, 0, "0"), (first, 0, "1"), (fourth, 1, "2a"),
                                                            (second, 0, "2"), (third, 0, "3")]

    assert state.branch_from(None)
    assert state.session.steps == ()
    assert state.test_errors == []


def test_marks_are_stored_and_shape_the_next_step(qtbot, state, store):
    first = search(qtbot, state, "person p1")
    kept = state.step_result(first).kept_ids
    rejected, confirmed = kept[0], state.step_result(first).item_ids[0]
    changes = []
    state.marks_changed.connect(changes.append)
    assert state.reject(rejected)
    assert state.confirm(confirmed, note="same backpack")
    assert changes[-1] == {rejected: "rejected", confirmed: "confirmed"}
    assert state.session.rejected == (rejected,) and state.session.confirmed == (confirmed,)
    marks = {(m.item_id, m.state, m.note) for m in store.load_case(state.case_id).marks}
    assert marks == {(rejected, "rejected", None), (confirmed, "confirmed", "same backpack")}

    second = search(qtbot, state, "person p1", kind="k", value=3)
    result = state.step_result(second)
    assert rejected not in result.kept_ids and confirmed in result.kept_ids
    assert state.clear_mark(rejected)
    assert state.marks == {confirmed: "confirmed"}
    ranking = state.final_ranking()
    assert ranking.ids[0] == confirmed and len(ranking.ids) == N
    others = [i for i in state.step_result(first).kept_ids if i not in (confirmed, rejected)][:3]
    assert state.mark_many(others, "rejected") == 3
    assert changes[-1] == {confirmed: "confirmed", **{item: "rejected" for item in others}}
    assert len(store.load_case(state.case_id).rejected) == 3
    assert not state.reject("not-an-item")
    assert "not in the open gallery" in state.test_errors[-1]


def test_a_mark_records_the_step_score_rank_and_examiner_it_was_made_at(qtbot, state, store):
    first = search(qtbot, state, "person p1")
    second = search(qtbot, state, "person p2", kind="k", value=10)
    state.select_step(first)
    kept = store.load_case(state.case_id).step(first)
    assert state.confirm(kept.kept_ids[4])
    [mark] = store.load_case(state.case_id).marks
    assert (mark.step_id, mark.rank, mark.actor) == (first, 5, "tester")
    assert mark.score == pytest.approx(kept.kept_scores[4])
    state.select_step(second)
    outside = next(i for i in kept.kept_ids if i not in store.load_case(state.case_id).step(second).kept_ids)
    assert state.reject(outside)
    rejected = next(m for m in store.load_case(state.case_id).marks if m.item_id == outside)
    assert (rejected.step_id, rejected.rank, rejected.score) == (second, None, None)


def test_a_note_edit_is_stored_and_audited(qtbot, state, store):
    note = state.add_note("red jcket")
    assert state.edit_note(note, "red jacket, gate 3")
    [kept] = store.load_case(state.case_id).notes
    assert kept.text == "red jacket, gate 3" and kept.edited_at is not None
    assert not state.edit_note(note, "")
    assert state.test_errors and "Note text" in state.test_errors[-1]


def test_a_reopened_case_reruns_its_path_with_the_marks_of_the_time(qtbot, world, state, store, pool):
    gallery, centres = world
    first = search(qtbot, state, "person p1")
    dropped = state.step_result(first).kept_ids[1]
    assert state.reject(dropped)
    second = search(qtbot, state, "person p4", kind="k", value=12)
    assert state.clear_mark(dropped)  # cleared after step 2: step 2 must still re-run without it
    sketch = np.full((64, 32, 3), 255, dtype=np.uint8)
    sketch[10:50, 14:18] = 0
    with qtbot.waitSignal(state.step_recorded, timeout=WAIT) as blocker:
        state.search(QuerySpec(text="person p4", sketch=sketch, level="F", keep=KeepRule("k", 6)))
    third = blocker.args[0]
    plan = replay_plan(store.load_case(state.case_id), store.audit_trail(state.case_id), state.gallery_id)
    assert [(p.step.id, p.rejected) for p in plan] == [(first, ()), (second, (dropped,)), (third, ())]
    assert plan[2].query.level == "F" and plan[2].query.kind == "text+sketch"
    assert plan[2].query.sketch == store.load_case(state.case_id).step(third).sketch.stored_path

    other = AppState(pool=pool)
    other.set_store(store)
    assert other.set_gallery(gallery, CentroidEncoder(centres))
    assert other.open_case(state.case_id)
    assert other.session is None and other.step_result(second) is None
    errors = []
    other.error.connect(errors.append)
    with qtbot.waitSignal(other.session_changed, timeout=WAIT):
        assert other.restore_session() is not None
    assert errors == []
    assert [s.index for s in other.session.steps] == [0, 1, 2]
    stored = store.load_case(state.case_id)
    for step_id in (first, second, third):
        assert tuple(other.step_result(step_id).kept_ids) == stored.step(step_id).kept_ids
    assert other.step_result(third).level == "F"
    fourth = search(qtbot, other, "person p4", kind="k", value=4)
    assert store.load_case(state.case_id).step(fourth).parent_id == third


def test_the_next_search_on_a_reopened_case_reruns_first(qtbot, world, state, store, pool):
    gallery, centres = world
    first = search(qtbot, state, "person p2")
    other = AppState(pool=pool)
    other.set_store(store)
    other.open_case(state.case_id)
    other.set_gallery(gallery, CentroidEncoder(centres))
    second = search(qtbot, other, "person p2", kind="k", value=9)
    assert other.step_result(first) is not None
    assert store.load_case(state.case_id).step(second).candidates_before == math.ceil(0.5 * N)


def test_a_cancelled_search_leaves_no_trace(qtbot, world, state, store):
    first = search(qtbot, state, "person p1")
    encoder = state.encoder
    encoder.gate, encoder.entered = threading.Event(), threading.Event()
    busy = []
    state.busy_changed.connect(busy.append)
    handle = state.search(QuerySpec(text="person p2"))
    assert encoder.entered.wait(5)
    assert state.busy and state.job_name == "Searching"
    assert not state.reject(state.step_result(first).kept_ids[0])
    assert "still running" in state.test_errors[-1]
    state.cancel()
    encoder.gate.set()
    with qtbot.waitSignal(handle.finished, timeout=WAIT):
        pass
    assert busy == [True, False]
    assert len(store.load_case(state.case_id).steps) == 1
    assert state.head_step_id == first and len(state.session.steps) == 1


def test_find_similar_needs_no_encoder(qtbot, world, state, store):
    gallery, _ = world
    state.set_gallery(gallery, None)
    with qtbot.waitSignal(state.step_recorded, timeout=WAIT) as blocker:
        state.find_similar(gallery.ids[5], KeepRule("k", 20))
    step = store.load_case(state.case_id).step(blocker.args[0])
    assert step.query_kind == "example" and step.candidates_after == 20
    assert state.search(QuerySpec(text="person p1")) is None
    assert "need a model" in state.test_errors[-1]


def test_find_similar_across_an_outfit_change_is_stored_and_rerun(qtbot, world, state, store, pool, tmp_path):
    from engine.index import evidence_table
    from engine.kernel.ontology import BIOMETRIC_KEYS, ONTOLOGY
    from engine.retrieval.search import SearchSession, StepQuery

    gallery, centres = world
    with qtbot.waitSignal(state.error, timeout=WAIT):  # no evidence: said in words
        state.find_similar(gallery.ids[5], outfit_changed=True)
    assert "no model evidence" in state.test_errors[-1]
    dressed = Gallery.create(tmp_path / "dressed", gallery_views(DIM), "ckpt-app")
    dressed.add([{"id": i.id, "source": i.source, "frame": i.frame, "time": i.time, "camera": i.camera,
                  "identity": i.identity} for i in gallery.iter_items()],
                {view: gallery.vectors(view) for view in gallery.views})
    rng = np.random.default_rng(5)
    people = {f"p{p}": {key: rng.choice(ONTOLOGY.attributes[key]) for key in BIOMETRIC_KEYS} for p in range(PEOPLE)}

    def reading(person):
        probabilities = {key: {v: (0.9 if v == value else 0.1 / (len(ONTOLOGY.attributes[key]) - 1))
                               for v in ONTOLOGY.attributes[key]} for key, value in person.items()}
        return {"model": {"version": 1, "probabilities": probabilities, "confidence": dict.fromkeys(person, 0.6)}}

    items = list(dressed.iter_items())
    evidence_table.append(dressed.root, [i.id for i in items], [reading(people[i.identity]) for i in items],
                          model_fingerprint="ckpt-app")
    assert state.set_gallery(dressed, None)
    example = items[5]
    with qtbot.waitSignal(state.step_recorded, timeout=WAIT) as blocker:
        state.find_similar(example.id, KeepRule("k", 30), outfit_changed=True)
    step = store.load_case(state.case_id).step(blocker.args[0])
    assert step.query_kind == "example" and step.view == "biometrics" and step.candidates_after == 30
    direct = SearchSession(dressed).step(StepQuery(example=example.id, outfit_changed=True, k=30))
    assert tuple(state.step_result(step.id).kept_ids) == step.kept_ids == tuple(direct.kept_ids)
    assert "other clothes" in timeline_rows(store.load_case(state.case_id), N)[-1].query
    plan = replay_plan(store.load_case(state.case_id), store.audit_trail(state.case_id), state.gallery_id)
    assert plan[-1].query.outfit_changed and plan[-1].query.example == example.id
    other = AppState(pool=pool)
    other.set_store(store)
    assert other.set_gallery(dressed, None)
    assert other.open_case(state.case_id)
    with qtbot.waitSignal(other.session_changed, timeout=WAIT):
        assert other.restore_session() is not None
    assert tuple(other.step_result(step.id).kept_ids) == step.kept_ids


def test_filters_and_bad_input_become_messages(qtbot, state, store):
    assert state.set_filters(cameras={"cam1"}, time_range=(10, None))
    step_id = search(qtbot, state, "person p3")
    step = store.load_case(state.case_id).step(step_id)
    assert step.filters == {"cameras": ["cam1"], "time_range": [10.0, None]}
    assert step.filtered_out == N - sum(1 for k in range(10, N) if k % 3 == 1)
    assert not state.set_filters(time_range=(5, 1))
    assert "starts after it ends" in state.test_errors[-1]
    assert state.search(QuerySpec()) is None
    assert "empty" in state.test_errors[-1]


def test_a_closed_case_refuses_changes(qtbot, state):
    search(qtbot, state, "person p1")
    assert state.set_case_status("closed")
    assert state.search(QuerySpec(text="person p2")) is None
    assert "closed" in state.test_errors[-1]
    assert not state.reject(state.gallery.ids[0])
    assert "closed" in state.test_errors[-1]
    assert not state.undo_step()
    assert "closed" in state.test_errors[-1]


def test_actions_without_a_case_say_so(qtbot, pool):
    state = AppState(pool=pool)
    errors = []
    state.error.connect(errors.append)
    assert state.search(QuerySpec(text="a man")) is None
    assert errors == ["Open or create a case first"]
    assert state.new_case("x") is None
    assert errors[-1] == "Open a case database first"


def test_a_gallery_loads_in_a_worker(qtbot, world, state, store, tmp_path):
    gallery, centres = world
    with qtbot.waitSignal(state.gallery_changed, timeout=WAIT) as blocker:
        assert state.load_gallery(gallery.root, lambda opened: CentroidEncoder(centres)) is not None
    assert blocker.args[0].root == gallery.root and len(blocker.args[0]) == N
    assert state.gallery_id == store.load_case(state.case_id).galleries[0].id  # the same gallery, one record
    search(qtbot, state, "person p2")
    with qtbot.waitSignal(state.error, timeout=WAIT) as blocker:
        state.load_gallery(tmp_path / "nowhere")
    assert "does not exist" in blocker.args[0]
    assert state.gallery is not None and not state.busy


def test_a_new_gallery_is_recorded_in_the_case_by_the_worker(qtbot, world, state, store, tmp_path, monkeypatch):
    gallery, centres = world
    other = Gallery.create(tmp_path / "other", gallery_views(DIM), "ckpt-app")
    other.add([{"id": "x0", "source": "s.mp4", "frame": 0}], {view: unit(np.ones((1, DIM))) for view in
                                                               gallery_views(DIM)})
    writers = []
    add_gallery = store.add_gallery
    monkeypatch.setattr(store, "add_gallery", lambda *a, **k: writers.append(threading.current_thread())
                        or add_gallery(*a, **k))
    with qtbot.waitSignal(state.gallery_changed, timeout=WAIT):
        state.load_gallery(other.root)
    assert writers and threading.main_thread() not in writers  # the store was written off the UI thread
    stored = store.load_case(state.case_id)
    assert state.gallery_id == stored.galleries[-1].id and stored.galleries[-1].path == str(other.root)
    assert [g.id for g in state.case.galleries] == [g.id for g in stored.galleries]
    with qtbot.waitSignal(state.gallery_changed, timeout=WAIT):  # a gallery the case knows is not recorded again
        state.load_gallery(gallery.root, lambda opened: CentroidEncoder(centres))
    assert len(writers) == 1 and state.gallery_id == stored.galleries[0].id
    assert not state.test_errors


def test_a_rerun_that_disagrees_with_the_record_is_reported(qtbot, world, state, store, pool):
    gallery, centres = world
    search(qtbot, state, "person p1")
    other = AppState(pool=pool)
    other.set_store(store)
    other.set_gallery(gallery, CentroidEncoder(centres[::-1].copy()))  # same fingerprint, other weights
    other.open_case(state.case_id)
    errors = []
    other.error.connect(errors.append)
    with qtbot.waitSignal(other.session_changed, timeout=WAIT):
        other.restore_session()
    assert len(errors) == 1 and "different kept items at step 1" in errors[0]
    assert len(store.load_case(state.case_id).steps) == 1  # the record is not touched


def test_a_model_that_did_not_build_the_gallery_is_refused(world, state):
    gallery, centres = world
    stranger = CentroidEncoder(centres)
    stranger.fingerprint = "another-checkpoint"
    before = state.encoder
    assert not state.set_gallery(gallery, stranger)
    assert "fingerprint 'another-checkpoint' does not match" in state.test_errors[-1]
    assert state.encoder is before
