"""Checking a report (app/report/verify.py): a fresh export passes; an edited report, a changed evidence file,
a tampered audit trail, a missing manifest, another database or case, and a changed gallery each fail with a
message that says what is wrong; entries added after the report are a note, not a problem."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from audit_edits import edit_audit
from report_cases import report_case

from app.report import export_report, manifest_path, verify_report
from app.report.signing import grouped, installation_key
from app.store import CaseStore
from app.store.audit import entry_hash
from app.store.models import canonical_json
from engine.index import Gallery

pytestmark = pytest.mark.usefixtures("qapp")  # a QApplication, as in the app (not a bare QGuiApplication)


@pytest.fixture
def exported(tmp_path):
    built = report_case(tmp_path)
    result = export_report(built.db, built.case_id, tmp_path / "case.html")
    return built, result


def problems_of(report: Path, db: Path) -> tuple[str, ...]:
    check = verify_report(report, db)
    assert check.ok == (not check.problems)
    return check.problems


def has(problems, *words) -> bool:
    return any(all(word in problem for word in words) for problem in problems)


def test_a_fresh_report_verifies(exported):
    built, result = exported
    check = verify_report(result.report_path, built.db)
    assert check.ok and check.problems == () and check.notes == (
        f"signed by key {grouped(installation_key(create=False).fingerprint)} (this installation's own key)",)
    pdf = export_report(built.db, built.case_id, result.report_path.with_suffix(".pdf"))
    assert verify_report(pdf.report_path, built.db).ok


def test_an_edited_report_fails(exported):
    built, result = exported
    page = result.report_path.read_text(encoding="utf-8")
    result.report_path.write_text(page.replace("same bag", "different bag"), encoding="utf-8")
    found = problems_of(result.report_path, built.db)
    assert len(found) == 1 and has(found, "report file", "has been changed since it was made")


def test_a_changed_evidence_file_fails(exported):
    built, result = exported
    manifest = json.loads(result.manifest_path.read_text())
    sketch = built.db.parent / next(e["path"] for e in manifest["evidence"] if e["kind"] == "sketch")
    sketch.write_bytes(sketch.read_bytes() + b"\0")
    found = problems_of(result.report_path, built.db)
    assert has(found, "sketch evidence file", str(sketch), "has changed")
    assert has(found, "audit trail:", "does not match its SHA-256")  # the case store sees it too
    crop = built.db.parent / next(e["path"] for e in manifest["evidence"] if e["kind"] == "crop")
    crop.unlink()
    assert has(problems_of(result.report_path, built.db), "crop evidence file", str(crop), "is missing")


def test_an_audit_row_edited_with_sqlite_fails(exported):
    built, result = exported
    edit_audit(built.db, "UPDATE audit_entries SET actor = 'someone else' WHERE seq = 3")
    found = problems_of(result.report_path, built.db)
    assert has(found, "audit trail:", "seq 3", "hash does not match its contents")


def test_a_forged_head_entry_fails_even_with_a_recomputed_hash(exported):
    built, result = exported
    connection = sqlite3.connect(built.db)
    seq, at, actor, action, payload, prev = connection.execute(
        "SELECT seq, at, actor, action, payload, prev_hash FROM audit_entries ORDER BY seq DESC LIMIT 1").fetchone()
    connection.close()
    forged = dict(json.loads(payload), text="Sketch drawn by the examiner.")
    edit_audit(built.db, "UPDATE audit_entries SET payload = ?, hash = ? WHERE seq = ?", canonical_json(forged),
               entry_hash(prev, built.case_id, seq, at, actor, action, forged), seq)
    connection = sqlite3.connect(built.db, isolation_level=None)
    connection.execute("UPDATE notes SET text = 'Sketch drawn by the examiner.' WHERE id = 2")
    connection.close()
    with CaseStore.open(built.db) as store:
        assert store.verify_chain(built.case_id).ok  # rewriting the newest entry escapes the chain check alone
    found = problems_of(result.report_path, built.db)
    assert has(found, f"audit entry #{seq} has hash", "the trail was changed after the report was made")


def test_a_missing_manifest_fails(exported):
    built, result = exported
    manifest_path(result.report_path).unlink()
    found = problems_of(result.report_path, built.db)
    assert found and has(found, "has no manifest", "case.html.manifest.json is missing")


def test_a_manifest_of_another_database_or_case_fails(exported, tmp_path):
    built, result = exported
    copy = tmp_path / "copy.sqlite"
    shutil.copy(built.db, copy)
    shutil.copytree(built.db.with_name(built.db.name + ".evidence"), copy.with_name(copy.name + ".evidence"))
    moved = verify_report(result.report_path, copy)  # the same case in a copy of its database: named, not refused
    assert moved.ok and any("made from case database cases.sqlite; checking" in n for n in moved.notes)
    other = tmp_path / "other.sqlite"
    with CaseStore.open(other) as store:
        store.create_case("Another case")
    manifest = json.loads(result.manifest_path.read_text())
    manifest["db_path"] = str(other)
    result.manifest_path.write_text(json.dumps(manifest))
    assert has(problems_of(result.report_path, other), f"case {built.case_id}", "is not the case the report was made")
    manifest["case_id"] = 5
    result.manifest_path.write_text(json.dumps(manifest))
    assert has(problems_of(result.report_path, other), "has no case 5", "another database")


def test_later_entries_are_a_note_and_a_changed_gallery_a_problem(exported):
    built, result = exported
    with CaseStore.open(built.db) as store:
        store.add_note(built.case_id, "Follow-up: checked the platform camera.")
    check = verify_report(result.report_path, built.db)
    assert check.ok and len(check.notes) == 2 and "1 audit entry was added after the report" in check.notes[1]
    gallery = Gallery.open(built.gallery_root)
    gallery.add([{"id": "late", "source": "late.mp4"}], {"rgb": np.eye(1, 8, dtype=np.float32)})
    assert has(problems_of(result.report_path, built.db), "gallery", "has changed since the report was made")


def test_a_gallery_whose_items_swapped_vectors_or_crops_fails(exported):
    """Same items, same ids, same count: only two items' stored vectors (then their crops) exchanged."""
    built, result = exported
    assert verify_report(result.report_path, built.db).ok
    gallery = Gallery.open(built.gallery_root)
    path = built.gallery_root / "vectors" / "rgb.f16.npy"
    rows = np.memmap(path, dtype="<f2", mode="r+", offset=128, shape=(len(gallery), 8))
    rows[[0, 3]] = rows[[3, 0]]
    rows.flush()
    del rows
    gallery.rebuild()  # the index follows the swapped vectors: the two items trade ranks
    assert has(problems_of(result.report_path, built.db), "gallery", "has changed since the report was made")
    rows = np.memmap(path, dtype="<f2", mode="r+", offset=128, shape=(len(gallery), 8))
    rows[[0, 3]] = rows[[3, 0]]  # back as they were
    rows.flush()
    del rows
    assert verify_report(result.report_path, built.db).ok
    items = built.gallery_root / "items.jsonl"
    records = [json.loads(line) for line in items.read_text(encoding="utf-8").splitlines()]
    for key in ("crop", "crop_sha256"):  # each crop still matches the hash beside it
        records[1][key], records[2][key] = records[2][key], records[1][key]
    items.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records), encoding="utf-8")
    assert has(problems_of(result.report_path, built.db), "gallery", "has changed since the report was made")


def test_a_garbled_manifest_is_a_problem_not_a_crash(exported):
    built, result = exported
    result.manifest_path.write_text("{not json")
    assert has(problems_of(result.report_path, built.db), "cannot be read")
    result.manifest_path.write_text(json.dumps({"format": "something else"}))
    assert has(problems_of(result.report_path, built.db), "is not a Lineup report manifest")
