"""The audit trail: one entry per action, chained by hash.

hash_n = SHA-256( prev_hash_n ‖ canonical_json({case, seq, at, actor, action, payload}) ), prev_hash_1 = 64 zeros,
prev_hash_n = hash_{n-1}. Entries are written in the action's own transaction (so an action and its entry
commit together or not at all); SQLite triggers refuse UPDATE, DELETE and any INSERT that does not extend
the chain. ``chain_problems`` recomputes every hash, which catches an edit made with the triggers dropped;
only rewriting the newest entries wholesale escapes it, which the head hash printed in a report exposes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.store.models import AuditEntry, canonical_json, utc_text
from engine.kernel import jsonio

GENESIS_HASH = "0" * 64


def entry_hash(prev_hash: str, case_id: int, seq: int, at: str, actor: str, action: str,
               payload: dict[str, Any]) -> str:
    body = canonical_json({"case": case_id, "seq": seq, "at": at, "actor": actor, "action": action,
                           "payload": payload})
    return hashlib.sha256(prev_hash.encode("ascii") + body.encode("utf-8")).hexdigest()


def append_entry(session: Session, case_id: int, at: datetime, actor: str, action: str,
                 payload: dict[str, Any]) -> AuditEntry:
    """Add the case's next entry to ``session`` (the caller's transaction commits it with the action)."""
    last = session.execute(select(AuditEntry.seq, AuditEntry.hash).where(AuditEntry.case_id == case_id)
                           .order_by(AuditEntry.seq.desc()).limit(1)).first()
    seq, prev_hash = (1, GENESIS_HASH) if last is None else (last.seq + 1, last.hash)
    stamp = utc_text(at)
    entry = AuditEntry(case_id=case_id, seq=seq, at=stamp, actor=actor, action=action,
                       payload=canonical_json(payload), prev_hash=prev_hash,
                       hash=entry_hash(prev_hash, case_id, seq, stamp, actor, action, payload))
    session.add(entry)
    session.flush()
    return entry


@dataclass(frozen=True)
class AuditRecord:
    """One audit entry as read back (``payload`` parsed)."""

    seq: int
    at: str
    actor: str
    action: str
    payload: dict[str, Any]
    prev_hash: str
    hash: str


def read_entries(session: Session, case_id: int) -> list[AuditRecord]:
    rows = session.scalars(select(AuditEntry).where(AuditEntry.case_id == case_id).order_by(AuditEntry.seq))
    records = []
    for row in rows:
        try:
            payload = jsonio.loads(row.payload, f"audit entry {row.seq} of case {case_id}", expect=dict)
        except ValueError:
            payload = {"unreadable": row.payload}
        records.append(AuditRecord(row.seq, row.at, row.actor, row.action, payload, row.prev_hash, row.hash))
    return records


def chain_problems(case_id: int, entries: list[AuditRecord]) -> list[str]:
    """What is wrong with the chain: gaps in seq, broken links, hashes that do not match their entry."""
    problems = []
    prev_hash = GENESIS_HASH
    for expected_seq, entry in enumerate(entries, start=1):
        if entry.seq != expected_seq:
            problems.append(f"entry seq {entry.seq}: expected seq {expected_seq} (an entry is missing or added)")
        if entry.prev_hash != prev_hash:
            problems.append(f"entry seq {entry.seq}: prev_hash does not match the hash of the entry before it")
        if "unreadable" in entry.payload and len(entry.payload) == 1:
            problems.append(f"entry seq {entry.seq}: payload is not valid JSON")
        recomputed = entry_hash(entry.prev_hash, case_id, entry.seq, entry.at, entry.actor, entry.action,
                                entry.payload)
        if recomputed != entry.hash:
            problems.append(f"entry seq {entry.seq} ({entry.action}): hash does not match its contents")
        prev_hash = entry.hash
    return problems
