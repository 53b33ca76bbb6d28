"""Audit payloads, each a function of the row it describes, so that verification can recompute it.

A step's large blobs enter by SHA-256 of their uncompressed content (the kept ids text, the float32 scores)
and its histogram by SHA-256 of its canonical JSON; everything else enters as is.
"""

from __future__ import annotations

import zlib
from typing import Any

from app.store.codec import sha256_hex
from app.store.models import CaseGallery, Evidence, Mark, Note, Step, canonical_json, utc_text
from engine.kernel.step_schema import audit_values


def evidence_payload(evidence: Evidence | None) -> dict[str, Any] | None:
    if evidence is None:
        return None
    return {"sha256": evidence.sha256, "original_path": evidence.original_path, "stored_name": evidence.stored_name}


def step_payload(step: Step, sketch: Evidence | None, ir: Evidence | None) -> dict[str, Any]:
    """The step's place in its tree, its query images, the step schema's fields (``engine.kernel.step_schema``) under
    their own names (a field added later only when it differs from its default, ``audit_values``) and the
    digests of its outputs."""
    return {
        "step": step.id,
        "seq": step.seq,
        "parent": step.parent_id,
        "depth": step.depth,
        "gallery": step.gallery_id,
        "sketch": evidence_payload(sketch),
        "ir": evidence_payload(ir),
        **audit_values(step),
        "kept_sha256": sha256_hex(zlib.decompress(step.kept_ids)),
        "kept_scores_sha256": sha256_hex(zlib.decompress(step.kept_scores)),
        "histogram_sha256": sha256_hex(canonical_json(step.histogram).encode("utf-8")),
        **_present(question=step.question),
    }


def _present(**values: Any) -> dict[str, Any]:
    """The values that are set: keys added by a later schema stay out of payloads that never had them, so
    entries written before them still verify."""
    return {key: value for key, value in values.items() if value is not None}


def gallery_payload(gallery: CaseGallery) -> dict[str, Any]:
    return {"gallery": gallery.id, "path": gallery.path, "gallery_fingerprint": gallery.gallery_fingerprint,
            "model_fingerprint": gallery.model_fingerprint, "item_count": gallery.item_count,
            **_present(version=gallery.version)}


def note_payload(note: Note) -> dict[str, Any]:
    """A note's text and subject; ``edited_at`` once the note was edited."""
    edited = None if note.edited_at is None else utc_text(note.edited_at)
    return {"note": note.id, "text": note.text, "item": note.item_id, "gallery": note.gallery_id,
            "step": note.step_id, **_present(edited_at=edited)}


def mark_payload(gallery_id: int, item_id: str, state: str, note: str | None, *, step: int | None = None,
                 score: float | None = None, rank: int | None = None, by: str | None = None) -> dict[str, Any]:
    """``state`` is "confirmed", "rejected" or "cleared"; ``step``/``score``/``rank``: where the item was marked,
    ``by``: the examiner (each only when known)."""
    return {"gallery": gallery_id, "item": item_id, "state": state, "note": note,
            **_present(step=step, score=score, rank=rank, by=by)}


def mark_row_payload(mark: Mark) -> dict[str, Any]:
    return mark_payload(mark.gallery_id, mark.item_id, mark.state, mark.note, step=mark.step_id,
                        score=mark.score, rank=mark.rank, by=mark.actor)
