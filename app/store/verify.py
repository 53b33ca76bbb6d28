"""Checking a case against its audit trail.

1. The chain itself (``audit.chain_problems``): contiguous seq, links, every hash recomputed.
2. The tables against a replay of the trail: the case's title/description/status and times, every gallery,
   step, note (row ↔ the payload recomputed from the row, and its time), which steps are undone, the head
   step, and the marks left after replaying every mark action.
3. The evidence files: present in the evidence folder with the recorded SHA-256.

An edit to any table, a deleted or inserted audit entry, or a swapped evidence file shows up as a problem.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.store.audit import AuditRecord, chain_problems, read_entries
from app.store.errors import CorruptCaseError
from app.store.evidence import case_folder, sha256_file
from app.store.models import Case, CaseGallery, Evidence, Mark, Note, Step, utc_text
from app.store.payloads import gallery_payload, mark_payload, mark_row_payload, note_payload, step_payload


@dataclass(frozen=True)
class ChainReport:
    case_id: int
    entries: int
    head_hash: str | None
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def _compare_rows(kind: str, recorded: dict[int, tuple[dict[str, Any], str]],
                  actual: dict[int, tuple[dict[str, Any], str]]) -> list[str]:
    problems = []
    for key in sorted(recorded.keys() | actual.keys()):
        if key not in actual:
            problems.append(f"{kind} {key} is in the audit trail but not in the database")
        elif key not in recorded:
            problems.append(f"{kind} {key} is in the database but not in the audit trail")
        else:
            (want, want_at), (have, have_at) = recorded[key], actual[key]
            changed = sorted(k for k in want.keys() | have.keys() if want.get(k) != have.get(k))
            if changed:
                problems.append(f"{kind} {key} differs from its audit entry in {changed}")
            if want_at != have_at:
                problems.append(f"{kind} {key} has time {have_at}, its audit entry {want_at}")
    return problems


def _replay(entries: list[AuditRecord]) -> dict[str, Any]:
    state: dict[str, Any] = {"title": None, "description": None, "status": None, "head": None, "galleries": {},
                             "steps": {}, "undone": {}, "marks": {}, "notes": {}}
    for entry in entries:
        payload, action = entry.payload, entry.action
        if action == "case.create":
            state.update(title=payload.get("title"), description=payload.get("description"),
                         status=payload.get("status"))
        elif action == "case.rename":
            state["title"] = payload.get("title")
        elif action == "case.describe":
            state["description"] = payload.get("description")
        elif action == "case.status":
            state["status"] = payload.get("status")
        elif action == "gallery.add":
            state["galleries"][payload.get("gallery")] = (payload, entry.at)
        elif action == "step.record":
            state["steps"][payload.get("step")] = (payload, entry.at)
            state["head"] = payload.get("step")
        elif action == "step.undo":
            state["undone"][payload.get("step")] = entry.at
            state["head"] = payload.get("head")
        elif action == "step.branch":
            state["head"] = payload.get("head")
        elif action == "mark":
            key = (payload.get("gallery"), payload.get("item"))
            if payload.get("state") == "cleared":
                state["marks"].pop(key, None)
            else:
                context = {name: payload.get(name) for name in ("step", "score", "rank", "by")}
                state["marks"][key] = (mark_payload(*key, payload.get("state"), payload.get("note"), **context),
                                       entry.at)
        elif action == "note.add":
            state["notes"][payload.get("note")] = (payload, entry.at)
        elif action == "note.edit":
            added = state["notes"].get(payload.get("note"))
            if added is None:
                state.setdefault("unknown", []).append(f"entry seq {entry.seq}: edits note {payload.get('note')} "
                                                       "that was never added")
            else:
                state["notes"][payload.get("note")] = (payload, added[1])
        else:
            state.setdefault("unknown", []).append(f"entry seq {entry.seq}: unknown action {action!r}")
    return state


def verify_case(session: Session, case_id: int, evidence_root: Path) -> ChainReport:
    entries = read_entries(session, case_id)
    try:
        problems = _problems(session, case_id, entries, evidence_root)
    except (CorruptCaseError, zlib.error) as exc:
        problems = [*chain_problems(case_id, entries), f"case {case_id} holds unreadable values: {exc}"]
    return ChainReport(case_id, len(entries), entries[-1].hash if entries else None, tuple(problems))


def _problems(session: Session, case_id: int, entries: list[AuditRecord], evidence_root: Path) -> list[str]:
    problems = chain_problems(case_id, entries)
    case = session.get(Case, case_id)
    if case is None:
        return [*problems, f"case {case_id} is not in the database"]
    if not entries:
        return [*problems, f"case {case_id} has no audit entries"]
    replay = _replay(entries)
    problems.extend(replay.get("unknown", []))
    for name in ("title", "description", "status"):
        if getattr(case, name) != replay[name]:
            problems.append(f"case {name} is {getattr(case, name)!r}, the audit trail says {replay[name]!r}")
    if case.head_step_id != replay["head"]:
        problems.append(f"head step is {case.head_step_id}, the audit trail says {replay['head']}")
    if utc_text(case.created_at) != entries[0].at or utc_text(case.updated_at) != entries[-1].at:
        problems.append("case created/updated times differ from its first/last audit entries")

    galleries = session.scalars(select(CaseGallery).where(CaseGallery.case_id == case_id))
    problems += _compare_rows("gallery", replay["galleries"],
                              {g.id: (gallery_payload(g), utc_text(g.added_at)) for g in galleries})

    evidence = {e.id: e for e in session.scalars(select(Evidence).where(Evidence.case_id == case_id))}
    steps = list(session.scalars(select(Step).where(Step.case_id == case_id)))
    actual_steps = {}
    for step in steps:
        sketch, ir = evidence.get(step.sketch_evidence_id), evidence.get(step.ir_evidence_id)
        payload = step_payload(step, sketch, ir)
        if payload["kept_sha256"] != step.kept_sha256:
            problems.append(f"step {step.id}: kept ids do not match their recorded SHA-256")
        actual_steps[step.id] = (payload, utc_text(step.created_at))
    problems += _compare_rows("step", replay["steps"], actual_steps)
    undone = {s.id: utc_text(s.undone_at) for s in steps if s.undone_at is not None}
    if undone != replay["undone"]:
        problems.append(f"undone steps {sorted(undone)} differ from the audit trail's {sorted(replay['undone'])}")

    marks = session.scalars(select(Mark).where(Mark.case_id == case_id))
    actual_marks = {(m.gallery_id, m.item_id): (mark_row_payload(m), utc_text(m.at)) for m in marks}
    if actual_marks != replay["marks"]:
        changed = sorted(str(k) for k in actual_marks.keys() | replay["marks"].keys()
                         if actual_marks.get(k) != replay["marks"].get(k))
        problems.append(f"marks differ from the audit trail for items {changed[:10]}")

    notes = session.scalars(select(Note).where(Note.case_id == case_id))
    problems += _compare_rows("note", replay["notes"], {n.id: (note_payload(n), utc_text(n.at)) for n in notes})

    folder = case_folder(evidence_root, case_id)
    for item in evidence.values():
        path = folder / item.stored_name
        if not path.is_file():
            problems.append(f"evidence file {path} is missing")
        elif sha256_file(path) != item.sha256:
            problems.append(f"evidence file {path} does not match its SHA-256 {item.sha256}")
        elif item.stored_name[:64] != item.sha256:
            problems.append(f"evidence {item.id}: stored name {item.stored_name} does not carry its SHA-256")
    return problems

