"""The case store's tables as SQLAlchemy 2 typed ORM classes (the schema at the newest migration).

cases ─┬─ case_galleries        galleries a case searched (path, fingerprints, item count, version)
       ├─ evidence              query images copied into the case's evidence folder, by SHA-256
       ├─ steps                 one row per search step; ``parent_id`` links the branch tree; never deleted
       ├─ marks                 current confirm/reject state per (gallery, item), with the step, score, rank
       │                        and examiner that set it; clearing deletes the row
       ├─ notes                 free text, optionally about an item or a step; editable, each edit audited
       └─ audit_entries         append-only, hash-chained log of every action (``app.store.audit``)

The migrations in ``migrations/versions`` create exactly these tables (a test compares them); change both
together. Timestamps are UTC ISO-8601 text with microseconds, so they sort as text and hash canonically.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from app.store.errors import CorruptCaseError
from engine.kernel import jsonio
from engine.kernel.keep_rules import KEEP_RULES
from engine.kernel.step_schema import STEP_FIELDS, StepField

#: constraint names are fixed so that batch migrations on SQLite can find and drop them
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

CASE_STATUSES = ("open", "closed")
MARK_STATES = ("confirmed", "rejected")
LEVEL_SOURCES = ("override", "encoder", "parser", "classifier", "default")


def canonical_json(value: Any) -> str:
    """Deterministic JSON: sorted keys, no spaces, UTF-8 text, no NaN/Infinity (the form that is hashed)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def utc_text(moment: datetime) -> str:
    """``2025-01-02T03:04:05.000006+00:00`` — fixed width, so text order is time order."""
    if moment.tzinfo is None:
        raise ValueError(f"timestamps must be timezone-aware, got naive {moment!r}")
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


class UtcDateTime(TypeDecorator[datetime]):
    """A timezone-aware datetime stored as ``utc_text``."""

    impl = String(32)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> str | None:
        return None if value is None else utc_text(value)

    def process_result_value(self, value: str | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        try:
            moment = datetime.fromisoformat(value)
        except (TypeError, ValueError):
            moment = None
        if moment is None or moment.tzinfo is None:
            raise CorruptCaseError(f"stored time {value!r} is not an ISO-8601 UTC time")
        return moment


class CanonicalJson(TypeDecorator[Any]):
    """A JSON value stored as ``canonical_json`` text (so equal values store equal text)."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> str | None:
        return None if value is None else canonical_json(value)

    def process_result_value(self, value: str | None, dialect: Any) -> Any:
        if value is None:
            return None
        try:
            return jsonio.loads(value, f"stored JSON value {str(value)[:40]!r}")
        except (TypeError, ValueError) as exc:
            raise CorruptCaseError(f"{exc}; the case database holds a damaged row") from None


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class Case(Base):
    __tablename__ = "cases"
    __table_args__ = (CheckConstraint(_in("status", CASE_STATUSES), name="status"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime)
    #: the step the analyst stands on (end of the active path); None before the first step or after undoing all
    head_step_id: Mapped[int | None] = mapped_column(ForeignKey("steps.id", use_alter=True))
    #: the case's search controls (filters, level, keep rule, query images); not audited, see migration 0003
    working_state: Mapped[dict[str, Any] | None] = mapped_column(CanonicalJson)


class CaseGallery(Base):
    __tablename__ = "case_galleries"
    __table_args__ = (UniqueConstraint("case_id", "path", "gallery_fingerprint"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("cases.id"))
    path: Mapped[str] = mapped_column(Text)
    gallery_fingerprint: Mapped[str] = mapped_column(String(64))
    model_fingerprint: Mapped[str] = mapped_column(String(200))
    item_count: Mapped[int] = mapped_column(Integer)
    added_at: Mapped[datetime] = mapped_column(UtcDateTime)
    #: the gallery version searched (None: recorded before versions were kept)
    version: Mapped[int | None] = mapped_column(Integer)


class Evidence(Base):
    """A query image kept with the case: ``<evidence folder>/case-<case_id>/<stored_name>``."""

    __tablename__ = "evidence"
    __table_args__ = (UniqueConstraint("case_id", "sha256"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("cases.id"))
    sha256: Mapped[str] = mapped_column(String(64))
    #: where the analyst's file was (None for an image drawn or pasted in the app)
    original_path: Mapped[str | None] = mapped_column(Text)
    stored_name: Mapped[str] = mapped_column(String(100))
    added_at: Mapped[datetime] = mapped_column(UtcDateTime)


class Step(Base):
    """One search step: the step schema's fields (``engine.kernel.step_schema``) as columns, its place in the step
    tree, its query images and outputs. ``kept_ids``/``kept_scores`` are compressed blobs
    (``app.store.codec``), best first."""

    __tablename__ = "steps"
    __table_args__ = (
        UniqueConstraint("case_id", "seq"),
        CheckConstraint(_in("keep_rule", KEEP_RULES), name="keep_rule"),
        CheckConstraint(f"level_source IS NULL OR {_in('level_source', LEVEL_SOURCES)}", name="level_source"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("cases.id"))
    parent_id: Mapped[int | None] = mapped_column(ForeignKey("steps.id"))
    seq: Mapped[int] = mapped_column(Integer)  # creation order within the case, from 1
    depth: Mapped[int] = mapped_column(Integer)  # position on its path, from 0
    gallery_id: Mapped[int] = mapped_column(ForeignKey("case_galleries.id"))
    sketch_evidence_id: Mapped[int | None] = mapped_column(ForeignKey("evidence.id"))
    ir_evidence_id: Mapped[int | None] = mapped_column(ForeignKey("evidence.id"))
    kept_ids: Mapped[bytes] = mapped_column(LargeBinary)
    kept_scores: Mapped[bytes] = mapped_column(LargeBinary)
    kept_sha256: Mapped[str] = mapped_column(String(64))
    histogram: Mapped[dict[str, Any]] = mapped_column(CanonicalJson)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    undone_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    #: the witness question shown before the step and its answer (``app.store.state.StepInput.question``)
    question: Mapped[dict[str, Any] | None] = mapped_column(CanonicalJson, nullable=True)
    # and one column per field of the step schema, added below (query_text, query_kind, view, level, keep_rule, …)


def step_column_type(spec: StepField) -> Any:
    """The column type of a step schema field: text (of its limit, if any), integer, float, flag or JSON."""
    if spec.kind is str:
        return Text() if spec.limit is None else String(spec.limit)
    by_kind = {int: Integer, float: Float, bool: Boolean, dict: CanonicalJson}
    return by_kind[spec.kind]()


for _spec in STEP_FIELDS:
    setattr(Step, _spec.name, mapped_column(_spec.name, step_column_type(_spec), nullable=_spec.optional))


class Mark(Base):
    __tablename__ = "marks"
    __table_args__ = (
        UniqueConstraint("case_id", "gallery_id", "item_id"),
        CheckConstraint(_in("state", MARK_STATES), name="state"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("cases.id"))
    gallery_id: Mapped[int] = mapped_column(ForeignKey("case_galleries.id"))
    item_id: Mapped[str] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(16))
    note: Mapped[str | None] = mapped_column(Text)
    at: Mapped[datetime] = mapped_column(UtcDateTime)
    #: the step at which the item was marked, its score and rank there (None: marked outside a step, or
    #: before these were kept) and who marked it
    step_id: Mapped[int | None] = mapped_column(ForeignKey("steps.id"))
    score: Mapped[float | None] = mapped_column(Float)
    rank: Mapped[int | None] = mapped_column(Integer)
    actor: Mapped[str | None] = mapped_column(String(200))


class Note(Base):
    __tablename__ = "notes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("cases.id"))
    text: Mapped[str] = mapped_column(Text)
    item_id: Mapped[str | None] = mapped_column(Text)
    gallery_id: Mapped[int | None] = mapped_column(ForeignKey("case_galleries.id"))
    step_id: Mapped[int | None] = mapped_column(ForeignKey("steps.id"))
    at: Mapped[datetime] = mapped_column(UtcDateTime)
    edited_at: Mapped[datetime | None] = mapped_column(UtcDateTime)


class AuditEntry(Base):
    """hash = SHA-256(prev_hash ‖ canonical JSON of {case, seq, at, actor, action, payload}); see ``audit``.

    SQLite triggers (migration 0001) abort every UPDATE and DELETE, and any INSERT that does not extend the
    case's chain (seq = last + 1, prev_hash = last hash)."""

    __tablename__ = "audit_entries"
    __table_args__ = (UniqueConstraint("case_id", "seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("cases.id"))
    seq: Mapped[int] = mapped_column(Integer)
    at: Mapped[str] = mapped_column(String(32))
    actor: Mapped[str] = mapped_column(String(200))
    action: Mapped[str] = mapped_column(String(32))
    payload: Mapped[str] = mapped_column(Text)  # canonical JSON text
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))
