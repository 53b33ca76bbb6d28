"""The case store's input checks: each bad value becomes a ``StoreInputError`` that names it, and a step's input
becomes the column values of its row (``engine.kernel.step_schema`` fields plus its outputs)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from app.store import codec
from app.store.errors import StoreInputError
from app.store.models import LEVEL_SOURCES, canonical_json
from app.store.state import StepInput
from engine.kernel.keep_rules import check_keep
from engine.kernel.query_modalities import check_query_kind
from engine.kernel.step_schema import STEP_FIELDS, StepField
from engine.kernel.vocabulary import LEVELS


def text(value: object, what: str, *, limit: int | None = None, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise StoreInputError(f"{what} must be a non-empty string, got {value!r}")
    if limit is not None and len(value) > limit:
        raise StoreInputError(f"{what} is longer than {limit} characters")
    return value


def json_object(value: object, what: str) -> dict:
    """``value`` when it is a JSON object of plain JSON values (what a canonical JSON column can hold)."""
    if not isinstance(value, dict):
        raise StoreInputError(f"{what} must be a JSON object (dict), got {type(value).__name__}")
    try:
        canonical_json(value)
    except (TypeError, ValueError) as exc:
        raise StoreInputError(f"{what} must be plain JSON: {exc}") from None
    return value


def count(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise StoreInputError(f"{what} must be a non-negative integer, got {value!r}")
    return int(value)


def finite(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating) or not math.isfinite(value):
        raise StoreInputError(f"{what} must be a finite number, got {value!r}")
    return float(value)


def row_id(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise StoreInputError(f"{what} must be an integer id, got {value!r}")
    return int(value)


def _field_value(spec: StepField, value: object) -> Any:
    if spec.kind is str:
        return text(value, spec.name, limit=spec.limit, optional=spec.optional)
    if spec.kind is int:
        return count(value, spec.name)
    if spec.kind is float:
        return finite(value, spec.name)
    if spec.kind is bool:
        return bool(value)
    return value


def step_columns(step: StepInput) -> dict[str, Any]:
    """Validated column values of a step (all but its tree place, evidence and times)."""
    try:
        check_keep(step.keep_rule, finite(step.keep_value, "keep_value"), what="keep_rule")
        check_query_kind(text(step.query_kind, "query_kind"))
    except ValueError as exc:
        raise StoreInputError(str(exc)) from None
    if step.level is not None and step.level not in LEVELS:
        raise StoreInputError(f"level must be one of {list(LEVELS)} or None, got {step.level!r}")
    if step.level_source is not None and step.level_source not in LEVEL_SOURCES:
        raise StoreInputError(f"level_source must be one of {list(LEVEL_SOURCES)} or None, "
                              f"got {step.level_source!r}")
    kept_ids = tuple(step.kept_ids)
    kept_scores = np.asarray(step.kept_scores, dtype=np.float32)
    if kept_scores.shape != (len(kept_ids),):
        raise StoreInputError(f"kept_scores has shape {kept_scores.shape}, expected ({len(kept_ids)},) to match "
                              f"kept_ids")
    if codec.has_duplicates(kept_ids):
        raise StoreInputError("kept_ids contains duplicates")
    scores = np.asarray(step.scores, dtype=np.float32)
    before = count(step.candidates_before, "candidates_before")
    filtered_out = count(step.filtered_out, "filtered_out")
    if scores.ndim != 1 or scores.shape[0] + filtered_out != before:
        raise StoreInputError(f"candidates_before ({before}) must equal the ranked scores "
                              f"({scores.shape}) plus filtered_out ({filtered_out})")
    if len(kept_ids) > scores.shape[0]:
        raise StoreInputError(f"{len(kept_ids)} kept items but only {scores.shape[0]} ranked candidates")
    filters = json_object(step.filters if step.filters is not None else {}, "filters")
    ids_blob, ids_sha = codec.encode_ids(kept_ids)
    seconds = finite(step.seconds, "seconds")
    if seconds < 0:
        raise StoreInputError(f"seconds must not be negative, got {seconds}")
    gallery_id = row_id(step.gallery_id, "gallery_id")
    derived = {"filters": filters, "candidates_after": len(kept_ids),
               "level_overridden": step.level_source == "override"}
    fields = {spec.name: derived[spec.name] if spec.name in derived else _field_value(spec, getattr(step, spec.name))
              for spec in STEP_FIELDS}
    return {
        "gallery_id": gallery_id,
        **fields,
        "kept_ids": ids_blob,
        "kept_scores": codec.encode_scores(kept_scores),
        "kept_sha256": ids_sha,
        "histogram": codec.score_histogram(scores, step.relevant),
        "question": step_question(step.question),
    }


#: What a step's witness question record may hold (``StepInput.question``).
QUESTION_FIELDS = frozenset({"key", "question", "gain", "answer", "unknown", "condition"})


def step_question(value: object) -> dict | None:
    """A step's witness question record checked: ontology keys, a question sentence, the answer one of the key's
    values or None, ``condition`` (the viewing condition it was ranked for; absent in records made before it
    was kept) one of the witness prior's choices, ``unknown`` a list of ontology keys."""
    if value is None:
        return None
    from engine.kernel.ontology import ONTOLOGY  # loaded when a step carries a question, not with the store

    record = json_object(value, "question")
    extra = sorted(set(record) - QUESTION_FIELDS)
    if extra or not record:
        raise StoreInputError(f"question may hold only {sorted(QUESTION_FIELDS)}, got {sorted(record)}")
    key = record.get("key")
    if key is not None or "question" in record:
        if key not in ONTOLOGY.attributes:
            raise StoreInputError(f"question.key must be an ontology key, got {key!r}")
        text(record.get("question"), "question.question")
        answer = record.get("answer")
        if answer is not None and not ONTOLOGY.is_valid(key, answer):
            raise StoreInputError(f"question.answer {answer!r} is not a value of {key}")
    if "condition" in record:
        from engine.kernel.witness_prior import load_prior

        choices = load_prior().choices
        if record["condition"] not in choices or key is None:
            raise StoreInputError(f"question.condition must name how the question's ranking saw the witness, one "
                                  f"of {list(choices)}, got {record['condition']!r}")
    unknown = record.get("unknown", [])
    if not isinstance(unknown, list) or any(k not in ONTOLOGY.attributes for k in unknown):
        raise StoreInputError(f"question.unknown must be a list of ontology keys, got {unknown!r}")
    return record
