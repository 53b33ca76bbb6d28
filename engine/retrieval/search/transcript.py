"""A search session written out: JSON-ready records of steps, items and the final ranking, and the same as
readable lines (what ``lineup search`` prints).

ITEM = ``{"rank", "id", "score", <the item's metadata: source, camera, time, identity, crop, …>, "crop_path",
"explanation"}`` (``score`` is null for items that were never ranked, ``crop_path`` the crop's absolute path,
``explanation`` = ``StepResult.explain``: similarity vs attribute contribution and the stated attributes'
evidence; present for a step's items, and for final items the last step scored).
STEP = ``{"step", <the step's fields under their CLI keys (``engine.kernel.step_schema``): "query", "kind", "example",
"level", "level_source", "view", "keep": {"rule", "value", "k"}, "candidates_before", "filtered_out",
"candidates_after", "seconds">, <each image query modality's name (``engine.kernel.query_modalities``: "sketch",
"ir"): its image's name or null>, "attributes", "attribute_weight", "required", "top": [ITEM, …],
"next_questions": [QUESTION, …], "witness_saw"}`` (when given: the best questions to ask the witness next,
``engine.retrieval.search.questions``; QUESTION = ``{"key", "question", "gain", "values", "reason"?}``; and the
viewing condition they were ranked for, ``engine.kernel.witness_prior``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from engine.index import Gallery
from engine.kernel.query_modalities import taking
from engine.kernel.step_schema import cli_values
from engine.kernel.timefmt import export_time
from engine.kernel.witness_prior import ORDINARY, load_prior
from engine.retrieval.evidence.ranking import explanation_line
from engine.retrieval.search.ranking import CONFIRMED, FinalRanking
from engine.retrieval.search.step import StepResult


def item_record(gallery: Gallery, row: int, score: float | None, rank: int) -> dict[str, Any]:
    item = gallery.item(int(row))
    record: dict[str, Any] = {"rank": rank, "id": item.id,
                              "score": None if score is None or math.isnan(score) else float(score)}
    record.update((key, value) for key, value in json.loads(item.to_json()).items() if key != "id")
    if item.crop is not None:
        record["crop_path"] = str(Path(gallery.root, item.crop).resolve())
    return record


def _image_name(value: object) -> str | None:
    if value is None:
        return None
    return str(value) if isinstance(value, str | Path) else f"<array {getattr(value, 'shape', '?')}>"


def step_record(gallery: Gallery, step: StepResult, top: int,
                next_questions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """STEP (see the module docstring); ``level_source`` is ``StepResult.level_origin``, the query images are
    named by their paths; ``next_questions`` is written when given."""
    from engine.retrieval.text.parser import parse

    query = step.query
    ids = gallery.row
    term = step.attribute_term
    top_items = []
    for rank, (item_id, score) in enumerate(step.top(top), start=1):
        record = item_record(gallery, ids(item_id), score, rank)
        record["explanation"] = step.explain(item_id)
        top_items.append(record)
    record = {
        "step": step.index + 1,
        **cli_values(step.record()),
        **{m.name: _image_name(getattr(query, m.name, None)) for m in taking("image")},
        "attributes": parse(query.text).attributes if query.text else {},
        "attribute_weight": None if term is None else term.weight,
        "required": [] if term is None else list(term.required),
        "top": top_items,
    }
    if next_questions is not None:
        record["next_questions"] = [dict(q) for q in next_questions]
    return record


def final_records(gallery: Gallery, ranking: FinalRanking, top: int,
                  last_step: StepResult | None = None) -> list[dict[str, Any]]:
    """The first ``top`` items of the final ranking as ITEMs, each with ``confirmed`` when it was pinned and
    its ``explanation`` when ``last_step`` scored it."""
    out = []
    for rank in range(min(top, ranking.rows.shape[0])):
        row = int(ranking.rows[rank])
        record = item_record(gallery, row, float(ranking.scores[rank]), rank + 1)
        if ranking.stage[rank] == CONFIRMED:
            record["confirmed"] = True
        if last_step is not None and ranking.stage[rank] == last_step.index:
            record["explanation"] = last_step.explain(row)
        out.append(record)
    return out


# ------------------------------------------------------------------------------------------- text


def item_line(record: dict[str, Any]) -> str:
    score = "     -" if record["score"] is None else f"{record['score']:+.4f}"
    identity = f"  identity {record['identity']}" if "identity" in record else ""
    pinned = "  [confirmed]" if record.get("confirmed") else ""
    crop = record.get("crop_path", record.get("source", "-"))
    explanation = record.get("explanation")
    why = f"\n         {explanation_line(explanation)}" if explanation and explanation["attributes"] else ""
    return (f"  {record['rank']:>3}  {score}  {record.get('camera', '-'):<8}  {export_time(record.get('time')):<20}  "
            f"{record['id']}{identity}{pinned}\n         {crop}{why}")


def _keep_text(keep: dict[str, Any]) -> str:
    if keep["rule"] == "rho":
        return f"keep ρ={keep['value']:g} → top {keep['k']}"
    if keep["rule"] == "k":
        return f"keep top {keep['k']}"
    return f"keep score ≥ {keep['value']:g} ({keep['k']} items)"


def step_lines(record: dict[str, Any]) -> list[str]:
    parts = [f"text {record['query']!r}" if record["query"] else None,
             *(f"{m.label} {record[m.name]}" if record.get(m.name) else None for m in taking("image")),
             f"similar to {record['example']}" if record["example"] else None]
    lines = [f"step {record['step']}: " + " + ".join(p for p in parts if p)]
    if record["query"]:
        attributes = ", ".join(f"{k}={v}" for k, v in record["attributes"].items())
        required = f"   required: {', '.join(record['required'])}" if record.get("required") else ""
        weight = f"   attribute weight: {record['attribute_weight']:g}" if record.get("attribute_weight") is not None \
            else ""
        lines.append(f"  attributes: {attributes or '(none recognised)'}{weight}{required}")
    level = f"{record['level']} ({record['level_source']})" if record["level"] else "- (image query)"
    lines.append(f"  level: {level}   view: {record['view']}")
    filtered = f", {record['filtered_out']} removed by filters" if record["filtered_out"] else ""
    lines.append(f"  candidates: {record['candidates_before']} → {record['candidates_after']} "
                 f"({_keep_text(record['keep'])}{filtered})")
    lines.extend(item_line(item) for item in record["top"])
    saw = record.get("witness_saw", ORDINARY)
    if record.get("next_questions") and saw != ORDINARY:
        lines.append(f"  questions for a witness who saw the person {load_prior().label(saw)}:")
    lines.extend(question_line(q, n) for n, q in enumerate(record.get("next_questions") or (), start=1))
    return lines


def question_line(question: dict[str, Any], number: int) -> str:
    """One suggested question with its gain and the candidates' shares ("  ask 1: Was the top red or blue?  0.81
    bits  red 41 %, blue 32 %")."""
    shares = ", ".join(f"{value} {round(100 * share)} %" for value, share in list(question["values"].items())[:3])
    reason = f"  ({question['reason']})" if question.get("reason") else ""
    return f"  ask {number}: {question['question']}  {question['gain']:.2f} bits  {shares}{reason}"


def final_lines(records: list[dict[str, Any]], total: int) -> list[str]:
    return [f"final ranking (top {len(records)} of {total}):", *(item_line(r) for r in records)]
