"""Explanations in words: one place that says what each evidence source read and whether it agrees with the
description, for the CLI console, the app's detail pane and tooltips, and reports (docs/methods.md §7).

Keys and values are worded by the ontology's label table (``engine.kernel.ontology.key_label``, ``value_label``),
sources by ``SOURCE_LABELS``, grades by ``engine.retrieval.evidence.readings``: an explanation never shows an internal
field name such as ``top_color``.

- ``attribute_sentence(entry)``: one stated attribute ("✗ colour of the top: grey by the pixels (0.45); the
  description says white");
- ``score_sentence(explanation)``: the score's parts;
- ``explanation_line(explanation)``: both on one line, for a tooltip or a console.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.index.evidence_table import SOURCES
from engine.kernel.ontology import key_label, value_label
from engine.retrieval.evidence import readings as grade

#: Each attribute evidence source as an investigator reads it (the app, the console and reports).
SOURCE_LABELS: dict[str, str] = {
    "pixels": "pixels",
    "model": "model heads",
    "objects": "carried objects",
    "pretrained": "attribute network",
}
if set(SOURCE_LABELS) != set(SOURCES):  # a new source needs its words here
    raise RuntimeError(f"engine.retrieval.evidence.wording labels {sorted(SOURCE_LABELS)}, the evidence table has "
                       f"{sorted(SOURCES)}")

#: The mark of each status (``engine.retrieval.evidence.readings.STATUSES``).
STATUS_MARKS: dict[str, str] = {grade.MATCH: "✓", grade.MISMATCH: "✗", grade.UNSURE: "~", grade.NOT_READ: "–",
                                grade.NO_EVIDENCE: "?"}
#: Each status in words (a legend).
STATUS_WORDS: dict[str, str] = {
    grade.MATCH: "the evidence agrees with the description",
    grade.MISMATCH: "the evidence says otherwise",
    grade.UNSURE: "the evidence is undecided or its sources disagree",
    grade.NOT_READ: "not read: the only support is a prior share or a source not trusted here",
    grade.NO_EVIDENCE: "no evidence for this item",
}


def source_label(source: str) -> str:
    """An evidence source in words (an unknown name as it is)."""
    return SOURCE_LABELS.get(source, source)


def _values(key: str, reads: object) -> str:
    if isinstance(reads, list | tuple):
        return "one of " + ", ".join(value_label(key, v) for v in reads)
    return value_label(key, str(reads))


def reading_words(key: str, source: str, reading: Mapping[str, Any], labels: Mapping[str, str] | None = None
                  ) -> str:
    """What one source read of ``key`` ("grey by the pixels (0.45)"); ``labels`` may word the sources."""
    by = f"the {(labels or SOURCE_LABELS).get(source, source)}"
    verdict = reading.get("verdict")
    if verdict is None:  # an explanation made before readings were graded
        return f"{_values(key, reading.get('best', '?'))} by {by}" if reading.get("best") else f"read by {by}"
    if verdict == grade.UNTRUSTED:
        return f"{by}: not trusted on this gallery"
    p = reading.get("reads_probability")
    share = "" if p is None else f" ({p:.2f})"
    what = _values(key, reading["reads"])
    if verdict == grade.UNDECIDED:
        return f"undecided by {by} (at most {what}{share})"
    if verdict == grade.GROUP:
        return f"{what} by {by}{share}, which one not read"
    return f"{what} by {by}{share}"


def attribute_sentence(entry: Mapping[str, Any], stated_by: str = "the description",
                       labels: Mapping[str, str] | None = None) -> str:
    """One stated attribute in words, with its status mark: what each source read, then what ``stated_by``
    says (the description, or the example of a find similar)."""
    key, value = entry["key"], entry["value"]
    mark = STATUS_MARKS.get(entry["status"], "?")
    readings = [reading_words(key, source, reading, labels) for source, reading in entry["sources"].items()]
    said = f"{stated_by} says {value_label(key, value)}"
    if not readings:
        body = f"not read for this item; {said}"
    elif entry["status"] == grade.NOT_READ:
        body = f"{'; '.join(readings)}; {said}, not read"
    else:
        body = f"{'; '.join(readings)}; {said}"
    if entry.get("required"):
        body += " (required" + (", fails" if entry.get("failed_requirement") else "") + ")"
    return f"{mark} {key_label(key)}: {body}"


def score_sentence(explanation: Mapping[str, Any]) -> str:
    """The score's parts in words."""
    if explanation.get("rule") == "biometrics":
        weight = explanation["likeness_weight"]
        return (f"score {explanation['score']:.3f} = (similarity {explanation['similarity']:.3f} + {weight:g} × "
                f"likeness of what a change of clothes leaves {explanation['likeness']:.2f}) / {1 + weight:g}")
    return (f"score {explanation['score']:.3f} = similarity {explanation['similarity']:.3f} + "
            f"{explanation['attribute_weight']:g} × agreement with the description {explanation['agreement']:+.2f}")


def stated_by(explanation: Mapping[str, Any]) -> str:
    """Who states the attributes an explanation grades: the description, or the example of a find similar."""
    return "the example" if explanation.get("rule") == "biometrics" else "the description"


def explanation_line(explanation: Mapping[str, Any], limit: int = 4, labels: Mapping[str, str] | None = None) -> str:
    """The score's parts, then up to ``limit`` stated attributes in words, on one line (``labels`` may word the
    sources; default ``SOURCE_LABELS``)."""
    parts = [attribute_sentence(entry, stated_by(explanation), labels) for entry in explanation["attributes"][:limit]]
    hidden = len(explanation["attributes"]) - limit
    if hidden > 0:
        parts.append(f"{hidden} more")
    return score_sentence(explanation) + ("" if not parts else " · " + " · ".join(parts))
