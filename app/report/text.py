"""How report values read as text (shared by the HTML and PDF renderers): times, keep rules, levels,
filters, counts and one-line summaries of audit entries."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from app.provenance import network_name
from engine.kernel import query_modalities
from engine.kernel.timefmt import export_moment
from engine.kernel.timefmt import export_time as footage_time
from engine.perception.appearance.views import APPEARANCE_VIEWS
from engine.retrieval.encoding.views import BIOMETRICS_VIEW

LEVEL_SOURCE_NAMES = {"override": "set by the analyst", "encoder": "model's estimate", "parser": "attribute parser",
                      "classifier": "level classifier", "default": "default"}


def moment(value: datetime | str | None) -> str:
    """A stored UTC time as ``2025-01-02 03:04:05 UTC`` ('—' when absent)."""
    if value is None:
        return "—"
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return value
    return export_moment(value)  # the store keeps UTC; a time without a zone is one of those


def item_time(seconds: float | None) -> str:
    """An item's capture time: UTC date for wall-clock seconds, ``12.5s`` on the footage clock, '—' unknown."""
    text = footage_time(seconds)
    return "—" if text == "-" else text


def score(value: float | None) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{value:.4f}"


def count(value: int) -> str:
    return f"{value:,}"


def modalities(query_kind: str) -> str:
    """'text+sketch' → 'text + sketch'; 'example' → 'example item' (the registry's labels,
    ``engine.kernel.query_modalities``)."""
    return query_modalities.describe(query_kind) or "—"


def modality_name(kind: str) -> str:
    """A query image's modality in words ("ir" → "IR"); other kinds of evidence ("crop") read as themselves."""
    return query_modalities.describe(kind) or kind


def searched_view(view: str, scenario: str | None) -> str:
    """The view a step searched, in words a reader of the report needs (a find-similar step whose person may
    have changed clothes also ranked by the model's reading of the person's biometrics)."""
    if view == BIOMETRICS_VIEW:
        return ("rgb similarity plus the biometric likeness the model's attribute heads read (gender, age, height, "
                "build, skin, hair): find similar when the clothes may have changed; a lead, not evidence of "
                "identity")
    return view + (f" (scenario {scenario})" if scenario else "")


def ranked_by(network: Mapping[str, Any] | None, view: str, model_fingerprint: str, problem: str = "",
              changed: bool = False) -> str:
    """Which network's vectors a step's similarity compared: a shipped network by its version and training data,
    a user's ONNX file by its name and hash, else the checkpoint's model by its fingerprint. ``problem``: why it
    is not known; ``changed``: the gallery changed since the case used it (the network is read from it now)."""
    if problem:
        return f"not known: {problem}"
    grey = " on grey copies of the query and the crops" if network and APPEARANCE_VIEWS.get(view) else ""
    if not network:
        shown = model_fingerprint if len(model_fingerprint) <= 16 else f"{model_fingerprint[:16]}…"
        said = f"the checkpoint's model (fingerprint {shown})"
    elif network.get("kind") == "openvino":
        trained = network.get("trained_on") or "not recorded"
        said = (f"the re-identification network {network_name(network)}{grey}; trained on {trained}")
    else:
        digest = str(network.get("file_sha256") or "")
        said = (f"your re-identification network {network_name(network)}"
                + (f" (SHA-256 {digest[:16]}…)" if digest else "") + f"{grey}; training data not recorded")
    return said + ("; read from the gallery now, which has changed since the case used it" if changed else "")


def level(level_name: str | None, source: str | None, overridden: bool) -> str:
    if level_name is None:
        return "— (no level)"
    where = LEVEL_SOURCE_NAMES.get(source or "", source or "unknown source")
    return f"{level_name} ({where}{', overridden' if overridden and source != 'override' else ''})"


def keep_rule(rule: str, value: float, k: int) -> str:
    """The step's keep rule as the distribution panel words it (ρ, k or threshold), with the k it gave."""
    if rule == "rho":
        return f"keep top ρ = {value:g} of the candidates (k = {k:,})"
    if rule == "threshold":
        return f"keep scores ≥ {value:.4f} (k = {k:,})"
    return f"keep top k = {k:,}"


def filters(values: dict[str, Any]) -> str:
    """Camera and time filters in words ('none' when no filter applied)."""
    parts = []
    cameras = values.get("cameras")
    if cameras:
        parts.append("cameras " + ", ".join(str(c) for c in cameras))
    window = values.get("time_range")
    if window and any(v is not None for v in window):
        low, high = (window + [None, None])[:2]
        parts.append(f"time {item_time(low) if low is not None else '…'} to "
                     f"{item_time(high) if high is not None else '…'}")
    for key in sorted(set(values) - {"cameras", "time_range"}):
        if values[key] not in (None, [], {}):
            parts.append(f"{key} {values[key]}")
    return "; ".join(parts) if parts else "none"


def candidates(before: int, filtered_out: int, after: int, whole_gallery: bool = False) -> str:
    """Candidates before → after; a step that scored every item again (a follow to the next camera) says so."""
    filtered = f" ({filtered_out:,} filtered out)" if filtered_out else ""
    scope = " (the whole gallery again)" if whole_gallery else ""
    return f"{before:,}{scope}{filtered} → {after:,}"


def _clip(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _number(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _step(step_id: Any, labels: Mapping[int, str]) -> str:
    """A step as the report names it: its label, with the stored id the audit payload holds ("step 3a (#7)")."""
    label = labels.get(step_id) if isinstance(step_id, int) else None
    return f"step {step_id}" if label is None else f"step {label} (#{step_id})"


def _head(step_id: Any, labels: Mapping[int, str]) -> str:
    return "before the first step" if step_id is None else _step(step_id, labels)


def _mark_context(payload: dict[str, Any], labels: Mapping[int, str]) -> str:
    if payload.get("step") is None:
        return ""
    said = f" at {_step(payload['step'], labels)}"
    if payload.get("score") is not None:
        said += f", score {score(payload['score'])}"
    if payload.get("rank") is not None:
        said += f", rank {_number(payload['rank'])}"
    return said


def audit_summary(action: str, payload: dict[str, Any], labels: Mapping[int, str] | None = None) -> str:
    """One short line saying what an audit entry recorded; ``labels`` (step id → label) names steps as the
    timeline does."""
    labels = labels or {}
    if action == "case.create":
        return f"case “{_clip(payload.get('title', ''), 60)}” created"
    if action == "case.rename":
        return f"renamed “{_clip(payload.get('title', ''), 60)}”"
    if action == "case.describe":
        return "description changed"
    if action == "case.status":
        return f"status {payload.get('status')}"
    if action == "gallery.add":
        return f"gallery {payload.get('gallery')}: {_clip(payload.get('path', ''), 60)}"
    if action == "step.record":
        query = payload.get("query_text") or payload.get("example_item") or ""
        return (f"{_step(payload.get('step'), labels)} ({payload.get('query_kind')}) "
                f"{_number(payload.get('candidates_before'))} → {_number(payload.get('candidates_after'))}"
                + (f": “{_clip(query, 40)}”" if query else ""))
    if action == "step.undo":
        return f"{_step(payload.get('step'), labels)} undone, head {_head(payload.get('head'), labels)}"
    if action == "step.branch":
        return f"head moved to {_head(payload.get('head'), labels)}"
    if action == "mark":
        return f"item {_clip(payload.get('item', ''), 40)} {payload.get('state')}{_mark_context(payload, labels)}"
    if action == "note.add":
        return f"note #{payload.get('note')} “{_clip(payload.get('text', ''), 50)}”"
    if action == "note.edit":
        return f"note #{payload.get('note')} edited: “{_clip(payload.get('text', ''), 50)}”"
    return _clip(", ".join(f"{k}={v}" for k, v in sorted(payload.items())), 60)
