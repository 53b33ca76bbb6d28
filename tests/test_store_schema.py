"""Case store schema: migrations to head (fresh and from revision 0001 with data), connection settings, the ORM
matching the migrations, and clear errors for files that are not case stores or come from a newer Lineup."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from app.store import (
    CaseStore,
    MigrationError,
    NotACaseDatabaseError,
    SchemaTooNewError,
    StepInput,
    codec,
)
from app.store.audit import GENESIS_HASH, entry_hash
from app.store.database import make_engine, migrate, migrations_folder
from app.store.evidence import case_folder, evidence_root
from app.store.models import Base, canonical_json

REPO = Path(__file__).resolve().parents[1]
HEAD = "0005_step_question"


def revision(path: Path) -> str:
    with sqlite3.connect(path) as raw:
        return raw.execute("SELECT version_num FROM alembic_version").fetchone()[0]


def test_fresh_database_is_at_head_in_wal_mode(tmp_path):
    db = tmp_path / "cases.sqlite"
    with CaseStore.open(db) as store:
        assert store.schema_revision() == HEAD
    assert revision(db) == HEAD
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        triggers = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert {"cases", "case_galleries", "evidence", "steps", "marks", "notes", "audit_entries"} <= tables
    assert triggers == {"audit_entries_no_update", "audit_entries_no_delete", "audit_entries_chain",
                        "steps_immutable", "steps_undo_once", "steps_no_delete"}


def test_every_connection_has_foreign_keys_and_full_sync(tmp_path):
    db = tmp_path / "cases.sqlite"
    CaseStore.open(db).close()
    engine = make_engine(db)
    try:
        with engine.connect() as first, engine.connect() as second:
            for connection in (first, second):
                assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
                assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == 2
                assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    finally:
        engine.dispose()


def test_orm_models_match_the_migrations(tmp_path):
    db = tmp_path / "cases.sqlite"
    CaseStore.open(db).close()
    engine = make_engine(db)
    try:
        with engine.connect() as connection:
            diff = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    finally:
        engine.dispose()
    assert diff == []


def test_reopening_at_head_does_not_migrate_again(tmp_path):
    db = tmp_path / "cases.sqlite"
    with CaseStore.open(db) as store:
        case = store.create_case("kept")
    with sqlite3.connect(db) as raw:
        schema = raw.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall()
    with CaseStore.open(db) as store:
        assert [c.id for c in store.list_cases()] == [case]
    with sqlite3.connect(db) as raw:
        assert raw.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall() == schema


# ------------------------------------------------------------------------------------------- upgrade from 0001

AT = ["2024-05-01T10:00:00.000000+00:00", "2024-05-01T10:01:00.000000+00:00", "2024-05-01T10:02:00.000000+00:00",
      "2024-05-01T10:03:00.000000+00:00", "2024-05-01T10:04:00.000000+00:00", "2024-05-01T10:05:00.000000+00:00"]


def _step_row(step_id: int, parent: int | None, sketch: tuple[str, str] | None, ir: tuple[str, str] | None,
              at: str) -> tuple[dict, dict]:
    """A revision-0001 steps row and the audit payload today's code would compute from it after upgrade."""
    ids = [f"item{n}" for n in range(step_id, step_id + 5)]
    scores = np.linspace(0.9, 0.5, 5, dtype=np.float32)
    ids_blob, ids_sha = codec.encode_ids(ids)
    histogram = codec.score_histogram(np.linspace(0.0, 0.9, 10), None)
    row = {"id": step_id, "case_id": 1, "parent_id": parent, "seq": step_id, "depth": step_id - 1, "gallery_id": 1,
           "query_text": f"query {step_id}", "query_kind": "text+sketch" if sketch else "text+ir",
           "example_item": None, "scenario": None,
           "sketch_path": sketch and sketch[0], "sketch_sha256": sketch and sketch[1],
           "ir_path": ir and ir[0], "ir_sha256": ir and ir[1], "view": "fused", "level": "C",
           "level_source": "parser", "level_overridden": 0, "keep_rule": "rho", "keep_value": 0.5, "k": 5,
           "filters": canonical_json({"cameras": None}), "candidates_before": 10, "filtered_out": 0,
           "candidates_after": 5, "kept_ids": ids_blob, "kept_scores": codec.encode_scores(scores),
           "kept_sha256": ids_sha, "histogram": canonical_json(histogram), "seconds": 0.25, "created_at": at,
           "undone_at": None}

    def evidence(pair):
        if pair is None:
            return None
        return {"sha256": pair[1], "original_path": pair[0], "stored_name": pair[1] + Path(pair[0]).suffix.lower()}

    payload = {"step": step_id, "seq": step_id, "parent": parent, "depth": step_id - 1, "gallery": 1,
               "query_text": row["query_text"], "query_kind": row["query_kind"], "example_item": None,
               "scenario": None, "sketch": evidence(sketch), "ir": evidence(ir), "view": "fused", "level": "C",
               "level_source": "parser", "level_overridden": False, "keep_rule": "rho", "keep_value": 0.5, "k": 5,
               "filters": {"cameras": None}, "candidates_before": 10, "filtered_out": 0, "candidates_after": 5,
               "kept_sha256": ids_sha, "kept_scores_sha256": hashlib.sha256(scores.astype("<f4").tobytes()).hexdigest(),
               "histogram_sha256": hashlib.sha256(canonical_json(histogram).encode()).hexdigest(), "seconds": 0.25}
    return row, payload


def _write_0001_case(db: Path, extra_step_gallery: int | None = None) -> dict[str, str]:
    """A case written with schema 0001: a gallery, two steps sharing a sketch (the second adds an IR image),
    a mark, and its audit chain. Returns the evidence files' SHA-256 by role."""
    migrate(db, "0001_initial")
    folder = case_folder(evidence_root(db), 1)
    folder.mkdir(parents=True)
    sketch_bytes, ir_bytes = b"sketch-image-bytes", b"ir-image-bytes"
    sketch_sha, ir_sha = hashlib.sha256(sketch_bytes).hexdigest(), hashlib.sha256(ir_bytes).hexdigest()
    (folder / f"{sketch_sha}.png").write_bytes(sketch_bytes)
    (folder / f"{ir_sha}.jpg").write_bytes(ir_bytes)
    sketch = ("/home/analyst/Sketch.PNG", sketch_sha)
    step1, payload1 = _step_row(1, None, sketch, None, AT[2])
    step2, payload2 = _step_row(2, 1, sketch, ("/home/analyst/still.jpg", ir_sha), AT[3])
    step2["sketch_path"] = "/elsewhere/copy.png"  # same content, other name: one evidence row, first path wins
    gallery = {"gallery": 1, "path": "/galleries/g", "gallery_fingerprint": "a" * 64, "model_fingerprint": "m1",
               "item_count": 10}
    mark = {"gallery": 1, "item": "item2", "state": "confirmed", "note": "same jacket"}
    actions = [("case.create", {"title": "Old case", "description": "", "status": "open"}, AT[0]),
               ("gallery.add", gallery, AT[1]), ("step.record", payload1, AT[2]), ("step.record", payload2, AT[3]),
               ("mark", mark, AT[4])]
    with sqlite3.connect(db) as raw:
        raw.execute("INSERT INTO cases VALUES (1, 'Old case', '', 'open', ?, ?, NULL)", (AT[0], AT[4]))
        raw.execute("INSERT INTO case_galleries VALUES (1, 1, '/galleries/g', ?, 'm1', 10, ?)", ("a" * 64, AT[1]))
        for row in (step1, step2):
            if extra_step_gallery is not None and row is step2:
                row["gallery_id"] = extra_step_gallery
            raw.execute(f"INSERT INTO steps ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                        tuple(row.values()))
        raw.execute("UPDATE cases SET head_step_id = 2")
        raw.execute("INSERT INTO marks VALUES (1, 1, 1, 'item2', 'confirmed', 'same jacket', ?)", (AT[4],))
        prev = GENESIS_HASH
        for seq, (action, payload, at) in enumerate(actions, start=1):
            digest = entry_hash(prev, 1, seq, at, "analyst", action, payload)
            raw.execute("INSERT INTO audit_entries (case_id, seq, at, actor, action, payload, prev_hash, hash) "
                        "VALUES (1, ?, ?, 'analyst', ?, ?, ?, ?)", (seq, at, action, canonical_json(payload), prev,
                                                                    digest))
            prev = digest
    return {"sketch": sketch_sha, "ir": ir_sha}


def test_upgrade_from_revision_0001_keeps_the_case_and_its_chain(tmp_path):
    db = tmp_path / "old.sqlite"
    shas = _write_0001_case(db)
    assert revision(db) == "0001_initial"
    with CaseStore.open(db, actor="analyst") as store:
        assert revision(db) == HEAD
        report = store.verify_chain(1)
        assert report.ok, report.problems
        state = store.load_case(1)
        first, second = state.steps
        assert first.sketch.sha256 == second.sketch.sha256 == shas["sketch"]
        assert first.sketch.original_path == "/home/analyst/Sketch.PNG"
        assert Path(first.sketch.stored_path).read_bytes() == b"sketch-image-bytes"
        assert second.ir.sha256 == shas["ir"] and Path(second.ir.stored_path).suffix == ".jpg"
        assert len(state.evidence) == 2
        assert state.active_path == (1, 2) and second.kept_ids == tuple(f"item{n}" for n in range(2, 7))
        assert [(m.item_id, m.state) for m in state.marks] == [("item2", "confirmed")]
        assert not first.whole_gallery and not second.whole_gallery  # steps before 0004 searched the kept items
        # the upgraded store keeps working, and the rebuilt steps table kept its constraints and triggers
        step = StepInput(gallery_id=1, query_kind="text", query_text="next", view="text", keep_rule="k",
                         keep_value=2, k=2, candidates_before=5, kept_ids=("item2", "item3"),
                         kept_scores=(0.9, 0.8), scores=np.linspace(0.5, 0.9, 5))
        assert store.record_step(1, step) == 3
        assert store.verify_chain(1).ok
    with sqlite3.connect(db) as raw:
        raw.execute("PRAGMA foreign_keys = ON")
        with pytest.raises(sqlite3.IntegrityError, match="immutable"):
            raw.execute("UPDATE steps SET query_text = 'edited' WHERE id = 1")
        with pytest.raises(sqlite3.IntegrityError, match="immutable"):
            raw.execute("UPDATE steps SET whole_gallery = 1 WHERE id = 1")
        with pytest.raises(sqlite3.IntegrityError, match="immutable"):
            raw.execute("UPDATE steps SET question = '{}' WHERE id = 1")
        raw.execute("DROP TRIGGER steps_immutable")
        with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
            raw.execute("UPDATE steps SET keep_rule = 'best' WHERE id = 3")
        with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
            raw.execute("INSERT INTO evidence (case_id, sha256, stored_name, added_at) VALUES (99, 'x', 'x', 'x')")
        columns = {r[1] for r in raw.execute("PRAGMA table_info(steps)")}
    assert "sketch_sha256" not in columns and {"sketch_evidence_id", "ir_evidence_id"} <= columns


def test_a_migration_that_leaves_dangling_references_changes_nothing(tmp_path):
    db = tmp_path / "old.sqlite"
    _write_0001_case(db, extra_step_gallery=77)  # written with foreign keys off: step 2 names a missing gallery
    with pytest.raises(MigrationError, match="dangling"):
        CaseStore.open(db)
    assert revision(db) == "0001_initial"
    with sqlite3.connect(db) as raw:
        assert raw.execute("SELECT count(*) FROM sqlite_master WHERE name = 'evidence'").fetchone()[0] == 0
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert raw.execute("SELECT sketch_sha256 FROM steps WHERE id = 2").fetchone()[0] is not None


# ------------------------------------------------------------------------------------------- bad files


def test_a_file_that_is_not_sqlite_is_refused(tmp_path):
    text = tmp_path / "notes.sqlite"
    text.write_text("these are my notes, not a database\n")
    with pytest.raises(NotACaseDatabaseError, match="not an SQLite database"):
        CaseStore.open(text)
    assert text.read_text() == "these are my notes, not a database\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.sqlite"]
    with pytest.raises(NotACaseDatabaseError, match="not a file"):
        CaseStore.open(tmp_path)
    with pytest.raises(NotACaseDatabaseError, match="does not exist"):
        CaseStore.open(tmp_path / "missing" / "cases.sqlite")


def test_a_damaged_sqlite_file_is_refused(tmp_path):
    damaged = tmp_path / "damaged.sqlite"
    damaged.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 20)
    with pytest.raises(NotACaseDatabaseError, match="not an SQLite database, or a damaged one"):
        CaseStore.open(damaged)


def test_a_foreign_sqlite_database_is_refused(tmp_path):
    other = tmp_path / "photos.sqlite"
    with sqlite3.connect(other) as raw:
        raw.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, path TEXT)")
    with pytest.raises(NotACaseDatabaseError, match="not a Lineup case store.*photos"):
        CaseStore.open(other)
    with sqlite3.connect(other) as raw:
        assert [r[0] for r in raw.execute("SELECT name FROM sqlite_master")] == ["photos"]


def test_an_empty_file_becomes_a_case_store(tmp_path):
    empty = tmp_path / "new.sqlite"
    empty.touch()
    with CaseStore.open(empty) as store:
        assert store.list_cases() == []


def test_a_database_from_a_newer_lineup_is_refused_unchanged(tmp_path):
    db = tmp_path / "cases.sqlite"
    with CaseStore.open(db) as store:
        store.create_case("from the future")
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE alembic_version SET version_num = '0042_telepathy'")
    with pytest.raises(SchemaTooNewError, match="0042_telepathy.*newer Lineup"):
        CaseStore.open(db)
    assert revision(db) == "0042_telepathy"


# ------------------------------------------------------------------------------------------- packaging, layers


def test_migrations_are_found_beside_the_app_package():
    folder = migrations_folder()
    assert folder == REPO / "migrations"
    assert {p.name for p in (folder / "versions").glob("0*.py")} == {
        "0001_initial.py", "0002_evidence.py", "0003_case_record.py", "0004_whole_gallery.py",
        "0005_step_question.py"}


def test_alembic_command_line_uses_the_same_scripts(tmp_path):
    db = tmp_path / "cli.sqlite"
    run = subprocess.run([str(Path(sys.executable).parent / "alembic"), "-c", str(REPO / "migrations" / "alembic.ini"),
                          "-x", f"db={db}", "upgrade", "head"], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert revision(db) == HEAD
    with CaseStore.open(db) as store:
        case = store.create_case("made after a command-line upgrade")
        assert store.verify_chain(case).ok


def test_the_store_imports_no_qt_and_of_the_engine_only_the_kernels_schema_vocabularies_and_json_reader():
    code = ("import sys, json, app.store, app.store.from_engine; "
            "print(json.dumps(sorted(sys.modules)))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    modules = set(json.loads(run.stdout))
    loaded = {m.split('.')[0] for m in modules}
    assert not loaded & {"PySide6", "pyqtgraph", "torch", "faiss", "cv2"}
    engine_modules = {m for m in modules if m.split(".")[0] == "engine"}
    assert engine_modules == {"engine", "engine.kernel", "engine.kernel.step_schema", "engine.kernel.jsonio",
                              "engine.kernel.keep_rules", "engine.kernel.query_modalities",
                              "engine.kernel.vocabulary"}
    assert "sqlalchemy" in loaded


def test_the_stores_level_names_are_the_ontologys():
    from app.store.checks import LEVELS
    from engine.kernel.ontology import ONTOLOGY

    assert tuple(LEVELS) == ONTOLOGY.level_names
