"""The audit trail: one chained entry per action, triggers that refuse edits, and ``verify_chain`` catching
edits made with raw sqlite3 after the triggers are dropped (to the trail, the tables and the evidence)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from audit_edits import edit_audit, raw

from app.store import CaseStore, StepInput
from app.store.audit import GENESIS_HASH, entry_hash
from app.store.models import canonical_json


def small_step(gallery_id: int, kept: tuple[str, ...] = ("a", "b"), **extra) -> StepInput:
    fields = dict(gallery_id=gallery_id, query_kind="text", query_text="grey hoodie", view="text", keep_rule="rho",
                  keep_value=0.5, k=len(kept), candidates_before=4, kept_ids=kept,
                  kept_scores=tuple(np.linspace(0.9, 0.8, len(kept)).tolist()), scores=np.linspace(0.2, 0.9, 4))
    fields.update(extra)
    return StepInput(**fields)


@pytest.fixture
def filled(tmp_path):
    """A case with one of every action; returns (db path, case id, step id)."""
    db = tmp_path / "audit.sqlite"
    sketch = tmp_path / "sketch.png"
    sketch.write_bytes(b"sketch")
    with CaseStore.open(db, actor="examiner") as store:
        case = store.create_case("Audit me")
        gallery = store.add_gallery(case, "/g", "9" * 64, "m", 4)
        step = store.record_step(case, small_step(gallery, sketch=sketch, query_kind="text+sketch"))
        store.record_step(case, small_step(gallery, kept=("a",)))
        store.undo_step(case)
        store.branch_from(case, None)
        store.branch_from(case, step)
        store.mark(case, gallery, "a", "confirmed", "match")
        store.mark(case, gallery, "b", "rejected")
        store.mark(case, gallery, "b", "cleared")
        store.add_note(case, "seen at 14:02", step_id=step)
        store.rename(case, "Audited")
        assert store.verify_chain(case).ok
    return db, case, step


def problems(db: Path, case: int) -> tuple[str, ...]:
    with CaseStore.open(db) as store:
        return store.verify_chain(case).problems


def test_one_chained_entry_per_action(filled):
    db, case, step = filled
    with CaseStore.open(db) as store:
        entries = store.audit_trail(case)
        state = store.load_case(case)
    assert [e.action for e in entries] == [
        "case.create", "gallery.add", "step.record", "step.record", "step.undo", "step.branch", "step.branch",
        "mark", "mark", "mark", "note.add", "case.rename"]
    assert [e.seq for e in entries] == list(range(1, 13))
    assert {e.actor for e in entries} == {"examiner"}
    prev = GENESIS_HASH
    for entry in entries:
        assert entry.prev_hash == prev
        assert entry.hash == entry_hash(prev, case, entry.seq, entry.at, entry.actor, entry.action, entry.payload)
        prev = entry.hash
    assert state.audit_head == prev
    assert entries[2].payload["sketch"]["sha256"] == state.step(step).sketch.sha256
    assert entries[4].payload == {"step": step + 1, "head": step}
    assert entries[9].payload == {"gallery": 1, "item": "b", "state": "cleared", "note": None}
    assert [e.at for e in entries] == sorted(e.at for e in entries)


def test_triggers_refuse_update_delete_and_out_of_chain_inserts(filled):
    db, case, _ = filled
    connection = raw(db)
    with pytest.raises(sqlite3.IntegrityError, match="append-only: UPDATE"):
        connection.execute("UPDATE audit_entries SET actor = 'someone else' WHERE seq = 2")
    with pytest.raises(sqlite3.IntegrityError, match="append-only: DELETE"):
        connection.execute("DELETE FROM audit_entries WHERE seq = 12")
    with pytest.raises(sqlite3.IntegrityError, match="does not extend"):
        connection.execute("INSERT INTO audit_entries (case_id, seq, at, actor, action, payload, prev_hash, hash) "
                           "VALUES (?, 13, 'now', 'x', 'mark', '{}', ?, ?)", (case, GENESIS_HASH, "f" * 64))
    with pytest.raises(sqlite3.IntegrityError, match="immutable"):
        connection.execute("UPDATE steps SET kept_sha256 = 'x' WHERE id = 1")
    with pytest.raises(sqlite3.IntegrityError, match="already undone"):
        connection.execute("UPDATE steps SET undone_at = NULL WHERE id = 2")
    with pytest.raises(sqlite3.IntegrityError, match="never deleted"):
        connection.execute("DELETE FROM steps WHERE id = 2")
    connection.close()
    assert problems(db, case) == ()


def test_an_edited_payload_is_caught(filled):
    db, case, _ = filled
    connection = raw(db)
    payload = json.loads(connection.execute("SELECT payload FROM audit_entries WHERE seq = 8").fetchone()[0])
    connection.close()
    payload["note"] = "no match"
    edit_audit(db, "UPDATE audit_entries SET payload = ? WHERE seq = 8", canonical_json(payload))
    found = problems(db, case)
    assert any("seq 8 (mark): hash does not match" in p for p in found), found
    assert any("marks differ" in p for p in found), found


def test_an_edit_with_a_recomputed_hash_breaks_the_next_link(filled):
    db, case, _ = filled
    connection = raw(db)
    seq, at, actor, action, prev = connection.execute(
        "SELECT seq, at, actor, action, prev_hash FROM audit_entries WHERE seq = 11").fetchone()
    connection.close()
    forged = {"note": 1, "text": "seen at 15:30", "item": None, "gallery": None, "step": 1}
    edit_audit(db, "UPDATE audit_entries SET payload = ?, hash = ? WHERE seq = 11", canonical_json(forged),
               entry_hash(prev, case, seq, at, actor, action, forged))
    found = problems(db, case)
    assert any("seq 12: prev_hash does not match" in p for p in found), found
    assert any("note 1 differs" in p and "text" in p for p in found), found


def test_a_deleted_entry_is_caught(filled):
    db, case, _ = filled
    edit_audit(db, "DELETE FROM audit_entries WHERE seq = 5")
    found = problems(db, case)
    assert any("expected seq 5" in p for p in found), found
    assert any("undone steps" in p for p in found), found


def test_an_edited_actor_or_time_is_caught(filled):
    db, case, _ = filled
    edit_audit(db, "UPDATE audit_entries SET actor = 'intern' WHERE seq = 3")
    assert any("seq 3 (step.record): hash does not match" in p for p in problems(db, case))


@pytest.mark.parametrize(("sql", "expected"), [
    ("UPDATE cases SET title = 'Renamed quietly'", "case title"),
    ("UPDATE marks SET state = 'rejected'", "marks differ"),
    ("UPDATE notes SET text = 'edited'", "note 1 differs"),
    ("UPDATE case_galleries SET item_count = 5", "gallery 1 differs"),
    ("INSERT INTO marks (case_id, gallery_id, item_id, state, at) "
     "VALUES (1, 1, 'z', 'confirmed', '2030-01-01T00:00:00.000000+00:00')", "marks differ"),
    ("UPDATE marks SET at = 'yesterday'", "unreadable values: stored time 'yesterday'"),
    ("UPDATE cases SET head_step_id = 2", "head step"),
])
def test_edits_to_the_tables_are_caught(filled, sql, expected):
    db, case, _ = filled
    connection = raw(db)
    connection.execute(sql)
    connection.close()
    found = problems(db, case)
    assert any(expected in p for p in found), found


def test_edits_to_a_step_are_caught(filled):
    db, case, step = filled
    connection = raw(db)
    connection.execute("DROP TRIGGER steps_immutable")
    connection.execute("DROP TRIGGER steps_undo_once")
    connection.execute("UPDATE steps SET keep_value = 0.9 WHERE id = ?", (step,))
    connection.execute("UPDATE steps SET undone_at = NULL WHERE id = ?", (step + 1,))
    connection.close()
    found = problems(db, case)
    assert any(f"step {step} differs" in p and "keep_value" in p for p in found), found
    assert any("undone steps" in p for p in found), found
    connection = raw(db)
    connection.execute("UPDATE steps SET filters = '{not json' WHERE id = ?", (step,))
    connection.close()
    assert any("unreadable values: stored JSON" in p for p in problems(db, case))


def test_a_swapped_kept_set_is_caught(filled):
    db, case, step = filled
    import zlib

    connection = raw(db)
    connection.execute("DROP TRIGGER steps_immutable")
    connection.execute("UPDATE steps SET kept_ids = ? WHERE id = ?", (zlib.compress(b"a\nc"), step))
    connection.close()
    found = problems(db, case)
    assert any("kept ids do not match" in p for p in found), found
    assert any(f"step {step} differs" in p and "kept_sha256" in p for p in found), found


def test_a_replaced_evidence_file_is_caught(filled):
    db, case, step = filled
    with CaseStore.open(db) as store:
        stored = Path(store.load_case(case).step(step).sketch.stored_path)
    stored.write_bytes(b"another sketch")
    assert any("does not match its SHA-256" in p for p in problems(db, case))
    stored.unlink()
    assert any("is missing" in p for p in problems(db, case))


def test_a_failed_action_leaves_neither_change_nor_entry(filled):
    db, case, _ = filled
    with CaseStore.open(db) as store:
        entries = store.audit_trail(case)
        with pytest.raises(ValueError):
            store.record_step(case, small_step(99))
        assert store.audit_trail(case) == entries
        assert store.verify_chain(case).ok
