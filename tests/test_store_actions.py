"""CaseStore actions: cases, galleries, steps as a tree (undo marks, branch moves the head), marks, notes,
evidence, input errors, immediate commits, and a case reopening exactly as it was left."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import numpy as np
import pytest

from app.store import (
    CaseNotFoundError,
    CaseStateError,
    CaseStore,
    EvidenceSource,
    StepInput,
    StoreInputError,
)
from app.store.codec import HISTOGRAM_BINS


def make_step(gallery_id: int, n: int = 20, keep: int = 10, text: str = "red jacket", seed: int = 0,
              **extra) -> StepInput:
    rng = np.random.default_rng(seed)
    scores = rng.uniform(-0.2, 0.8, n).astype(np.float32)
    order = np.argsort(-scores, kind="stable")[:keep]
    fields = dict(gallery_id=gallery_id, query_kind="text", query_text=text, view="text", level="C",
                  level_source="parser", keep_rule="k", keep_value=keep, k=keep, candidates_before=n,
                  kept_ids=tuple(f"cam1/item{int(i):06d}" for i in order), kept_scores=tuple(scores[order].tolist()),
                  scores=scores, relevant=scores > 0.5, seconds=0.01,
                  filters={"cameras": ["cam1"], "time_range": [0.0, None]})
    fields.update(extra)
    return StepInput(**fields)


@pytest.fixture
def store(tmp_path):
    with CaseStore.open(tmp_path / "cases.sqlite", actor="analyst") as opened:
        yield opened


@pytest.fixture
def case(store):
    case_id = store.create_case("Blue van", "lost child near the market")
    gallery = store.add_gallery(case_id, "/data/galleries/market", "f" * 64, "ckpt-1", 5000)
    return case_id, gallery


def test_create_rename_describe_close_and_reopen(store):
    case = store.create_case("First")
    store.rename(case, "Second")
    store.describe(case, "with a description")
    [summary] = store.list_cases()
    assert (summary.title, summary.description, summary.status, summary.step_count) == \
        ("Second", "with a description", "open", 0)
    assert summary.created_at <= summary.updated_at
    store.set_status(case, "closed")
    with pytest.raises(CaseStateError, match="closed"):
        store.rename(case, "Third")
    with pytest.raises(CaseStateError, match="closed"):
        store.add_note(case, "late note")
    assert store.load_case(case).case.status == "closed"
    store.set_status(case, "open")
    store.rename(case, "Third")
    assert store.load_case(case).case.title == "Third"
    actions = [e.action for e in store.audit_trail(case)]
    assert actions == ["case.create", "case.rename", "case.describe", "case.status", "case.status", "case.rename"]


def test_unchanged_values_write_no_audit_entry(store, case):
    case_id, gallery = case
    entries = len(store.audit_trail(case_id))
    store.rename(case_id, "Blue van")
    assert store.add_gallery(case_id, "/data/galleries/market", "f" * 64, "ckpt-1", 5000) == gallery
    assert store.mark(case_id, gallery, "x", "cleared") is False
    assert len(store.audit_trail(case_id)) == entries
    other = store.add_gallery(case_id, "/data/galleries/market", "e" * 64, "ckpt-1", 5100)
    assert other != gallery
    assert [g.gallery_fingerprint for g in store.load_case(case_id).galleries] == ["f" * 64, "e" * 64]


def test_steps_form_a_tree_with_undo_and_branches(store, case):
    case_id, gallery = case
    s1 = store.record_step(case_id, make_step(gallery, seed=1))
    s2 = store.record_step(case_id, make_step(gallery, seed=2))
    s3 = store.record_step(case_id, make_step(gallery, seed=3))
    assert store.undo_step(case_id) == s3
    s4 = store.record_step(case_id, make_step(gallery, seed=4))
    state = store.load_case(case_id)
    assert state.active_path == (s1, s2, s4)
    assert state.step(s3).undone and not state.step(s4).undone
    assert [s.id for s in state.children(s2)] == [s3, s4]

    assert store.branch_from(case_id, s1) is True
    assert store.branch_from(case_id, s1) is False
    s5 = store.record_step(case_id, make_step(gallery, seed=5))
    state = store.load_case(case_id)
    assert state.active_path == (s1, s5)
    assert (state.step(s5).parent_id, state.step(s5).depth, state.step(s5).seq) == (s1, 1, 5)
    assert not state.step(s4).undone  # the abandoned branch stays as it was

    with pytest.raises(CaseStateError, match="undone"):
        store.branch_from(case_id, s3)
    store.branch_from(case_id, s4)
    assert store.load_case(case_id).active_path == (s1, s2, s4)
    for _ in range(3):
        store.undo_step(case_id)
    with pytest.raises(CaseStateError, match="no step to undo"):
        store.undo_step(case_id)
    s6 = store.record_step(case_id, make_step(gallery, seed=6))
    state = store.load_case(case_id)
    assert state.active_path == (s6,) and state.step(s6).parent_id is None
    assert [s.id for s in state.children(None)] == [s1, s6]
    assert len(state.steps) == 6 and state.case.step_count == 6
    with pytest.raises(CaseNotFoundError):
        store.branch_from(case_id, 999)


def test_a_step_keeps_its_query_kept_set_and_histogram(store, case):
    case_id, gallery = case
    step = make_step(gallery, n=300, keep=40)
    step_id = store.record_step(case_id, step)
    saved = store.load_case(case_id).step(step_id)
    assert saved.kept_ids == step.kept_ids
    assert saved.kept_scores == tuple(np.asarray(step.kept_scores, dtype=np.float32).tolist())
    assert (saved.candidates_before, saved.filtered_out, saved.candidates_after) == (300, 0, 40)
    assert (saved.level, saved.level_source, saved.level_overridden) == ("C", "parser", False)
    assert (saved.keep_rule, saved.keep_value, saved.k) == ("k", 40.0, 40)
    assert saved.filters == {"cameras": ["cam1"], "time_range": [0.0, None]}
    histogram = saved.histogram
    assert histogram["count"] == 300 and sum(histogram["counts"]) == 300 and len(histogram["counts"]) == HISTOGRAM_BINS
    assert sum(histogram["relevant"]) == int(np.count_nonzero(step.relevant))
    assert histogram["low"] == pytest.approx(float(np.min(step.scores)))
    assert histogram["high"] == pytest.approx(float(np.max(step.scores)))
    overridden = store.record_step(case_id, make_step(gallery, level="F", level_source="override"))
    assert store.load_case(case_id).step(overridden).level_overridden is True


def test_query_images_are_copied_into_the_evidence_folder(store, case, tmp_path):
    case_id, gallery = case
    sketch = tmp_path / "Suspect.PNG"
    sketch.write_bytes(b"\x89PNG sketch strokes")
    first = store.record_step(case_id, make_step(gallery, query_kind="text+sketch", sketch=sketch))
    drawn = EvidenceSource.from_bytes(b"\x89PNG drawn in the app")
    second = store.record_step(case_id, make_step(gallery, query_kind="sketch+ir", query_text=None,
                                                  sketch=sketch, ir=drawn))
    sketch.unlink()  # the case no longer needs the analyst's file
    state = store.load_case(case_id)
    kept_sketch = state.step(first).sketch
    assert state.step(second).sketch == kept_sketch  # same content → one evidence record
    assert kept_sketch.original_path == str(sketch.resolve())
    assert Path(kept_sketch.stored_path).read_bytes() == b"\x89PNG sketch strokes"
    assert Path(kept_sketch.stored_path).name == f"{kept_sketch.sha256}.png"
    assert state.step(second).ir.original_path is None
    assert Path(state.step(second).ir.stored_path).read_bytes() == b"\x89PNG drawn in the app"
    assert len(state.evidence) == 2
    assert store.verify_chain(case_id).ok
    with pytest.raises(StoreInputError, match="cannot be read"):
        store.record_step(case_id, make_step(gallery, sketch=tmp_path / "gone.png"))


def test_marks_confirm_reject_clear(store, case):
    case_id, gallery = case
    assert store.mark(case_id, gallery, "cam1/item000001", "confirmed", "same bag") is True
    assert store.mark(case_id, gallery, "cam1/item000001", "confirmed", "same bag") is False
    assert store.mark(case_id, gallery, "cam2/item000007", "rejected") is True
    assert store.mark(case_id, gallery, "cam1/item000001", "rejected", "different shoes") is True
    state = store.load_case(case_id)
    assert [(m.item_id, m.state, m.note) for m in state.marks] == [
        ("cam1/item000001", "rejected", "different shoes"), ("cam2/item000007", "rejected", None)]
    assert store.mark(case_id, gallery, "cam1/item000001", "cleared") is True
    state = store.load_case(case_id)
    assert [m.item_id for m in state.rejected] == ["cam2/item000007"] and state.confirmed == ()
    with pytest.raises(StoreInputError, match="mark state"):
        store.mark(case_id, gallery, "x", "maybe")
    other_case = store.create_case("Other")
    with pytest.raises(CaseNotFoundError, match="no gallery"):
        store.mark(other_case, gallery, "x", "confirmed")


def test_notes_on_the_case_an_item_or_a_step(store, case):
    case_id, gallery = case
    step = store.record_step(case_id, make_step(gallery))
    n1 = store.add_note(case_id, "witness saw a blue van")
    n2 = store.add_note(case_id, "check the receipt", item_id="cam1/item000003", gallery_id=gallery)
    n3 = store.add_note(case_id, "ρ too strict here", step_id=step)
    notes = store.load_case(case_id).notes
    assert [(n.id, n.item_id, n.step_id) for n in notes] == [(n1, None, None), (n2, "cam1/item000003", None),
                                                              (n3, None, step)]
    with pytest.raises(StoreInputError, match="both item_id and gallery_id"):
        store.add_note(case_id, "half", item_id="cam1/item000003")
    with pytest.raises(StoreInputError, match="note text"):
        store.add_note(case_id, "   ")
    with pytest.raises(CaseNotFoundError, match="no step"):
        store.add_note(case_id, "?", step_id=step + 100)


@pytest.mark.parametrize(("change", "message"), [
    ({"kept_scores": (0.5,)}, "kept_scores has shape"),
    ({"keep_rule": "best"}, "keep_rule must be one of"),
    ({"candidates_before": 21}, "candidates_before"),
    ({"kept_ids": ("a",) * 10}, "duplicates"),
    ({"kept_ids": tuple(f"a\n{i}" for i in range(10))}, "line breaks"),
    ({"scores": np.full(20, np.nan)}, "finite"),
    ({"filters": ["cam1"]}, "filters must be a JSON object"),
    ({"filters": {"cameras": {"cam1"}}}, "filters must be plain JSON"),
    ({"level_source": "guess"}, "level_source"),
    ({"view": ""}, "view must be a non-empty string"),
    ({"seconds": -1.0}, "seconds"),
])
def test_bad_steps_are_refused_and_change_nothing(store, case, change, message):
    case_id, gallery = case
    entries = len(store.audit_trail(case_id))
    with pytest.raises(StoreInputError, match=message):
        store.record_step(case_id, make_step(gallery, **change))
    assert len(store.audit_trail(case_id)) == entries and store.load_case(case_id).steps == ()


def test_a_step_on_another_cases_gallery_is_refused(store, case):
    case_id, _ = case
    other = store.create_case("Other")
    foreign_gallery = store.add_gallery(other, "/g2", "a" * 64, "ckpt-1", 10)
    with pytest.raises(CaseNotFoundError, match="no gallery"):
        store.record_step(case_id, make_step(foreign_gallery))
    with pytest.raises(CaseNotFoundError, match="no case 404"):
        store.record_step(404, make_step(foreign_gallery))
    assert store.load_case(case_id).steps == () and store.verify_chain(case_id).ok


def test_each_action_is_committed_when_it_returns(store, case):
    case_id, gallery = case
    raw = sqlite3.connect(store.path)
    try:
        store.mark(case_id, gallery, "cam1/item000009", "confirmed")
        assert raw.execute("SELECT state FROM marks").fetchall() == [("confirmed",)]
        store.record_step(case_id, make_step(gallery))
        assert raw.execute("SELECT count(*) FROM steps").fetchone() == (1,)
        assert raw.execute("SELECT max(seq) FROM audit_entries").fetchone() == (4,)
    finally:
        raw.close()


def test_two_stores_on_one_file_keep_one_chain(tmp_path):
    db = tmp_path / "shared.sqlite"
    with CaseStore.open(db, actor="alice") as alice, CaseStore.open(db, actor="bob") as bob:
        case_id = alice.create_case("Shared")
        gallery = bob.add_gallery(case_id, "/g", "c" * 64, "m", 30)
        for n in range(5):
            (alice if n % 2 else bob).mark(case_id, gallery, f"item{n}", "confirmed")
            (bob if n % 2 else alice).add_note(case_id, f"note {n}")
        report = alice.verify_chain(case_id)
        assert report.ok and report.entries == 12
        assert {e.actor for e in bob.audit_trail(case_id)} == {"alice", "bob"}


def test_a_case_reopens_exactly_as_it_was_left(tmp_path):
    db = tmp_path / "cases.sqlite"
    sketch = tmp_path / "s.png"
    sketch.write_bytes(b"png bytes")
    with CaseStore.open(db) as store:
        case_id = store.create_case("Reopen me", "details")
        gallery = store.add_gallery(case_id, "/g", "d" * 64, "m", 300)
        s1 = store.record_step(case_id, make_step(gallery, n=300, keep=150, seed=1))
        store.record_step(case_id, make_step(gallery, n=150, keep=75, seed=2, sketch=sketch, query_kind="text+sketch"))
        store.mark(case_id, gallery, "cam1/item000004", "confirmed", "yes")
        store.undo_step(case_id)
        store.branch_from(case_id, s1)
        store.record_step(case_id, make_step(gallery, n=150, keep=20, seed=3, keep_rule="threshold",
                                             keep_value=0.4))
        store.add_note(case_id, "branch after undo", step_id=s1)
        left = store.load_case(case_id)
    with CaseStore.open(db) as store:
        assert store.load_case(case_id) == left
        assert store.verify_chain(case_id).ok


def test_a_100k_candidate_step_stays_cheap(tmp_path):
    db = tmp_path / "big.sqlite"
    with CaseStore.open(db) as store:
        case_id = store.create_case("Big")
        gallery = store.add_gallery(case_id, "/g", "b" * 64, "m", 100_000)
        before = db.stat().st_size + (tmp_path / "big.sqlite-wal").stat().st_size
        step = make_step(gallery, n=100_000, keep=50_000)
        step_id = store.record_step(case_id, step)
        state = store.load_case(case_id)
    grown = db.stat().st_size - before  # the WAL was checkpointed into the file on close
    assert state.step(step_id).kept_ids == step.kept_ids
    assert grown < 600_000, grown


def test_actions_from_worker_threads_keep_one_chain(store, case):
    case_id, gallery = case
    failures = []

    def work(worker: int) -> None:
        try:
            for n in range(10):
                store.add_note(case_id, f"worker {worker} note {n}")
                store.mark(case_id, gallery, f"w{worker}-{n}", "rejected")
        except Exception as exc:
            failures.append(repr(exc))

    threads = [threading.Thread(target=work, args=(w,)) for w in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    report = store.verify_chain(case_id)
    assert report.ok and report.entries == 2 + 60
    assert len(store.load_case(case_id).marks) == 30
