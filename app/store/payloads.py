"""Audit payloads, each a function of the row it describes, so that verification can recompute it.

A step's large blobs enter by SHA-256 of their uncompressed content (the kept ids text, the float32 scores)
and its histogram by SHA-256 of its canonical JSON; everything else enters as is.
"""

from __future__ import annotations

import zlib
from typing import Any

from app.store.codec import sha256_hex
from app.store.models import CaseGallery, Evidence, Note, Step, canonical_json


def evidence_payload(evidence: Evidence | None) -> dict[str, Any] | None:
    if evidence is None:
        return None
    return {"sha256": evidence.sha256, "original_path": evidence.original_path, "stored_name": evidence.stored_name}


def step_payload(step: Step, sketch: Evidence | None, ir: Evidence | None) -> dict[str, Any]:
    return {
        "step": step.id,
        "seq": step.seq,
        "parent": step.parent_id,
        "depth": step.depth,
        "gallery": step.gallery_id,
        "query_text": step.query_text,
        "query_kind": step.query_kind,
        "example_item": step.example_item,
        "scenario": step.scenario,
        "sketch": evidence_payload(sketch),
        "ir": evidence_payload(ir),
        "view": step.view,
        "level": step.level,
        "level_source": step.level_source,
        "level_overridden": bool(step.level_overridden),
        "keep_rule": step.keep_rule,
        "keep_value": float(step.keep_value),
        "k": step.k,
        "filters": step.filters,
        "candidates_before": step.candidates_before,
        "filtered_out": step.filtered_out,
        "candidates_after": step.candidates_after,
        "kept_sha256": sha256_hex(zlib.decompress(step.kept_ids)),
        "kept_scores_sha256": sha256_hex(zlib.decompress(step.kept_scores)),
        "histogram_sha256": sha256_hex(canonical_json(step.histogram).encode("utf-8")),
        "seconds": float(step.seconds),
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
