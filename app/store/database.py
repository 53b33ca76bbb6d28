"""Opening a case database: file checks, connection settings, and Alembic migrations to head.

Every connection gets ``journal_mode=WAL``, ``synchronous=FULL`` (a committed action survives a power cut,
not only a killed process), ``foreign_keys=ON`` and a busy timeout. The sqlite3 driver's own transaction
handling is switched off and SQLAlchemy emits ``BEGIN`` itself, so DDL is transactional and writers take the
write lock up front (``BEGIN IMMEDIATE``) instead of failing to upgrade a read lock later.

Migrations run in one transaction with foreign keys off (SQLite's rule for table rebuilds), followed by
``PRAGMA foreign_key_check``: a failed or dangling upgrade rolls back and leaves the file as it was.
"""

from __future__ import annotations

import importlib.util
import sqlite3
from pathlib import Path
from urllib.parse import quote

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import URL, Engine, create_engine, event, inspect
from sqlalchemy.exc import DBAPIError

from app.store.errors import (
    DatabaseLockedError,
    MigrationError,
    NotACaseDatabaseError,
    SchemaOutdatedError,
    SchemaTooNewError,
    StoreError,
)

BUSY_TIMEOUT_SECONDS = 10.0
#: execution option naming the statement that opens a transaction ("BEGIN" or "BEGIN IMMEDIATE")
BEGIN_OPTION = "lineup_begin"


def check_database_file(path: Path) -> None:
    """Refuse a path that cannot hold a case database. The file's bytes are left to SQLite to judge: opening
    and closing the file here would cancel the POSIX locks of any SQLite connection this process already has
    on it (SQLite's "how to corrupt" §2.2)."""
    if not path.exists():
        if not path.parent.is_dir():
            raise NotACaseDatabaseError(f"cannot create case database {path}: folder {path.parent} does not exist")
        return
    if not path.is_file():
        raise NotACaseDatabaseError(f"case database {path} is not a file")


def is_lock_error(exc: BaseException) -> bool:
    """Whether a driver error means another connection held the lock past the busy timeout."""
    text = str(getattr(exc, "orig", exc)).lower()
    return "database is locked" in text or "database is busy" in text or "database table is locked" in text


def locked_error(path: Path, exc: BaseException) -> DatabaseLockedError:
    return DatabaseLockedError(
        f"case database {path} is locked: another program or Lineup window held its write lock for more than "
        f"{BUSY_TIMEOUT_SECONDS:g} s ({getattr(exc, 'orig', exc)}); finish or close the other one and try again")


def make_engine(path: Path, *, foreign_keys: bool = True, read_only: bool = False) -> Engine:
    """An engine whose every connection uses WAL, synchronous=FULL and (by default) foreign keys.

    ``read_only`` opens the file with SQLite's ``mode=ro`` URI: no connection of this engine can write, take
    the write lock or change the journal mode."""
    if read_only:
        uri = f"file:{quote(str(path))}?mode=ro"
        engine = create_engine("sqlite://", creator=lambda: sqlite3.connect(uri, uri=True,
                                                                           timeout=BUSY_TIMEOUT_SECONDS,
                                                                           check_same_thread=False))
    else:
        engine = create_engine(URL.create("sqlite", database=str(path)),
                               connect_args={"timeout": BUSY_TIMEOUT_SECONDS})

    @event.listens_for(engine, "connect")
    def _configure(dbapi_connection: sqlite3.Connection, _record: object) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        if read_only:
            cursor.execute("PRAGMA query_only=ON")
            cursor.close()
            return
        try:
            mode = cursor.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(f"{path}: SQLite refused write-ahead logging (journal mode stays {mode!r}); "
                                 f"keep case databases on a local disk")
            cursor.execute("PRAGMA synchronous=FULL")
            cursor.execute(f"PRAGMA foreign_keys={'ON' if foreign_keys else 'OFF'}")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection) -> None:
        connection.exec_driver_sql(connection.get_execution_options().get(BEGIN_OPTION, "BEGIN"))

    return engine


def migrations_folder() -> Path:
    """The Alembic script folder: where the ``migrations`` package lives (checkout, editable install or
    wheel)."""
    spec = importlib.util.find_spec("migrations")
    candidates = [Path(p) for p in spec.submodule_search_locations] if spec and spec.submodule_search_locations else []
    for folder in candidates:
        if (folder / "env.py").is_file() and (folder / "versions").is_dir():
            return folder
    raise StoreError(f"the case-store migrations are missing (looked in {[str(c) for c in candidates]}); "
                     f"reinstall Lineup")


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_folder()))
    return config


def head_revision() -> str:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def upgrade_to_head(path: Path) -> tuple[str | None, str]:
    """Bring the database at ``path`` to the newest schema; return (revision before, revision now)."""
    return migrate(path, "head")


def migrate(path: Path, target: str) -> tuple[str | None, str]:
    """Upgrade the database at ``path`` to revision ``target`` ("head" or an older one, for tests and tools)
    in one transaction; return (revision before, revision now)."""
    config = alembic_config()
    script = ScriptDirectory.from_config(config)
    head = script.get_current_head()
    wanted = head if target == "head" else script.get_revision(target).revision
    engine = make_engine(path, foreign_keys=False)
    try:
        with engine.execution_options(**{BEGIN_OPTION: "BEGIN IMMEDIATE"}).begin() as connection:
            current = MigrationContext.configure(connection).get_current_revision()
            if current is None:
                foreign = [t for t in inspect(connection).get_table_names() if not t.startswith("sqlite_")]
                if foreign:
                    raise NotACaseDatabaseError(
                        f"{path} is an SQLite database but not a Lineup case store (tables {sorted(foreign)[:5]}, "
                        f"no schema revision)")
            elif not _known_revision(script, path, current):
                raise SchemaTooNewError(
                    f"{path} has case-store schema revision {current!r}, which this program does not know "
                    f"(it knows up to {head!r}): it was written by a newer Lineup; open it with that version")
            if current == wanted:
                return current, wanted
            config.attributes["connection"] = connection
            try:
                command.upgrade(config, wanted)
            except DBAPIError as exc:
                raise MigrationError(f"upgrading {path} from schema {current!r} to {wanted!r} failed: {exc.orig}; "
                                     f"the database is unchanged") from exc
            dangling = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
            if dangling:
                raise MigrationError(f"upgrading {path} from schema {current!r} to {wanted!r} left dangling "
                                     f"references {dangling[:5]}; the database is unchanged")
            return current, wanted
    except DBAPIError as exc:
        if any(sign in str(exc.orig) for sign in ("not a database", "malformed")):
            raise NotACaseDatabaseError(f"{path} is not an SQLite database, or a damaged one ({exc.orig})") from None
        if is_lock_error(exc):
            raise locked_error(path, exc) from None
        raise
    finally:
        engine.dispose()


def _known_revision(script: ScriptDirectory, path: Path, current: str) -> bool:
    """Whether ``current`` is one of this program's revisions; a blank one is a damaged store (Alembic asserts on
    it rather than answering)."""
    if not isinstance(current, str) or not current.strip():
        raise NotACaseDatabaseError(f"{path} records an empty case-store schema revision {current!r}: the "
                                    "alembic_version table is damaged")
    try:
        return script.get_revision(current) is not None
    except CommandError:
        return False


def check_revision_read_only(path: Path) -> str:
    """The schema revision of an existing database read without any write or lock beyond a read; refuses a
    missing file, an unknown (newer) schema and one that needs migrating (``SchemaOutdatedError``)."""
    if not path.is_file():
        raise NotACaseDatabaseError(f"case database {path} does not exist")
    script = ScriptDirectory.from_config(alembic_config())
    head = script.get_current_head()
    engine = make_engine(path, read_only=True)
    try:
        with engine.connect() as connection:
            current = MigrationContext.configure(connection).get_current_revision()
    except DBAPIError as exc:
        if any(sign in str(exc.orig) for sign in ("not a database", "malformed")):
            raise NotACaseDatabaseError(f"{path} is not an SQLite database, or a damaged one ({exc.orig})") from None
        if is_lock_error(exc):
            raise locked_error(path, exc) from None
        raise StoreError(f"case database {path} cannot be opened read-only: {exc.orig}") from None
    finally:
        engine.dispose()
    if current is None:
        raise NotACaseDatabaseError(f"{path} is not a Lineup case store (no schema revision)")
    if current == head:
        return current
    if not _known_revision(script, path, current):
        raise SchemaTooNewError(f"{path} has case-store schema revision {current!r}, which this program does not "
                                f"know (it knows up to {head!r}): it was written by a newer Lineup; open it with "
                                "that version")
    raise SchemaOutdatedError(f"{path} has the older case-store schema {current!r} (now {head!r}); a read-only "
                              "command does not migrate it: open the case in Lineup once (it upgrades the file), "
                              "then run this again")
