"""``CaseStore``: the case database as a service (no widgets, no Qt; docs/architecture.md → Cases).

Every public action is one ``BEGIN IMMEDIATE`` transaction that changes the tables, appends its audit entry
and commits before returning, so a case reopens exactly as it was left, also after the process is killed.
Reads return plain values (``app.store.state``). Query images are copied into the evidence folder before the
transaction that records them (``app.store.evidence``).
"""

from __future__ import annotations

import getpass
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from app.store import checks
from app.store.audit import AuditRecord, append_entry, read_entries
from app.store.database import (
    BEGIN_OPTION,
    check_database_file,
    check_revision_read_only,
    head_revision,
    is_lock_error,
    locked_error,
    make_engine,
    upgrade_to_head,
)
from app.store.errors import CaseNotFoundError, CaseStateError, StoreInputError
from app.store.evidence import EvidenceSource, evidence_root, store_evidence
from app.store.models import CASE_STATUSES, MARK_STATES, Case, CaseGallery, Evidence, Mark, Note, Step
from app.store.payloads import gallery_payload, mark_payload, mark_row_payload, note_payload, step_payload
from app.store.reading import case_summary, content_records, read_case
from app.store.state import CaseState, CaseSummary, StepInput
from app.store.verify import ChainReport, verify_case

MARK_ACTIONS = (*MARK_STATES, "cleared")


def _now() -> datetime:
    return datetime.now(UTC)


class CaseStore:
    """The cases in one SQLite file. Open with ``CaseStore.open(path)``; close (or use ``with``) when done."""

    def __init__(self, path: Path, actor: str, *, read_only: bool = False) -> None:
        self._path = path
        self._actor = actor
        self._read_only = read_only
        self._engine = make_engine(path, read_only=read_only)
        self._writer = self._engine.execution_options(**{BEGIN_OPTION: "BEGIN IMMEDIATE"})
        self._evidence_root = evidence_root(path)

    @classmethod
    def open(cls, db_path: str | Path, *, actor: str | None = None, read_only: bool = False) -> CaseStore:
        """Open (or create) the case database, first migrating it to the newest schema.

        ``read_only`` (reports, verification) opens an existing file with SQLite's read-only mode: no write
        lock is ever taken and nothing is migrated (``SchemaOutdatedError`` when the schema is older).
        Raises ``NotACaseDatabaseError`` for a file that is not SQLite or not a case store,
        ``SchemaTooNewError`` for one written by a newer Lineup and ``DatabaseLockedError`` when another
        program holds the lock past the busy timeout."""
        path = Path(db_path).expanduser().absolute()
        check_database_file(path)
        if read_only:
            check_revision_read_only(path)
        else:
            from engine.kernel.permissions import owner_only_umask, restrict_database_files  # stdlib-only; loaded late

            with owner_only_umask():
                upgrade_to_head(path)
            restrict_database_files(path)
        if actor is None:
            try:
                actor = getpass.getuser()
            except (KeyError, OSError):
                actor = "unknown"
        return cls(path, checks.text(actor, "actor", limit=200), read_only=read_only)

    def close(self) -> None:
        self._engine.dispose()

    def __enter__(self) -> CaseStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def path(self) -> Path:
        return self._path

    @property
    def evidence_root(self) -> Path:
        return self._evidence_root

    @property
    def actor(self) -> str:
        return self._actor

    @staticmethod
    def schema_revision() -> str:
        return head_revision()

    # -------------------------------------------------------------------------------------- transactions

    @contextmanager
    def _write(self) -> Iterator[Session]:
        if self._read_only:
            raise StoreInputError(f"case database {self._path} is open read-only")
        from engine.kernel.permissions import (
            owner_only_umask,  # a stdlib-only kernel module, imported where a write needs it
        )

        try:
            with owner_only_umask(), Session(self._writer, expire_on_commit=False, autoflush=True) as session, \
                    session.begin():
                yield session
        except OperationalError as exc:
            if is_lock_error(exc):
                raise locked_error(self._path, exc) from None
            raise

    @contextmanager
    def _read(self) -> Iterator[Session]:
        try:
            with Session(self._engine) as session, session.begin():
                yield session
        except OperationalError as exc:
            if is_lock_error(exc):
                raise locked_error(self._path, exc) from None
            raise

    def _case(self, session: Session, case_id: int, *, writable: bool = True) -> Case:
        case = session.get(Case, checks.row_id(case_id, "case_id"))
        if case is None:
            raise CaseNotFoundError(f"{self._path} has no case {case_id}")
        if writable and case.status != "open":
            raise CaseStateError(f"case {case_id} ({case.title!r}) is {case.status}: reopen it to change it")
        return case

    def _log(self, session: Session, case: Case, at: datetime, action: str, payload: dict[str, Any]) -> None:
        case.updated_at = at
        session.flush()
        append_entry(session, case.id, at, self._actor, action, payload)

    def _gallery(self, session: Session, case_id: int, gallery_id: int) -> CaseGallery:
        gallery = session.get(CaseGallery, checks.row_id(gallery_id, "gallery_id"))
        if gallery is None or gallery.case_id != case_id:
            raise CaseNotFoundError(f"case {case_id} has no gallery {gallery_id} (add it with add_gallery)")
        return gallery

    def _step(self, session: Session, case_id: int, step_id: int) -> Step:
        step = session.get(Step, checks.row_id(step_id, "step_id"))
        if step is None or step.case_id != case_id:
            raise CaseNotFoundError(f"case {case_id} has no step {step_id}")
        return step

    # -------------------------------------------------------------------------------------- case actions

    def create_case(self, title: str, description: str = "") -> int:
        title = checks.text(title, "case title", limit=200)
        if not isinstance(description, str):
            raise StoreInputError(f"case description must be a string, got {description!r}")
        at = _now()
        with self._write() as session:
            case = Case(title=title, description=description, status="open", created_at=at, updated_at=at)
            session.add(case)
            session.flush()
            self._log(session, case, at, "case.create", {"title": title, "description": description,
                                                         "status": "open"})
            return case.id

    def rename(self, case_id: int, title: str) -> None:
        title = checks.text(title, "case title", limit=200)
        with self._write() as session:
            case = self._case(session, case_id)
            if case.title != title:
                at = _now()
                case.title = title
                self._log(session, case, at, "case.rename", {"title": title})

    def describe(self, case_id: int, description: str) -> None:
        if not isinstance(description, str):
            raise StoreInputError(f"case description must be a string, got {description!r}")
        with self._write() as session:
            case = self._case(session, case_id)
            if case.description != description:
                at = _now()
                case.description = description
                self._log(session, case, at, "case.describe", {"description": description})

    def set_status(self, case_id: int, status: str) -> None:
        """"closed" makes the case read-only; "open" makes it writable again."""
        if status not in CASE_STATUSES:
            raise StoreInputError(f"case status must be one of {list(CASE_STATUSES)}, got {status!r}")
        with self._write() as session:
            case = self._case(session, case_id, writable=False)
            if case.status != status:
                at = _now()
                case.status = status
                self._log(session, case, at, "case.status", {"status": status})

    def add_gallery(self, case_id: int, path: str | Path, gallery_fingerprint: str, model_fingerprint: str,
                    item_count: int, *, version: int | None = None) -> int:
        """Record that the case searches this gallery (``version``: the gallery version, when the gallery keeps
        versions); the same (path, fingerprint) returns its existing id."""
        path_text = checks.text(str(path) if isinstance(path, Path) else path, "gallery path")
        gallery_fingerprint = checks.text(gallery_fingerprint, "gallery_fingerprint", limit=64)
        model_fingerprint = checks.text(model_fingerprint, "model_fingerprint", limit=200)
        item_count = checks.count(item_count, "item_count")
        version = None if version is None else checks.count(version, "gallery version")
        with self._write() as session:
            case = self._case(session, case_id)
            existing = session.scalar(select(CaseGallery).where(
                CaseGallery.case_id == case.id, CaseGallery.path == path_text,
                CaseGallery.gallery_fingerprint == gallery_fingerprint))
            if existing is not None:
                return existing.id
            at = _now()
            gallery = CaseGallery(case_id=case.id, path=path_text, gallery_fingerprint=gallery_fingerprint,
                                  model_fingerprint=model_fingerprint, item_count=item_count, added_at=at,
                                  version=version)
            session.add(gallery)
            session.flush()
            self._log(session, case, at, "gallery.add", gallery_payload(gallery))
            return gallery.id

    # -------------------------------------------------------------------------------------- steps

    def _evidence_source(self, value: Any, what: str) -> EvidenceSource | None:
        if value is None:
            return None
        if isinstance(value, EvidenceSource):
            return value
        if isinstance(value, bytes | bytearray):
            return EvidenceSource.from_bytes(value)
        if isinstance(value, str | Path):
            return EvidenceSource.from_file(value)
        raise StoreInputError(f"{what} must be an image file path or PNG bytes, got {type(value).__name__}")

    def _evidence_row(self, session: Session, case_id: int, source: EvidenceSource | None,
                      at: datetime) -> Evidence | None:
        if source is None:
            return None
        row = session.scalar(select(Evidence).where(Evidence.case_id == case_id, Evidence.sha256 == source.sha256))
        if row is None:
            row = Evidence(case_id=case_id, sha256=source.sha256, original_path=source.original_path,
                           stored_name=source.stored_name, added_at=at)
            session.add(row)
            session.flush()
        return row

    def record_step(self, case_id: int, step: StepInput) -> int:
        """Store a step after the head step (the first step of a new branch when the head has children) and
        make it the head. Returns the step id."""
        if not isinstance(step, StepInput):
            raise StoreInputError(f"record_step needs a StepInput, got {type(step).__name__}")
        fields = checks.step_columns(step)
        sketch = self._evidence_source(step.sketch, "sketch")
        ir = self._evidence_source(step.ir, "ir")
        with self._read() as session:
            self._case(session, case_id)
        for source in (sketch, ir):
            if source is not None:
                store_evidence(self._evidence_root, case_id, source)
        at = _now()
        with self._write() as session:
            case = self._case(session, case_id)
            self._gallery(session, case.id, step.gallery_id)
            parent = None if case.head_step_id is None else session.get(Step, case.head_step_id)
            seq = (session.scalar(select(func.max(Step.seq)).where(Step.case_id == case.id)) or 0) + 1
            sketch_row = self._evidence_row(session, case.id, sketch, at)
            ir_row = self._evidence_row(session, case.id, ir, at)
            row = Step(case_id=case.id, parent_id=None if parent is None else parent.id, seq=seq,
                       depth=0 if parent is None else parent.depth + 1,
                       sketch_evidence_id=None if sketch_row is None else sketch_row.id,
                       ir_evidence_id=None if ir_row is None else ir_row.id, created_at=at, **fields)
            session.add(row)
            session.flush()
            case.head_step_id = row.id
            self._log(session, case, at, "step.record", step_payload(row, sketch_row, ir_row))
            return row.id

    def undo_step(self, case_id: int) -> int:
        """Mark the head step undone (it stays stored) and make its parent the head. Returns the undone id."""
        with self._write() as session:
            case = self._case(session, case_id)
            if case.head_step_id is None:
                raise CaseStateError(f"case {case_id} has no step to undo")
            step = session.get(Step, case.head_step_id)
            at = _now()
            step.undone_at = at
            case.head_step_id = step.parent_id
            self._log(session, case, at, "step.undo", {"step": step.id, "head": step.parent_id})
            return step.id

    def branch_from(self, case_id: int, step_id: int | None) -> bool:
        """Make ``step_id`` the head (None: before the first step); the next step starts a branch there.
        Steps after it stay as they are. Returns False when it already is the head."""
        with self._write() as session:
            case = self._case(session, case_id)
            if step_id is not None:
                node: Step | None = self._step(session, case.id, step_id)
                while node is not None:
                    if node.undone_at is not None:
                        raise CaseStateError(f"cannot branch from step {step_id}: step {node.id} on its path "
                                             f"was undone")
                    node = None if node.parent_id is None else session.get(Step, node.parent_id)
            if case.head_step_id == step_id:
                return False
            at = _now()
            previous = case.head_step_id
            case.head_step_id = step_id
            self._log(session, case, at, "step.branch", {"head": step_id, "previous_head": previous})
            return True

    # -------------------------------------------------------------------------------------- marks and notes

    def mark(self, case_id: int, gallery_id: int, item_id: str, state: str, note: str | None = None, *,
             step_id: int | None = None, score: float | None = None, rank: int | None = None) -> bool:
        """Set an item's mark: "confirmed", "rejected" or "cleared". ``step_id``/``score``/``rank``: the step at
        which the examiner marked it and the item's score and rank (1 = best) there; the store's actor is kept
        as the examiner. Returns False when nothing changed."""
        if state not in MARK_ACTIONS:
            raise StoreInputError(f"mark state must be one of {list(MARK_ACTIONS)}, got {state!r}")
        item_id = checks.text(item_id, "item_id")
        note = checks.text(note, "mark note", optional=True)
        if state == "cleared" and note is not None:
            raise StoreInputError("a cleared mark takes no note")
        if state == "cleared" and (step_id, score, rank) != (None, None, None):
            raise StoreInputError("a cleared mark takes no step, score or rank")
        score = None if score is None else checks.finite(score, "mark score")
        rank = None if rank is None else checks.count(rank, "mark rank")
        if rank == 0:
            raise StoreInputError("a mark's rank counts from 1")
        with self._write() as session:
            case = self._case(session, case_id)
            self._gallery(session, case.id, gallery_id)
            if step_id is not None:
                self._step(session, case.id, step_id)
            row = session.scalar(select(Mark).where(Mark.case_id == case.id, Mark.gallery_id == gallery_id,
                                                    Mark.item_id == item_id))
            at = _now()
            if state == "cleared":
                if row is None:
                    return False
                session.delete(row)
            elif row is None:
                row = Mark(case_id=case.id, gallery_id=gallery_id, item_id=item_id, state=state, note=note, at=at,
                           step_id=step_id, score=score, rank=rank, actor=self.actor)
                session.add(row)
            elif (row.state, row.note) == (state, note):
                return False
            else:
                row.state, row.note, row.at = state, note, at
                row.step_id, row.score, row.rank, row.actor = step_id, score, rank, self.actor
            payload = (mark_payload(int(gallery_id), item_id, state, note) if state == "cleared"
                       else mark_row_payload(row))
            self._log(session, case, at, "mark", payload)
            return True

    def add_note(self, case_id: int, text: str, *, item_id: str | None = None, gallery_id: int | None = None,
                 step_id: int | None = None) -> int:
        """A note on the case, optionally about an item (give its gallery too) or a step. Returns its id."""
        text = checks.text(text, "note text")
        item_id = checks.text(item_id, "item_id", optional=True)
        if (item_id is None) != (gallery_id is None):
            raise StoreInputError("a note about an item needs both item_id and gallery_id")
        at = _now()
        with self._write() as session:
            case = self._case(session, case_id)
            if gallery_id is not None:
                self._gallery(session, case.id, gallery_id)
            if step_id is not None:
                self._step(session, case.id, step_id)
            note = Note(case_id=case.id, text=text, item_id=item_id, gallery_id=gallery_id, step_id=step_id, at=at)
            session.add(note)
            session.flush()
            self._log(session, case, at, "note.add", note_payload(note))
            return note.id

    def edit_note(self, case_id: int, note_id: int, text: str) -> bool:
        """Replace a note's text; the edit is audited with the new text (the old one stays in the audit
        trail). Returns False when the text is unchanged."""
        text = checks.text(text, "note text")
        note_id = checks.row_id(note_id, "note id")
        with self._write() as session:
            case = self._case(session, case_id)
            note = session.get(Note, note_id)
            if note is None or note.case_id != case.id:
                raise CaseNotFoundError(f"case {case_id} has no note {note_id}")
            if note.text == text:
                return False
            at = _now()
            note.text, note.edited_at = text, at
            self._log(session, case, at, "note.edit", note_payload(note))
            return True

    def save_working_state(self, case_id: int, state: dict[str, Any]) -> None:
        """Keep the case's search controls (filters, level, keep rule, query images) so the case reopens with
        them. Not audited and not evidence: each step records what it searched. Allowed on a closed case."""
        state = checks.json_object(state, "a working state")
        with self._write() as session:
            case = self._case(session, case_id, writable=False)
            if case.working_state != state:
                case.working_state = state

    # -------------------------------------------------------------------------------------- reading

    def list_cases(self) -> list[CaseSummary]:
        with self._read() as session:
            counts = dict(session.execute(select(Step.case_id, func.count()).group_by(Step.case_id)).all())
            return [case_summary(case, counts.get(case.id, 0))
                    for case in session.scalars(select(Case).order_by(Case.id))]

    def load_case(self, case_id: int) -> CaseState:
        """The case's whole state, read in one transaction."""
        with self._read() as session:
            return read_case(session, self._case(session, case_id, writable=False), self._evidence_root)

    def audit_trail(self, case_id: int) -> list[AuditRecord]:
        with self._read() as session:
            self._case(session, case_id, writable=False)
            return read_entries(session, case_id)

    def content_records(self, case_id: int) -> tuple[str, dict[str, dict[str, dict[str, Any]]]]:
        """(audit head hash, the case's content as canonical records) read in one transaction: ``"steps"`` by
        step id, ``"marks"`` by ``"<gallery>:<item>"``, ``"notes"`` by note id, each the row's audit payload
        with its time. A report's manifest keeps a digest of each, so a row changed after the report is named.
        A step's undo mark is left out (undoing later is a normal action)."""
        with self._read() as session:
            self._case(session, case_id, writable=False)
            return content_records(session, case_id)

    def verify_chain(self, case_id: int) -> ChainReport:
        """Recompute the case's audit chain and check the tables and evidence files against it."""
        with self._read() as session:
            self._case(session, case_id, writable=False)
            return verify_case(session, case_id, self._evidence_root)
