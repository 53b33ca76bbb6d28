"""Why an item ranked where it did, in words, as the detail pane shows it (docs/methods.md §7): the score's parts
and each attribute the query states with what each evidence source read (``engine.retrieval.evidence.wording``,
from ``StepResult.explain``), the network behind a separate source (``app.provenance``), and how far the ranking
sources are trusted on the item's gallery (``engine.retrieval.search.trust``). Plain words: the pane sets them
as rich text."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.provenance import SOURCE_NOTES, source_label
from engine.retrieval.evidence.readings import MATCH, MISMATCH
from engine.retrieval.evidence.wording import STATUS_MARKS, STATUS_WORDS, attribute_sentence, score_sentence, stated_by
from engine.retrieval.search.trust import RankingTrust, explanation_trust

__all__ = ["AttributeLine", "ExplanationWords", "RankingTrust", "explanation_trust", "explanation_words"]

#: What the likeness of a find similar across outfits compares.
LIKENESS_NOTE = ("The likeness compares what a change of clothes leaves (clothing not compared), as the model's "
                 "attribute heads read both images.")


@dataclass(frozen=True)
class AttributeLine:
    """One stated attribute: its status ``mark`` ("✓"), the ``sentence`` after it, and whether the evidence
    ``agrees`` with what is stated (True), says otherwise (False) or neither (None)."""

    mark: str
    sentence: str
    agrees: bool | None


@dataclass(frozen=True)
class ExplanationWords:
    """An explanation's lines, in the order shown: ``score`` (capitalised) with its ``view``, the ``likeness``
    note of a find similar across outfits, whether the item was ``filtered`` out, the ``evidence`` note (no
    attribute stated, or where the evidence came from when not stored), one line per stated attribute, the
    marks' ``legend``, and the ``network`` behind a separate source (its name, then a note)."""

    score: str
    view: str | None
    likeness: str | None
    filtered: bool
    evidence: str | None
    attributes: tuple[AttributeLine, ...]
    legend: str | None
    network: tuple[str, str] | None


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def explanation_words(explanation: Mapping[str, Any]) -> ExplanationWords:
    """The words of an explanation (``StepResult.explain``)."""
    evidence = None
    if not explanation["attributes"]:
        evidence = "The query states no attribute."
    elif explanation.get("evidence") != "stored":
        evidence = f"Attribute evidence: {explanation.get('evidence', 'none')}."
    named = []
    lines = []
    who = stated_by(explanation)
    for entry in explanation["attributes"]:
        mark, sentence = attribute_sentence(entry, who).split(" ", 1)
        agrees = {MATCH: True, MISMATCH: False}.get(entry["status"])
        lines.append(AttributeLine(mark, sentence, agrees))
        named.extend(entry["sources"])
    legend = None
    if explanation["attributes"]:
        legend = " · ".join(f"{STATUS_MARKS[s]} {STATUS_WORDS[s]}" for s in STATUS_MARKS)
    network = None
    if "pretrained" in named:  # the one source that is a separate network: say which
        network = (source_label("pretrained"), SOURCE_NOTES["pretrained"])
    return ExplanationWords(
        score=_capital(score_sentence(explanation)), view=explanation.get("view") or None,
        likeness=LIKENESS_NOTE if explanation.get("rule") == "biometrics" else None,
        filtered=bool(explanation.get("filtered")), evidence=evidence, attributes=tuple(lines), legend=legend,
        network=network)
