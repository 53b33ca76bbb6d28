"""Audit payloads, each a function of the row it describes, so that verification can recompute it.

A step's large blobs enter by SHA-256 of their uncompressed content (the kept ids text, the float32 scores)
and its histogram by SHA-256 of its canonical JSON; everything else enters as is.
"""

from __future__ import annotations

import zlib
from typing import Any

from app.store.codec import sha256_hex
from app.store.models import CaseGallery, Evidence, Note, Step, canonical_json
from engine.step_schema import step_values


def evidence_payload(evidence: Evidence | None) -> dict[str, Any] | None:
    if evidence is None:
        return None
    return {"sha256": evidence.sha256, "original_path": evidence.original_path, "stored_name": evidence.stored_name}


def step_payload(step: Step, sketch: Evidence | None, ir: Evidence | None) -> dict[str, Any]:
    """The step's place in its tree, its query images, the step schema's fields (``engine.step_schema``) under
    their own names and the digests of its outputs."""
    return {
        "step": step.id,
        "seq": step.seq,
        "parent": step.parent_id,
        "depth": step.depth,
        "gallery": step.gallery_id,
        "sketch": evidence_payload(sketch),
        "ir": evidence_payload(ir),
        **step_values(step),
        "kept_sha256": sha256_hex(zlib.decompress(step.kept_ids)),
        "kept_scores_sha256": sha256_hex(zlib.decompress(step.kept_scores)),
        "histogram_sha256": sha256_hex(canonical_json(step.histogram).encode("utf-8")),
    }


def gallery_payload(gallery: CaseGallery) -> dict[str, Any]:
    return {"gallery": gallery.id, "path": gallery.path, "gallery_fingerprint": gallery.gallery_fingerprint,
            "model_fingerprint": gallery.model_fingerprint, "item_count": gallery.item_count}


def note_payload(note: Note) -> dict[str, Any]:
    return {"note": note.id, "text": note.text, "item": note.item_id, "gallery": note.gallery_id,
            "step": note.step_id}


def mark_payload(gallery_id: int, item_id: str, state: str, note: str | None) -> dict[str, Any]:
    """``state`` is "confirmed", "rejected" or "cleared"."""
    return {"gallery": gallery_id, "item": item_id, "state": state, "note": note}
