"""A case as plain values (no ORM, no Qt): what ``CaseStore.load_case`` returns and the app renders.

Steps form a tree through ``parent_id``; ``CaseState.active_path`` runs from the first step to the head (the
step the analyst stands on). Undone steps stay in ``steps`` with ``undone_at`` set.
"""

from __future__ import annotations

from collections.abc import Sequence, Sized
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from engine.kernel.step_schema import StepRecord

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class CaseSummary:
    id: int
    title: str
    description: str
    status: str
    created_at: datetime
    updated_at: datetime
    head_step_id: int | None
    step_count: int


@dataclass(frozen=True)
class GalleryUse:
    id: int
    path: str
    gallery_fingerprint: str
    model_fingerprint: str
    item_count: int
    added_at: datetime
    version: int | None = None  # the gallery version searched (None: recorded before versions were kept)


@dataclass(frozen=True)
class EvidenceFile:
    """A query image kept with the case; ``stored_path`` is absolute (inside the evidence folder)."""

    id: int
    sha256: str
    original_path: str | None
    stored_path: str
    added_at: datetime


@dataclass(frozen=True, kw_only=True)
class StepInput(StepRecord):
    """What ``CaseStore.record_step`` stores for one search step: the step's fields (``engine.kernel.step_schema``)
    and its outputs (``app.store.from_engine`` builds it from an engine ``StepResult``).

    ``kept_ids``/``kept_scores``: the kept items best first and their scores (a sequence of floats or a float
    array). ``scores``: every ranked
    candidate's score (for the histogram); ``relevant``: ground truth per score, or None. ``sketch``/``ir``:
    a file path, or PNG bytes for an image made in the app. ``filters``: JSON-ready, e.g.
    ``{"cameras": ["cam1"], "time_range": [0.0, None]}``. ``candidates_after`` (the number of kept ids) and
    ``level_overridden`` (``level_source`` is "override") follow from the rest. ``question``: the witness
    question shown before the step, ``{"key", "question", "gain", "answer"}`` (``answer``: the value whose
    button ran the step, None when the description was edited instead), and/or ``"unknown"``: keys the
    witness did not know (``app.state.witness_questions``); None when no question was shown."""

    gallery_id: int
    kept_ids: tuple[str, ...]
    kept_scores: Sequence[float] | np.ndarray
    scores: Any
    sketch: Any = None
    ir: Any = None
    relevant: Any = None
    question: dict[str, Any] | None = None
    level_overridden: bool = field(init=False)
    candidates_after: int = field(init=False)

    def __post_init__(self) -> None:
        kept = self.kept_ids
        object.__setattr__(self, "candidates_after", len(kept) if isinstance(kept, Sized) else 0)
        object.__setattr__(self, "level_overridden", self.level_source == "override")


@dataclass(frozen=True, kw_only=True)
class StepState(StepRecord):
    """A stored step: its fields (``engine.kernel.step_schema``), its place in the case's step tree, its query images
    and its kept items."""

    id: int
    seq: int
    parent_id: int | None
    depth: int
    gallery_id: int
    sketch: EvidenceFile | None
    ir: EvidenceFile | None
    kept_ids: tuple[str, ...] = field(repr=False)
    kept_scores: tuple[float, ...] = field(repr=False)
    kept_sha256: str
    histogram: dict[str, Any] = field(repr=False)
    created_at: datetime
    undone_at: datetime | None
    question: dict[str, Any] | None = None  # the witness question before the step and its answer (StepInput)

    @property
    def undone(self) -> bool:
        return self.undone_at is not None


@dataclass(frozen=True)
class MarkState:
    gallery_id: int
    item_id: str
    state: str  # "confirmed" or "rejected"
    note: str | None
    at: datetime
    step_id: int | None = None  # the step at which it was marked, with the item's score and rank there
    score: float | None = None
    rank: int | None = None  # 1 = best
    actor: str | None = None  # the examiner who marked it


@dataclass(frozen=True)
class NoteState:
    id: int
    text: str
    item_id: str | None
    gallery_id: int | None
    step_id: int | None
    at: datetime
    edited_at: datetime | None = None


@dataclass(frozen=True)
class CaseState:
    """Everything needed to reopen a case exactly as it was left."""

    case: CaseSummary
    galleries: tuple[GalleryUse, ...]
    steps: tuple[StepState, ...]  # creation order
    active_path: tuple[int, ...]  # step ids, first step → head
    marks: tuple[MarkState, ...]  # by gallery, then item id
    notes: tuple[NoteState, ...]  # creation order
    evidence: tuple[EvidenceFile, ...]
    audit_head: str  # hash of the newest audit entry
    working_state: dict[str, Any] | None = None  # the case's search controls as last saved (not audited)

    def step(self, step_id: int) -> StepState:
        for step in self.steps:
            if step.id == step_id:
                return step
        raise KeyError(f"case {self.case.id} has no step {step_id}")

    def children(self, step_id: int | None) -> tuple[StepState, ...]:
        """Steps recorded right after ``step_id`` (None: the first steps of each branch from the start)."""
        return tuple(s for s in self.steps if s.parent_id == step_id)

    @property
    def active_steps(self) -> tuple[StepState, ...]:
        return tuple(self.step(i) for i in self.active_path)

    @property
    def confirmed(self) -> tuple[MarkState, ...]:
        return tuple(m for m in self.marks if m.state == "confirmed")

    @property
    def rejected(self) -> tuple[MarkState, ...]:
        return tuple(m for m in self.marks if m.state == "rejected")
