"""The case store: cases, galleries used, steps, marks, notes and a hash-chained audit trail in SQLite.

Qt-free; of the engine it imports only the kernel at run time (``engine.kernel.jsonio``,
``engine.kernel.step_schema``, ``engine.kernel.permissions``). ``CaseStore`` takes and returns plain values
(``app.store.state``); the app turns engine objects into them with ``app.store.from_engine``, which reads only their
public attributes. Migrations (``migrations/``) run when a store opens.
"""

from app.store.audit import AuditRecord
from app.store.errors import (
    CaseNotFoundError,
    CaseStateError,
    CorruptCaseError,
    MigrationError,
    NotACaseDatabaseError,
    SchemaTooNewError,
    StoreError,
    StoreInputError,
)
from app.store.evidence import EvidenceSource
from app.store.service import CaseStore
from app.store.state import (
    CaseState,
    CaseSummary,
    EvidenceFile,
    GalleryUse,
    MarkState,
    NoteState,
    StepInput,
    StepState,
)
from app.store.verify import ChainReport

__all__ = [
    "AuditRecord",
    "CaseNotFoundError",
    "CaseState",
    "CaseStateError",
    "CaseStore",
    "CorruptCaseError",
    "CaseSummary",
    "ChainReport",
    "EvidenceFile",
    "EvidenceSource",
    "GalleryUse",
    "MarkState",
    "MigrationError",
    "NoteState",
    "NotACaseDatabaseError",
    "SchemaTooNewError",
    "StepInput",
    "StepState",
    "StoreError",
    "StoreInputError",
]
