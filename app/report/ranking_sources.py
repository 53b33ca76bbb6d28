"""What ranked each footage step, and how far each evidence source measured on real footage (Qt-free).

A step on a footage gallery scores similarity + w · agreement (docs/pretrained-models.md, "What ranks a footage
search"): the similarity of the searched view's vectors, plus the agreement of the attributes its text states
with each attribute evidence source the gallery holds, each source's confidence scaled by its reliability r on
footage. A find similar whose person may have changed clothes adds the likeness of the checkpoint's heads'
reading of the biometrics. The plain statement and its warning are the engine's (``engine.retrieval.search.trust``, as
the app's results header words it); the per-key figures beside it come from the same shipped footage calibration
(``engine.retrieval.evidence.reliability.footage_measurements``, docs/pretrained-models.md, "Trusting each source as far
as it measured"); the weight w and the gallery's domain from what the gallery records (``Gallery.ranking``),
read at export. The stated attributes are the parser's reading of the step's text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.index.evidence_table import META_FILE, SOURCES, folder_of
from engine.kernel import jsonio
from engine.kernel.ontology import BIOMETRIC_KEYS
from engine.retrieval.encoding.views import BIOMETRICS_VIEW
from engine.retrieval.evidence.reliability import footage_measurements, measured_on
from engine.retrieval.search.trust import RankingTrust, ranking_trust

FOOTAGE = "footage"


@dataclass(frozen=True)
class SourceMeasure:
    """One evidence source's reading of one attribute key on labelled footage: ``accuracy`` (top-1, None when
    not measured), ``majority`` (the majority guess's accuracy on the same crops), ``n`` labelled crops and ``r``
    the reliability the ranking applies (1: trusted as it says)."""

    source: str
    accuracy: float | None
    majority: float | None
    n: int
    r: float


@dataclass(frozen=True)
class KeyEvidence:
    """A stated attribute (or, for a biometric likeness, a key read): its ``value`` (None for a likeness) and
    each source that ranked it with what it measured."""

    key: str
    value: str | None
    measures: tuple[SourceMeasure, ...]


@dataclass(frozen=True)
class StepRanking:
    """What ranked one footage step: ``sources`` (evidence sources that took part, in ``SOURCES`` order),
    ``weight`` w and its origin as the gallery records them, the ``attributes`` that entered and ``likeness``
    (the biometric keys of a clothes-may-have-changed find similar); ``trust``: the engine's statement of how
    far the step's scores can be trusted (``engine.retrieval.search.trust.ranking_trust``: ``sentence``,
    ``warning``)."""

    step_id: int
    sources: tuple[str, ...]
    weight: float | None
    weight_origin: str
    attributes: tuple[KeyEvidence, ...]
    likeness: tuple[KeyEvidence, ...]
    trust: RankingTrust | None = None


@dataclass(frozen=True)
class Calibration:
    """Where the footage reliabilities were measured: ``crops`` labelled crops of ``people`` people."""

    where: str
    crops: int | None
    people: int | None
    table: Mapping[str, Mapping[str, Mapping[str, Any]]]


def calibration() -> Calibration:
    """The shipped footage calibration's measurements (empty when none ships or it cannot be read)."""
    try:
        measured, table = measured_on(), footage_measurements()
    except (OSError, ValueError) as exc:
        return Calibration(f"unreadable ({exc})", None, None, {})
    return Calibration(str(measured.get("labels") or "the shipped calibration"), measured.get("crops"),
                       measured.get("people"), table)


def covered_keys(gallery_root: str | None) -> dict[str, frozenset[str]] | None:
    """Per evidence source the attribute keys the gallery's evidence table holds ({} when it has none, None
    when it cannot be read); reads the small ``evidence.json`` only."""
    if gallery_root is None:
        return {}
    try:
        held = jsonio.read(folder_of(gallery_root) / META_FILE)["sources"]
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return {source: frozenset(held[source].get("keys", ())) for source in SOURCES
            if isinstance(held.get(source), dict)}


def _measure(table: Mapping[str, Any], source: str, key: str) -> SourceMeasure:
    entry = table.get(source, {}).get(key)
    if not isinstance(entry, dict):
        return SourceMeasure(source, None, None, 0, 1.0)
    return SourceMeasure(source, entry["accuracy"], entry["majority"], int(entry["samples"]), float(entry["r"]))


def _stated(text: str | None) -> tuple[tuple[str, str], ...]:
    if not text:
        return ()
    from engine.retrieval.text.parser import parse

    return tuple(parse(text).attributes.items())


def step_ranking(step_id: int, query_text: str | None, view: str, covered: Mapping[str, frozenset[str]],
                 ranking: Mapping[str, Any] | None, table: Mapping[str, Any]) -> StepRanking:
    """What ranked a step on a footage gallery whose evidence table holds ``covered`` keys per source."""
    attributes = []
    for key, value in _stated(query_text):
        measures = tuple(_measure(table, source, key) for source in SOURCES if key in covered.get(source, ()))
        attributes.append(KeyEvidence(key, value, measures))
    likeness = ()
    if view == BIOMETRICS_VIEW:
        likeness = tuple(KeyEvidence(key, None, (_measure(table, "model", key),)) for key in BIOMETRIC_KEYS
                         if key in covered.get("model", ()))
    used = {m.source for entry in (*attributes, *likeness) for m in entry.measures}
    weight = None if ranking is None else ranking.get("attribute_weight")
    origin = "" if ranking is None else str(ranking.get("origin") or "")
    domain = FOOTAGE if ranking is None else ranking.get("domain")
    # the sources that hold evidence for a key the step ranked by (``step_trust`` takes every source the table
    # holds; a source without any of these keys added nothing to the scores)
    if view == BIOMETRICS_VIEW:
        trust = ranking_trust(domain, [m.source for entry in likeness for m in entry.measures], BIOMETRIC_KEYS)
    else:
        trust = ranking_trust(domain, used, [entry.key for entry in attributes])
    return StepRanking(step_id, tuple(s for s in SOURCES if s in used),
                       None if weight is None else float(weight), origin, tuple(attributes), likeness, trust)


def footage_rankings(steps: Sequence[Any], gallery_paths: Mapping[int, str],
                     rankings: Mapping[int, Mapping[str, Any] | None]) -> tuple[dict[int, StepRanking], list[str]]:
    """{step id: StepRanking} for every step (``step_id``, ``gallery_id``, ``query_text``, ``view``: a report step)
    on a gallery whose recorded domain is footage, and the problems met (an unreadable evidence table)."""
    table = calibration().table
    out: dict[int, StepRanking] = {}
    problems: list[str] = []
    covered_by: dict[int, dict[str, frozenset[str]] | None] = {}
    for step in steps:
        ranking = rankings.get(step.gallery_id)
        if ranking is None or ranking.get("domain") != FOOTAGE:
            continue
        if step.gallery_id not in covered_by:
            covered_by[step.gallery_id] = covered_keys(gallery_paths.get(step.gallery_id))
            if covered_by[step.gallery_id] is None:
                problems.append(f"the attribute evidence of gallery {gallery_paths.get(step.gallery_id)} cannot "
                                "be read: the sources that ranked its steps are not known")
        covered = covered_by[step.gallery_id]
        if covered is not None:
            out[step.step_id] = step_ranking(step.step_id, step.query_text, step.view, covered, ranking, table)
    return out, problems
