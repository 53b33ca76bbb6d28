"""Tampering with a case database's audit trail, for the store and report tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def raw(db: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(db, isolation_level=None)
    connection.execute("PRAGMA foreign_keys = ON")
    return connection


def edit_audit(db: Path, sql: str, *args) -> None:
    connection = raw(db)
    connection.execute("DROP TRIGGER audit_entries_no_update")
    connection.execute("DROP TRIGGER audit_entries_no_delete")
    connection.execute(sql, args)
    connection.close()
