"""How far a step's scores can be trusted on the gallery it ranked: which evidence sources ranked it and how
reliable each measured on hand-labelled real crops (``resources/calibration/footage_calibration.json``,
docs/pretrained-models.md, "Trusting each source as far as it measured"), with a plain warning where the
calibration says the scores are weak. For the results header, the detail pane and reports alike:

- ``step_trust(step, gallery)``: for a ``StepResult``;
- ``explanation_trust(explanation, gallery)``: for one item's explanation (``StepResult.explain``);
- ``ranking_trust(domain, sources, keys)``: the same from its parts.

Each returns a ``RankingTrust`` (structured numbers and ``sentence`` / ``warning`` in words), or None when the
gallery records no domain (made before domains were recorded). A source reads a key "weakly" when its
measured accuracy beats always guessing the commonest true value by less than ``WEAK_MARGIN``; the warning
names every ranking source that reads most of the stated keys weakly, or all of them together no better than
that margin over guessing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.index.evidence_table import SOURCES
from engine.kernel.ontology import BIOMETRIC_KEYS, key_label
from engine.retrieval.evidence.reliability import footage_calibration, footage_measurements, measured_on
from engine.retrieval.evidence.wording import source_label

FOOTAGE = "footage"
#: Accuracy that beats always guessing the commonest value by less than this counts as weak.
WEAK_MARGIN = 0.05


@dataclass(frozen=True)
class KeyTrust:
    """One source's measurement on one key: ``accuracy`` on the labelled crops, ``majority`` (the accuracy of
    always guessing the commonest true value), ``samples`` crops, ``r`` the reliability the ranking applies."""

    source: str
    key: str
    accuracy: float
    majority: float
    samples: int
    r: float

    @property
    def weak(self) -> bool:
        return self.accuracy < self.majority + WEAK_MARGIN or self.r <= 0.0


@dataclass(frozen=True)
class SourceTrust:
    """A ranking source and its measurements on the keys that matter (empty: not measured on them);
    ``auc``: the attribute network's yes/no outputs behind those keys, output → AUC."""

    source: str
    keys: tuple[KeyTrust, ...]
    auc: Mapping[str, float]

    @property
    def measured(self) -> bool:
        return bool(self.keys)

    @property
    def accuracy(self) -> float | None:
        return None if not self.keys else sum(k.accuracy for k in self.keys) / len(self.keys)

    @property
    def majority(self) -> float | None:
        return None if not self.keys else sum(k.majority for k in self.keys) / len(self.keys)

    @property
    def weak(self) -> bool:
        """Most of the measured keys are read weakly, or on average the source beats guessing the commonest
        value by less than ``WEAK_MARGIN``."""
        if not self.measured:
            return False
        return 2 * sum(k.weak for k in self.keys) > len(self.keys) or self.accuracy < self.majority + WEAK_MARGIN


@dataclass(frozen=True)
class RankingTrust:
    """``domain`` of the gallery, the ``sources`` that ranked it, the stated ``keys``, the calibration's
    ``crops`` and ``people``; ``weak`` when some source reads most keys weakly; ``sentence`` and ``warning``
    (None when not weak) in words."""

    domain: str
    sources: tuple[SourceTrust, ...]
    keys: tuple[str, ...]
    crops: int | None
    people: int | None
    weak: bool
    sentence: str
    warning: str | None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (reports)."""
        return {"domain": self.domain, "keys": list(self.keys), "crops": self.crops, "people": self.people,
                "weak": self.weak, "sentence": self.sentence, "warning": self.warning,
                "sources": [{"source": s.source, "accuracy": s.accuracy, "majority": s.majority, "weak": s.weak,
                             "auc": dict(s.auc),
                             "keys": [{"key": k.key, "accuracy": k.accuracy, "majority": k.majority,
                                       "samples": k.samples, "r": k.r, "weak": k.weak} for k in s.keys]}
                            for s in self.sources]}


def _network_auc(keys: Sequence[str]) -> dict[str, float]:
    """The attribute network's outputs behind ``keys`` and their measured AUC (outputs with one)."""
    from engine.perception.attributes.pretrained import CALIBRATION_KEY, OUTPUT_TRUTH

    _, data = footage_calibration()
    platt = (data.get(CALIBRATION_KEY) or {}).get("platt") or {}
    out = {}
    for output, (key, _) in OUTPUT_TRUTH.items():
        auc = (platt.get(output) or {}).get("auc")
        if key in keys and isinstance(auc, int | float) and not isinstance(auc, bool):
            out[output] = float(auc)
    return out


def _percent(x: float) -> str:
    return f"{100 * x:.0f}%"


def _names(sources: Iterable[SourceTrust]) -> str:
    names = [f"the {source_label(s.source)}" for s in sources]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def ranking_trust(domain: str | None, sources: Iterable[str], keys: Iterable[str]) -> RankingTrust | None:
    """How far a ranking by attribute evidence from ``sources`` on stated ``keys`` can be trusted in a gallery
    of ``domain`` (see the module); None without a domain."""
    if domain is None:
        return None
    picked = tuple(s for s in SOURCES if s in set(sources))
    keys = tuple(dict.fromkeys(keys))
    if domain != FOOTAGE:
        used = f" and the attribute evidence of {_names(SourceTrust(s, (), {}) for s in picked)}" if picked else ""
        return RankingTrust(domain, tuple(SourceTrust(s, (), {}) for s in picked), keys, None, None, False,
                            f"Ranked by similarity{used} on a built {domain} gallery: the people the checkpoint "
                            "was trained on, so its sources are trusted as they report.", None)
    measurements = footage_measurements()
    found = []
    for source in picked:
        measured = measurements.get(source, {})
        rows = tuple(KeyTrust(source, key, **measured[key]) for key in keys if key in measured)
        found.append(SourceTrust(source, rows, _network_auc(keys) if source == "pretrained" else {}))
    about = measured_on()
    crops, people = about.get("crops"), about.get("people")
    if not picked:
        return RankingTrust(domain, (), keys, crops, people, False,
                            "Ranked by similarity alone on real footage: no attribute evidence applied.", None)
    parts = []
    for trust in found:
        if not trust.measured:
            parts.append(f"the {source_label(trust.source)}: not measured on these attributes")
            continue
        auc = ""
        if trust.auc:
            low, high = min(trust.auc.values()), max(trust.auc.values())
            auc = f", AUC {low:.2f}" if low == high else f", AUC {low:.2f}–{high:.2f}"
        parts.append(f"the {source_label(trust.source)} right {_percent(trust.accuracy)} of the time "
                     f"(guessing the commonest value: {_percent(trust.majority)}{auc})")
    on = f" on {crops} hand-labelled real crops of {people} people" if crops and people else \
        " on hand-labelled real crops"
    stated = ", ".join(key_label(k) for k in keys)
    sentence = (f"Ranked on real footage by similarity and the attribute evidence of {_names(found)}. "
                f"Measured{on} for {stated or 'the stated attributes'}: " + "; ".join(parts) + ".")
    weak = tuple(t for t in found if t.weak)
    warning = None
    if weak:
        warning = (f"Scores on real footage are weak: {_names(weak)} read these attributes little or no better "
                   "than guessing the commonest value, so treat the order as a hint and check each candidate.")
    return RankingTrust(domain, tuple(found), keys, crops, people, bool(weak), sentence, warning)


def gallery_domain(gallery) -> str | None:
    """The domain a gallery records (``Gallery.ranking``): "world", "footage", or None when none is recorded."""
    recorded = getattr(gallery, "ranking", None)
    return None if not recorded else recorded.get("domain")


def step_trust(step, gallery) -> RankingTrust | None:
    """``ranking_trust`` for a ``StepResult`` over ``gallery``: the step's sources that the gallery's evidence
    holds, on the attributes the query states (a find similar across an outfit change: the model heads on the
    biometric keys)."""
    term = step.attribute_term
    if term is None:
        return ranking_trust(gallery_domain(gallery), (), ())
    evidence = getattr(term, "evidence", None)
    held = () if evidence is None else evidence.sources
    if getattr(term, "attributes", None) is None:  # the biometric term
        from engine.retrieval.search.outfit_change import SOURCE

        return ranking_trust(gallery_domain(gallery), [SOURCE] if SOURCE in held else [], BIOMETRIC_KEYS)
    stated = [key for key, _ in term.attributes]
    sources = [s for s in term.sources if s in held] if stated else []
    return ranking_trust(gallery_domain(gallery), sources, stated)


def explanation_trust(explanation: Mapping[str, Any], gallery) -> RankingTrust | None:
    """``ranking_trust`` for one explanation (``StepResult.explain``): the sources that read the item's stated
    attributes, on those attributes."""
    entries = explanation.get("attributes") or []
    sources = {source for entry in entries for source in entry.get("sources", {})}
    return ranking_trust(gallery_domain(gallery), sources, [entry["key"] for entry in entries])
