"""The case record kept since schema 0003: how each mark was reached (step, score, rank, examiner), audited
note edits, the gallery version a case searched, and the case's own working state."""

from __future__ import annotations

import sqlite3

import pytest
from test_store_actions import make_step

from app.store import CaseNotFoundError, CaseStore, StoreInputError


@pytest.fixture
def store(tmp_path):
    with CaseStore.open(tmp_path / "cases.sqlite", actor="examiner-a") as opened:
        yield opened


@pytest.fixture
def case(store):
    case_id = store.create_case("Market")
    gallery = store.add_gallery(case_id, "/data/market", "f" * 64, "ckpt-1", 20, version=2)
    return case_id, gallery


def test_a_mark_keeps_the_step_score_rank_and_examiner(store, case):
    case_id, gallery = case
    step = store.record_step(case_id, make_step(gallery))
    state = store.load_case(case_id)
    item, score = state.step(step).kept_ids[2], state.step(step).kept_scores[2]
    assert store.mark(case_id, gallery, item, "confirmed", "same bag", step_id=step, score=score, rank=3)
    [mark] = store.load_case(case_id).marks
    assert (mark.step_id, mark.score, mark.rank, mark.actor) == (step, pytest.approx(score), 3, "examiner-a")
    [entry] = [e for e in store.audit_trail(case_id) if e.action == "mark"]
    assert entry.payload["step"] == step and entry.payload["rank"] == 3 and entry.payload["by"] == "examiner-a"
    assert store.verify_chain(case_id).ok


def test_a_changed_mark_score_is_found_by_verification(store, case, tmp_path):
    case_id, gallery = case
    step = store.record_step(case_id, make_step(gallery))
    store.mark(case_id, gallery, "cam1/item000001", "confirmed", step_id=step, score=0.5, rank=1)
    with sqlite3.connect(tmp_path / "cases.sqlite") as raw:
        raw.execute("UPDATE marks SET score = 0.9, rank = 7")
    problems = store.verify_chain(case_id).problems
    assert any("marks differ" in p for p in problems), problems


def test_mark_context_is_checked(store, case):
    case_id, gallery = case
    with pytest.raises(StoreInputError, match="rank"):
        store.mark(case_id, gallery, "x", "confirmed", rank=0)
    with pytest.raises(StoreInputError, match="score"):
        store.mark(case_id, gallery, "x", "confirmed", score=float("nan"))
    with pytest.raises(CaseNotFoundError, match="step 99"):
        store.mark(case_id, gallery, "x", "confirmed", step_id=99)
    with pytest.raises(StoreInputError, match="cleared"):
        store.mark(case_id, gallery, "x", "cleared", rank=1)


def test_a_note_edit_is_audited_and_verifies(store, case, tmp_path):
    case_id, _ = case
    note = store.add_note(case_id, "red jcket at the gate")
    assert store.edit_note(case_id, note, "red jacket at the gate, 14:02")
    assert not store.edit_note(case_id, note, "red jacket at the gate, 14:02")
    [kept] = store.load_case(case_id).notes
    assert kept.text == "red jacket at the gate, 14:02" and kept.edited_at is not None and kept.at < kept.edited_at
    edits = [e for e in store.audit_trail(case_id) if e.action.startswith("note.")]
    assert [e.action for e in edits] == ["note.add", "note.edit"]
    assert edits[0].payload["text"] == "red jcket at the gate"  # the first text stays in the trail
    assert store.verify_chain(case_id).ok
    with sqlite3.connect(tmp_path / "cases.sqlite") as raw:
        raw.execute("UPDATE notes SET text = 'blue jacket'")
    assert any("note" in p for p in store.verify_chain(case_id).problems)


def test_a_note_of_another_case_cannot_be_edited(store, case):
    case_id, _ = case
    other = store.create_case("Other")
    note = store.add_note(other, "theirs")
    with pytest.raises(CaseNotFoundError, match=f"no note {note}"):
        store.edit_note(case_id, note, "mine")
    with pytest.raises(StoreInputError):
        store.edit_note(other, note, "")


def test_the_gallery_version_is_kept(store, case):
    case_id, _ = case
    [use] = store.load_case(case_id).galleries
    assert use.version == 2
    assert store.verify_chain(case_id).ok


def test_working_state_is_per_case_not_audited_and_survives_closing(store, case, tmp_path):
    case_id, _ = case
    other = store.create_case("Other")
    trail = len(store.audit_trail(case_id))
    state = {"filters": {"cameras": ["cam2"]}, "level": "F", "keep": {"rule": "k", "value": 30}}
    store.save_working_state(case_id, state)
    assert store.load_case(case_id).working_state == state
    assert store.load_case(other).working_state is None
    assert len(store.audit_trail(case_id)) == trail and store.verify_chain(case_id).ok
    store.set_status(case_id, "closed")
    store.save_working_state(case_id, {"level": "C"})
    with CaseStore.open(tmp_path / "cases.sqlite") as again:
        assert again.load_case(case_id).working_state == {"level": "C"}
    with pytest.raises(StoreInputError, match="JSON object"):
        store.save_working_state(case_id, ["level"])
    with pytest.raises(StoreInputError, match="plain JSON"):
        store.save_working_state(case_id, {"score": float("nan")})
