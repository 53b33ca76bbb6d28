"""Errors the case store raises; each names the database or case and the problem."""

from __future__ import annotations


class StoreError(ValueError):
    """Base class for case-store errors."""


class NotACaseDatabaseError(StoreError):
    """The file is not an SQLite database, or an SQLite database that is not a Lineup case store."""


class SchemaTooNewError(StoreError):
    """The database was written by a newer Lineup whose schema revision this program does not know."""


class DatabaseLockedError(StoreError):
    """Another program (or another Lineup) held the database's write lock for longer than the busy timeout."""


class SchemaOutdatedError(StoreError):
    """A read-only open found an older schema: it needs migrating, which only a writing open does."""


class MigrationError(StoreError):
    """Upgrading the schema failed or left dangling references; the database was left as it was."""


class CorruptCaseError(StoreError):
    """A stored value cannot be read back (edited outside Lineup or damaged)."""


class CaseNotFoundError(StoreError):
    """No case, step, gallery or note with the given id in this case."""


class CaseStateError(StoreError):
    """The action does not fit the case's state (undo with no step, a closed case, branching from an undone step)."""


class StoreInputError(StoreError):
    """An argument has the wrong type or value (empty title, mismatched kept ids and scores, …)."""
