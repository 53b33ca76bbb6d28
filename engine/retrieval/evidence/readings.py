"""Whether a source's evidence agrees with a stated attribute, graded against what the source actually read
(the ✓ / ✗ of explanations; docs/methods.md §7).

The ranking's agreement a_k (``engine.retrieval.evidence.agreement``) measures a stated value against chance (1/|V|):
a top read as grey with white at 0.2 still scores above chance for "white" (0.2 > 1/12). That is the right
quantity to add to a score, but not a verdict: both readers say grey. The grade here compares the stated value
with the source's own reading instead:

- values a source cannot tell apart form one group: values it gives shares of one reading by fixed prior shares
  (the attribute network's "a hat" split among cap, beanie, …; found by probing its mapping,
  ``pretrained.evidence_from_outputs``) and values tied in the item's reading (the pixels' even split of "a
  hat" among the hat types);
- ``agrees``: the stated value's group is the reading's most probable one, decisively (by ``DECISIVE_MARGIN``
  or ``DECISIVE_RATIO`` times the next), and the group is that value alone;
- ``group``: it is the most probable one but holds other values, so the source supports only "one of these"
  (its choice among them is a prior: not a reading of the value);
- ``disagrees``: another group is decisively more probable; ``undecided``: neither decisively;
- ``untrusted``: the source's confidence (after its reliability on the gallery's domain) is below
  ``MIN_CONFIDENCE``.

A stated attribute's ``status`` over its sources: "match" when some source agrees and none disagrees,
"mismatch" when some disagrees and none agrees, "unsure" when they disagree with each other or only undecided
readings exist, "not read" when the only support is a prior (group-only or untrusted readings), and "no
evidence" when no source has a reading.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

import numpy as np

from engine.kernel.ontology import ONTOLOGY

#: A reading decides only when its most probable group beats the other by at least this much probability,
DECISIVE_MARGIN = 0.1
#: or is at least this many times as probable (a value read as impossible among many equal others).
DECISIVE_RATIO = 2.0
#: Below this confidence (after reliability) a source's reading does not grade the attribute.
MIN_CONFIDENCE = 0.05
#: Probabilities this close count as tied (float16 storage).
TIE = 1e-3

AGREES, DISAGREES, UNDECIDED, GROUP, UNTRUSTED = "agrees", "disagrees", "undecided", "group", "untrusted"
MATCH, MISMATCH, UNSURE, NOT_READ, NO_EVIDENCE = "match", "mismatch", "unsure", "not read", "no evidence"
STATUSES: tuple[str, ...] = (MATCH, MISMATCH, UNSURE, NOT_READ, NO_EVIDENCE)


@lru_cache(maxsize=1)
def _network_groups() -> dict[str, tuple[frozenset[str], ...]]:
    """Per key: the groups of values the attribute network's mapping splits by fixed shares, found by reading
    the mapping at several outputs (two values share a group when their ratio never changes)."""
    from engine.perception.attributes.pretrained import OUTPUTS, evidence_from_outputs

    rng = np.random.default_rng(0)
    probes = [evidence_from_outputs(rng.uniform(0.05, 0.95, len(OUTPUTS))) for _ in range(6)]
    out: dict[str, tuple[frozenset[str], ...]] = {}
    for key in probes[0].probabilities:
        values = ONTOLOGY.attributes[key]
        table = np.asarray([[probe.probabilities[key][v] for v in values] for probe in probes])
        groups: list[set[str]] = []
        for j, value in enumerate(values):
            for group in groups:
                i = values.index(next(iter(group)))
                if np.allclose(table[:, j] * table[0, i], table[:, i] * table[0, j], rtol=1e-6, atol=1e-12):
                    group.add(value)
                    break
            else:
                groups.append({value})
        out[key] = tuple(frozenset(g) for g in groups if len(g) > 1)
    return out


def prior_groups(source: str, key: str) -> tuple[frozenset[str], ...]:
    """The groups of ``key``'s values that ``source`` splits by prior shares (it cannot tell them apart)."""
    return _network_groups().get(key, ()) if source == "pretrained" else ()


def group_of(source: str, key: str, value: str, probabilities: Sequence[float]) -> frozenset[str]:
    """The values ``source`` cannot tell apart from ``value`` in this reading (``probabilities`` over
    ``ONTOLOGY.attributes[key]``): its prior group, or the values tied with it (a positive probability)."""
    values = ONTOLOGY.attributes[key]
    for group in prior_groups(source, key):
        if value in group:
            return group
    p = float(probabilities[values.index(value)])
    if p <= TIE:
        return frozenset({value})
    return frozenset(v for v, q in zip(values, probabilities, strict=True) if abs(float(q) - p) <= TIE)


def _decides(first: float, second: float) -> bool:
    """Whether probability ``first`` beats ``second`` decisively (by the margin, or at least ``DECISIVE_RATIO``
    times)."""
    return first - second >= DECISIVE_MARGIN or (first > 0 and second * DECISIVE_RATIO <= first)


def grade_reading(source: str, key: str, value: str, probabilities: Sequence[float], confidence: float
                  ) -> dict[str, object]:
    """One source's reading of ``key`` graded against the stated ``value``: ``verdict`` (see the module),
    ``reads`` (the most probable value, or a group's values when the source reads only the group) and
    ``reads_probability`` (that value's or group's probability)."""
    values = ONTOLOGY.attributes[key]
    p = np.nan_to_num(np.asarray(probabilities, dtype=np.float64), nan=0.0)
    if p.shape != (len(values),):
        raise ValueError(f"a reading of {key} has {len(values)} probabilities, got {p.shape}")
    mine = group_of(source, key, value, p)
    groups = [mine, *(g for g in prior_groups(source, key) if not g & mine)]
    grouped = frozenset().union(*groups)
    groups += [frozenset({v}) for v in values if v not in grouped]
    mass = [float(sum(p[values.index(v)] for v in g)) for g in groups]
    order = sorted(range(len(groups)), key=lambda i: -mass[i])
    best = order[0]
    runner = mass[order[1]] if len(order) > 1 else 0.0
    top = groups[best]
    if len(top) == 1:
        reads: object = next(iter(top))
    else:  # a group: its values in ontology order
        reads = [v for v in values if v in top]
    if not confidence >= MIN_CONFIDENCE:
        verdict = UNTRUSTED
    elif best == 0 and _decides(mass[0], runner):
        verdict = AGREES if len(mine) == 1 else GROUP
    elif best != 0 and _decides(mass[best], mass[0]):
        verdict = DISAGREES
    else:
        verdict = UNDECIDED
    return {"verdict": verdict, "reads": reads, "reads_probability": round(mass[best], 4)}


def overall_status(verdicts: Mapping[str, str]) -> str:
    """A stated attribute's status from its sources' verdicts (source → verdict; see the module)."""
    found = set(verdicts.values())
    if not found:
        return NO_EVIDENCE
    agree, disagree = AGREES in found, DISAGREES in found
    if agree and not disagree:
        return MATCH
    if disagree and not agree:
        return MISMATCH
    if agree or UNDECIDED in found:
        return UNSURE
    return NOT_READ
