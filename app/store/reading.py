"""Reading a case out of its tables as plain values (``app.store.state``) and as canonical records, inside a
transaction the caller holds (``CaseStore.load_case``, ``CaseStore.content_records``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.store import codec
from app.store.evidence import case_folder
from app.store.models import AuditEntry, Case, CaseGallery, Evidence, Mark, Note, Step, utc_text
from app.store.payloads import mark_row_payload, note_payload, step_payload
from app.store.state import CaseState, CaseSummary, EvidenceFile, GalleryUse, MarkState, NoteState, StepState
from engine.kernel.step_schema import step_values


def case_summary(case: Case, step_count: int) -> CaseSummary:
    return CaseSummary(case.id, case.title, case.description, case.status, case.created_at, case.updated_at,
                       case.head_step_id, step_count)


def step_state(step: Step, evidence: dict[int, EvidenceFile]) -> StepState:
    """A stored step: the step schema's fields as stored, its tree place, evidence and decoded outputs."""
    return StepState(
        **step_values(step, StepState), id=step.id, seq=step.seq, parent_id=step.parent_id, depth=step.depth,
        gallery_id=step.gallery_id, sketch=evidence.get(step.sketch_evidence_id),
        ir=evidence.get(step.ir_evidence_id), kept_ids=codec.decode_ids(step.kept_ids),
        kept_scores=codec.float_tuple(codec.decode_scores(step.kept_scores)), kept_sha256=step.kept_sha256,
        histogram=step.histogram, created_at=step.created_at, undone_at=step.undone_at, question=step.question)


def read_case(session: Session, case: Case, evidence_root: Path) -> CaseState:
    """The whole state of ``case``, read with ``session``."""
    galleries = tuple(GalleryUse(g.id, g.path, g.gallery_fingerprint, g.model_fingerprint, g.item_count, g.added_at,
                                 g.version)
                      for g in session.scalars(select(CaseGallery).where(CaseGallery.case_id == case.id)
                                               .order_by(CaseGallery.id)))
    folder = case_folder(evidence_root, case.id)
    evidence = {e.id: EvidenceFile(e.id, e.sha256, e.original_path, str(folder / e.stored_name), e.added_at)
                for e in session.scalars(select(Evidence).where(Evidence.case_id == case.id).order_by(Evidence.id))}
    steps = tuple(step_state(s, evidence)
                  for s in session.scalars(select(Step).where(Step.case_id == case.id).order_by(Step.seq)))
    marks = tuple(MarkState(m.gallery_id, m.item_id, m.state, m.note, m.at, m.step_id, m.score, m.rank, m.actor)
                  for m in session.scalars(select(Mark).where(Mark.case_id == case.id)
                                           .order_by(Mark.gallery_id, Mark.item_id)))
    notes = tuple(NoteState(n.id, n.text, n.item_id, n.gallery_id, n.step_id, n.at, n.edited_at)
                  for n in session.scalars(select(Note).where(Note.case_id == case.id).order_by(Note.id)))
    audit_head = session.scalar(select(AuditEntry.hash).where(AuditEntry.case_id == case.id)
                                .order_by(AuditEntry.seq.desc()).limit(1))
    parents = {s.id: s.parent_id for s in steps}
    path: list[int] = []
    node = case.head_step_id
    while node is not None:
        path.append(node)
        node = parents[node]
    return CaseState(case_summary(case, len(steps)), galleries, steps, tuple(reversed(path)), marks, notes,
                     tuple(evidence.values()), audit_head or "", case.working_state)


def content_records(session: Session, case_id: int) -> tuple[str, dict[str, dict[str, dict[str, Any]]]]:
    """(audit head hash, the case's steps, marks and notes as canonical records); see
    ``CaseStore.content_records``."""
    head = session.scalars(select(AuditEntry.hash).where(AuditEntry.case_id == case_id)
                           .order_by(AuditEntry.seq.desc()).limit(1)).first()
    evidence = {e.id: e for e in session.scalars(select(Evidence).where(Evidence.case_id == case_id))}
    steps = {str(s.id): {**step_payload(s, evidence.get(s.sketch_evidence_id), evidence.get(s.ir_evidence_id)),
                         "at": utc_text(s.created_at)}
             for s in session.scalars(select(Step).where(Step.case_id == case_id))}
    marks = {f"{m.gallery_id}:{m.item_id}": {**mark_row_payload(m), "at": utc_text(m.at)}
             for m in session.scalars(select(Mark).where(Mark.case_id == case_id))}
    notes = {str(n.id): {**note_payload(n), "at": utc_text(n.at)}
             for n in session.scalars(select(Note).where(Note.case_id == case_id))}
    return head or "", {"steps": steps, "marks": marks, "notes": notes}
