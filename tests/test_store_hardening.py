"""Case store under pressure: a database locked by another program is a named error with a retry hint;
read-only opens take no write lock, never migrate, and refuse a schema that needs it; a newer schema is
refused; the 0002 migration round trip keeps evidence verifying; databases and evidence are owner-only."""

import sqlite3
import stat
from pathlib import Path

import numpy as np
import pytest
from alembic import command

from app.store import CaseStore, EvidenceSource, StepInput
from app.store import database as database_module
from app.store.database import BEGIN_OPTION, alembic_config, make_engine, migrate
from app.store.errors import DatabaseLockedError, SchemaOutdatedError, SchemaTooNewError, StoreInputError


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def step(gallery: int, **extra) -> StepInput:
    fields = dict(gallery_id=gallery, query_kind="text", query_text="a man", view="text", keep_rule="k",
                  keep_value=2, k=2, candidates_before=5, kept_ids=("a", "b"), kept_scores=(0.9, 0.8),
                  scores=np.linspace(0.5, 0.9, 5))
    fields.update(extra)
    return StepInput(**fields)


def make_case(db: Path, tmp_path: Path) -> int:
    ir = tmp_path / "still.JPG"
    ir.write_bytes(b"\xff\xd8 an infrared still")
    with CaseStore.open(db, actor="analyst") as store:
        case = store.create_case("Round trip")
        gallery = store.add_gallery(case, "/galleries/g", "f" * 64, "m1", 5)
        drawn = EvidenceSource.from_bytes(b"\x89PNG drawn in the app")
        store.record_step(case, step(gallery, query_kind="sketch+ir", query_text=None, sketch=drawn, ir=ir))
        store.add_note(case, "first note")
        assert store.verify_chain(case).ok
    return case


def downgrade(db: Path, target: str) -> None:
    config = alembic_config()
    engine = make_engine(db, foreign_keys=False)
    try:
        with engine.execution_options(**{BEGIN_OPTION: "BEGIN IMMEDIATE"}).begin() as connection:
            config.attributes["connection"] = connection
            command.downgrade(config, target)
    finally:
        engine.dispose()


def revision(db: Path) -> str:
    with sqlite3.connect(db) as raw:
        return raw.execute("SELECT version_num FROM alembic_version").fetchone()[0]


def test_migration_round_trip_keeps_app_made_evidence_verifying(tmp_path):
    db = tmp_path / "cases.sqlite"
    case = make_case(db, tmp_path)
    downgrade(db, "0001_initial")
    assert revision(db) == "0001_initial"
    with CaseStore.open(db) as store:
        report = store.verify_chain(case)
        assert report.ok, report.problems
        (only,) = store.load_case(case).steps
        assert Path(only.sketch.stored_path).suffix == ".png" and Path(only.sketch.stored_path).is_file()
        assert Path(only.ir.stored_path).suffix == ".jpg"


def test_a_locked_database_is_a_named_error_with_a_retry_hint(tmp_path, monkeypatch):
    db = tmp_path / "cases.sqlite"
    case = make_case(db, tmp_path)
    monkeypatch.setattr(database_module, "BUSY_TIMEOUT_SECONDS", 0.2)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another program holds the write lock
    try:
        with pytest.raises(DatabaseLockedError, match=r"cases\.sqlite is locked.*try again"):
            CaseStore.open(db)
        # a read-only open neither waits for nor takes the write lock, and reads the committed case
        with CaseStore.open(db, read_only=True) as reader:
            assert reader.load_case(case).case.title == "Round trip"
            assert reader.verify_chain(case).ok
            with pytest.raises(StoreInputError, match="read-only"):
                reader.add_note(case, "not allowed")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with CaseStore.open(db) as store:
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(DatabaseLockedError, match="another program or Lineup window"):
                store.add_note(case, "blocked")
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        store.add_note(case, "after the lock")
        assert store.verify_chain(case).ok


def test_read_only_opens_never_migrate_and_newer_schemas_are_refused(tmp_path):
    db = tmp_path / "old.sqlite"
    migrate(db, "0001_initial")
    with pytest.raises(SchemaOutdatedError, match=r"older case-store schema '0001_initial'.*does not migrate"):
        CaseStore.open(db, read_only=True)
    assert revision(db) == "0001_initial"
    with pytest.raises(Exception, match="does not exist"):
        CaseStore.open(tmp_path / "missing.sqlite", read_only=True)
    assert not (tmp_path / "missing.sqlite").exists()
    future = tmp_path / "future.sqlite"
    CaseStore.open(future).close()
    with sqlite3.connect(future) as raw:
        raw.execute("UPDATE alembic_version SET version_num = '0099_future'")
    for read_only in (False, True):
        with pytest.raises(SchemaTooNewError, match="0099_future.*newer Lineup"):
            CaseStore.open(future, read_only=read_only)


def test_case_databases_and_evidence_are_owner_only(tmp_path):
    db = tmp_path / "cases.sqlite"
    make_case(db, tmp_path)
    with CaseStore.open(db) as store:
        store.create_case("keeps the WAL open")
        companions = [db.with_name(db.name + s) for s in ("-wal", "-shm")]
        assert [mode(p) for p in [db, *companions] if p.exists()] == [0o600] * (1 + sum(p.exists() for p in
                                                                                      companions))
    evidence = db.with_name(db.name + ".evidence")
    assert mode(evidence) == 0o700 and all(mode(p) == 0o700 for p in evidence.iterdir())
    files = [p for p in evidence.rglob("*") if p.is_file()]
    assert len(files) == 2 and all(mode(p) == 0o600 for p in files)
    legacy = tmp_path / "legacy.sqlite"
    CaseStore.open(legacy).close()
    legacy.chmod(0o644)
    CaseStore.open(legacy).close()  # an older, world-readable database is tightened when opened
    assert mode(legacy) == 0o600


def test_galleries_are_owner_only(tmp_path):
    from engine.index import Gallery, GalleryItem
    from engine.kernel.permissions import current_umask

    gallery = Gallery.create(tmp_path / "g", {"rgb": 4}, "ckpt")
    relative, _ = gallery.put_crop(b"\x89PNG crop bytes")
    gallery.add([GalleryItem(id="i0", source="clip.mp4", frame=0, crop=relative)], {"rgb": np.eye(4)[:1]})
    gallery.rebuild()
    root = tmp_path / "g"
    entries = [root, *root.rglob("*")]
    assert {oct(mode(p)) for p in entries if p.is_dir()} == {oct(0o700)}
    assert {oct(mode(p)) for p in entries if p.is_file()} == {oct(0o600)}
    fresh = tmp_path / "plain.txt"
    fresh.write_text("outside any owner-only writer")
    assert mode(fresh) == 0o666 & ~current_umask()  # the process umask is restored afterwards
