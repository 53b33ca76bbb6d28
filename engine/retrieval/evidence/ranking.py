"""The hybrid ranking's attribute term for a search step, and the explanation of one ranked item
(docs/methods.md §7: attribute probabilities per item, used by the hybrid ranking and its explanations).

    score(item) = similarity(item) + w · agreement(item)            (agreement: ``engine.retrieval.evidence.agreement``)

``GalleryEvidence`` is a gallery's evidence table matched to its rows (built once per gallery state and cached);
``AttributeTerm`` is one step's use of it: the query's stated attributes, the weight ``w``, the sources and
the required keys. ``AttributeTerm.scores(rows)`` gathers only the given candidate rows (cost ∝ candidates ×
stated attributes × sources); ``explain`` reads one item.

The weight depends on the model and on what the gallery holds: a checkpoint's ``metadata.json`` may record one
weight per gallery domain (``attribute_weights``: ``{"world": w, "footage": w}``, calibrated on the unseen
synthetic world and on the hand-labelled real people, docs/real-footage.md) and a fallback ``attribute_weight``.
Ingest records the gallery's domain and the checkpoint's weight for it in the gallery (``Gallery.ranking``);
a search uses, in this order, the step's weight, the session's, the gallery's recorded weight, the
checkpoint's, ``DEFAULT_ATTRIBUTE_WEIGHT`` (``engine.retrieval.search.session``).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engine.index import evidence_table as store
from engine.kernel.ontology import COLOR_KEYS, ONTOLOGY
from engine.retrieval.evidence import agreement as agree
from engine.retrieval.evidence import readings as grade
from engine.retrieval.evidence.reliability import Reliabilities, scale_confidence
from engine.retrieval.evidence.wording import explanation_line  # noqa: F401 - the explanation in words, importable here

#: w for checkpoints that record none, i.e. every checkpoint trained on the synthetic world only. Their learned
#: similarity carries little signal on real footage (on the hand-labelled real crops it ranks at chance), so
#: the attribute term gets a large share: agreement ∈ [−1, 1] against cosine similarities whose spread among
#: candidates is a few tenths. 0.5 is the largest weight of the sweep (0.05 … 4) that lowers the synthetic
#: MG-Eval separate mAP for none of the evidence sources (stage-1 checkpoint: 44.4 → pixels 45.8, model 53.6,
#: both 54.1; pixels alone fall below from 0.7 on, both keep rising to ≈ 2). bench/hybrid_synthetic.py and
#: bench/real_queries.py measure it; a checkpoint records its own value in metadata.json.
DEFAULT_ATTRIBUTE_WEIGHT = 0.5
METADATA_KEY = "attribute_weight"
DOMAIN_METADATA_KEY = "attribute_weights"
DEFAULT_SOURCES: tuple[str, ...] = store.SOURCES


def check_weight(value: object, what: str = "attribute weight") -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} must be a finite number ≥ 0, got {value!r}")
    return float(value)


def _metadata(checkpoint: str | Path | None) -> tuple[Path | None, dict[str, Any]]:
    from engine.retrieval.models.discovery import (
        checkpoint_metadata,  # the model stack loads only when a weight is read
    )

    return checkpoint_metadata(checkpoint)


def checkpoint_attribute_weight(checkpoint: str | Path | None, domain: str | None = None) -> float:
    """w a checkpoint folder's ``metadata.json`` records for galleries of ``domain`` (``attribute_weights``),
    else its ``attribute_weight``, else the default."""
    path, metadata = _metadata(checkpoint)
    by_domain = metadata.get(DOMAIN_METADATA_KEY)
    if domain is not None and isinstance(by_domain, dict) and by_domain.get(domain) is not None:
        return check_weight(by_domain[domain], f"{path}: {DOMAIN_METADATA_KEY}.{domain}")
    value = metadata.get(METADATA_KEY)
    return DEFAULT_ATTRIBUTE_WEIGHT if value is None else check_weight(value, f"{path}: {METADATA_KEY}")


def weight_origin(checkpoint: str | Path | None, domain: str) -> str:
    """Where ``checkpoint_attribute_weight(checkpoint, domain)`` comes from, in words (recorded in galleries)."""
    _, metadata = _metadata(checkpoint)
    by_domain = metadata.get(DOMAIN_METADATA_KEY)
    if isinstance(by_domain, dict) and by_domain.get(domain) is not None:
        return f"checkpoint calibration for {domain} galleries"
    if metadata.get(METADATA_KEY) is not None:
        return "checkpoint weight (no calibration per domain)"
    return "built-in default"


@dataclass(frozen=True)
class DomainWeights:
    """A checkpoint's attribute weight and its origin for each gallery domain (what ingest records)."""

    weights: Mapping[str, float]
    origins: Mapping[str, str]

    @classmethod
    def of_checkpoint(cls, checkpoint: str | Path | None) -> DomainWeights:
        from engine.index.store import GALLERY_DOMAINS

        return cls({d: checkpoint_attribute_weight(checkpoint, d) for d in GALLERY_DOMAINS},
                   {d: weight_origin(checkpoint, d) for d in GALLERY_DOMAINS})

    def for_domain(self, domain: str) -> tuple[float, str]:
        if domain not in self.weights:
            raise ValueError(f"no attribute weight for gallery domain {domain!r}; known: {sorted(self.weights)}")
        return float(self.weights[domain]), self.origins.get(domain, "given")


def check_sources(sources: Sequence[str]) -> tuple[str, ...]:
    picked = tuple(dict.fromkeys(sources))
    bad = [s for s in picked if s not in store.SOURCES]
    if not picked or bad:
        raise ValueError(f"attribute sources must be a non-empty selection of {list(store.SOURCES)}, got "
                         f"{list(sources)!r}")
    return picked


class GalleryEvidence:
    """A gallery's evidence table with ``evidence_row[gallery row]`` (−1: the item has no evidence).

    ``infrared[gallery row]`` marks infrared items: an infrared crop shows no colours, so no source's reading of a
    colour key counts for them (the checkpoint's heads still answer one; pixels and the pretrained network are
    not asked, ``engine.retrieval.evidence.items``). A colour word of a query thus counts for RGB items only."""

    def __init__(self, table: store.EvidenceTable, gallery_ids: Sequence[str],
                 infrared: np.ndarray | None = None) -> None:
        self.table = table
        self.evidence_row = table.row_map(gallery_ids)
        self.items_with_evidence = int((self.evidence_row >= 0).sum())
        self.infrared = None if infrared is None or not np.asarray(infrared).any() else \
            np.asarray(infrared, dtype=bool)
        if self.infrared is not None and self.infrared.shape != self.evidence_row.shape:
            raise ValueError(f"infrared needs one flag per gallery item: {self.evidence_row.size} items, "
                             f"{self.infrared.size} flags")

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(s for s in store.SOURCES if s in self.table.sources)

    def covered(self, sources: Sequence[str]) -> frozenset[str]:
        """Keys some item has evidence for from one of ``sources``."""
        return frozenset().union(*(self.table.covered(s) for s in sources if s in self.table.sources))

    def readings(self, rows: np.ndarray, attributes: Sequence[tuple[str, str]], sources: Sequence[str]
                 ) -> tuple[np.ndarray, np.ndarray]:
        """(p, c) float32 [len(rows), len(attributes), len(sources)]: probability of each stated value and the
        key's confidence per source; NaN where there is no evidence."""
        n, k = np.asarray(rows).shape[0], len(attributes)
        p = np.full((n, k, len(sources)), np.nan, dtype=np.float32)
        c = np.full_like(p, np.nan)
        if k == 0 or n == 0:
            return p, c
        evidence_rows = self.evidence_row[np.asarray(rows, dtype=np.int64)]
        columns = [store.COLUMN_OF[(key, value)] for key, value in attributes]
        columns += [store.CONFIDENCE_COLUMN[key] for key, _ in attributes]
        for s, source in enumerate(sources):
            if source not in self.table.sources:
                continue
            block = self.table.gather(source, evidence_rows, columns)
            p[:, :, s], c[:, :, s] = block[:, :k], block[:, k:]
        colours = [j for j, (key, _) in enumerate(attributes) if key in COLOR_KEYS]
        if self.infrared is not None and colours:
            dark = self.infrared[np.asarray(rows, dtype=np.int64)]
            p[np.ix_(dark, colours)] = np.nan
            c[np.ix_(dark, colours)] = np.nan
        return p, c


_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _state(gallery) -> tuple:
    try:
        stat = (store.folder_of(gallery.root) / store.META_FILE).stat()
        mark = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
    except FileNotFoundError:
        mark = None
    return mark, len(gallery), id(gallery.columns)


def _infrared(gallery) -> np.ndarray | None:
    """Per gallery row: is the item infrared (None: the gallery has none)."""
    columns = gallery.columns
    code = columns.modalities.lookup("ir")
    return None if code is None else np.asarray(columns.modality) == code


def evidence_for(gallery) -> GalleryEvidence | None:
    """The gallery's evidence (None when it has none), re-read only when the table or the gallery changed."""
    state = _state(gallery)
    cached = _CACHE.get(gallery)
    if cached is not None and cached[0] == state:
        return cached[1]
    table = store.EvidenceTable.read(gallery.root) if state[0] is not None else None
    found = None if table is None else GalleryEvidence(table, gallery.ids, _infrared(gallery))
    _CACHE[gallery] = (state, found)
    return found


@dataclass(frozen=True, eq=False)
class AttributeTerm:
    """One step's attribute term: ``attributes`` the query states (key, value), ``weight`` w, ``sources``,
    ``required`` keys, ``evidence`` the gallery's (None: none stored), ``reliability`` per source and key
    (``engine.retrieval.evidence.reliability``: scales each source's confidence; None: trust as stored)."""

    attributes: tuple[tuple[str, str], ...]
    weight: float
    sources: tuple[str, ...] = DEFAULT_SOURCES
    required: tuple[str, ...] = ()
    evidence: GalleryEvidence | None = field(default=None, repr=False)
    require_ratio: float = agree.REQUIRE_RATIO
    reliability: Reliabilities | None = field(default=None, repr=False)

    @property
    def covered(self) -> np.ndarray:
        """Per stated attribute: does the gallery hold evidence for its key (the set K of the agreement)."""
        keys = frozenset() if self.evidence is None else self.evidence.covered(self.sources)
        return np.asarray([key in keys for key, _ in self.attributes], dtype=bool)

    @property
    def active(self) -> bool:
        """Whether scoring needs the evidence at all (a weight and something to agree with, or a requirement)."""
        return bool(self.required) or (self.weight > 0 and bool(self.covered.any()))

    def per_key(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(a_k [n, K], pooled tempered probability [n, K], p [n, K, S], c [n, K, S]) for gallery rows."""
        n, k = np.asarray(rows).shape[0], len(self.attributes)
        if self.evidence is None or k == 0:
            nan = np.full((n, k), np.nan)
            empty = np.full((n, k, len(self.sources)), np.nan, dtype=np.float32)
            return nan, nan.copy(), empty, empty.copy()
        p, c = self.evidence.readings(rows, self.attributes, self.sources)
        c = scale_confidence(c, self.attributes, self.sources, self.reliability)
        pooled_p, pooled_c = agree.pool_sources(p, c)
        sizes = [len(ONTOLOGY.attributes[key]) for key, _ in self.attributes]
        a = np.stack([agree.key_agreement(pooled_p[:, j], pooled_c[:, j], size) for j, size in enumerate(sizes)],
                     axis=1)
        t = np.stack([agree.tempered_probability(pooled_p[:, j], pooled_c[:, j], size)
                      for j, size in enumerate(sizes)], axis=1)
        return a, t, p, c

    def scores(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(agreement [n] float64, failed a requirement [n] bool) for gallery ``rows``."""
        a, t, _, _ = self.per_key(rows)
        failed = np.zeros(a.shape[0], dtype=bool)
        for j, (key, _) in enumerate(self.attributes):
            if key in self.required:
                failed |= agree.fails_requirement(t[:, j], len(ONTOLOGY.attributes[key]), self.require_ratio)
        return agree.agreement(a, self.covered), failed

    def explain(self, row: int, score: float) -> dict[str, Any]:
        """Why gallery ``row`` got ``score``: similarity vs attribute contribution, and per stated attribute its
        agreement, status and each source's probability, confidence and most probable value."""
        return self.explain_rows(np.asarray([row]), np.asarray([score]), best=True)[0]

    def distributions(self, rows: np.ndarray) -> list[np.ndarray]:
        """Per stated attribute: float32 [len(rows), sources, |V_k|], each source's reading of every value of the
        key (NaN where it has none; what ``readings`` grades the stated value against)."""
        rows = np.asarray(rows, dtype=np.int64)
        out = []
        for key, _ in self.attributes:
            values = ONTOLOGY.attributes[key]
            block = np.full((rows.shape[0], len(self.sources), len(values)), np.nan, dtype=np.float32)
            if self.evidence is not None:
                evidence_rows = self.evidence.evidence_row[rows]
                columns = [store.COLUMN_OF[(key, value)] for value in values]
                for s, source in enumerate(self.sources):
                    if source in self.evidence.table.sources:
                        block[:, s] = self.evidence.table.gather(source, evidence_rows, columns)
            out.append(block)
        return out

    def explain_rows(self, rows: np.ndarray, scores: np.ndarray, *, best: bool = False) -> list[dict[str, Any]]:
        """``explain`` for several rows at once (one gather); ``best`` adds each source's most probable value,
        read from the item's whole evidence row. Each source's reading is graded against the stated value
        (``engine.retrieval.evidence.readings``: ``verdict``, ``reads``), and so is the attribute's ``status``."""
        rows = np.asarray(rows, dtype=np.int64)
        a, t, p, c = self.per_key(rows)
        dists = self.distributions(rows)
        totals = agree.agreement(a, self.covered)
        covered = self.covered
        out = []
        for i, (row, score) in enumerate(zip(rows.tolist(), np.asarray(scores, dtype=np.float64).tolist(),
                                             strict=True)):
            evidence_row = -1 if self.evidence is None else int(self.evidence.evidence_row[row])
            records = self.evidence.table.record(evidence_row) if best and evidence_row >= 0 else {}
            attributes = []
            for j, (key, value) in enumerate(self.attributes):
                sources = {}
                for s, source in enumerate(self.sources):
                    if math.isnan(float(c[i, j, s])):
                        continue
                    reading: dict[str, Any] = {"probability": round(float(p[i, j, s]), 4),
                                               "confidence": round(float(c[i, j, s]), 4)}
                    reading.update(grade.grade_reading(source, key, value, dists[j][i, s], float(c[i, j, s])))
                    found = records.get(source)
                    if found is not None and key in found.probabilities:
                        top = found.best(key)
                        reading.update(best=top, best_probability=round(found.probabilities[key][top], 4))
                    sources[source] = reading
                value_a = None if math.isnan(a[i, j]) else float(a[i, j])
                failed = key in self.required and bool(agree.fails_requirement(
                    t[i, j:j + 1], len(ONTOLOGY.attributes[key]), self.require_ratio)[0])
                attributes.append({"key": key, "value": value,
                                   "agreement": None if value_a is None else round(value_a, 4),
                                   "status": grade.overall_status({s: r["verdict"] for s, r in sources.items()}),
                                   "counted": bool(covered[j]),
                                   "required": key in self.required, "failed_requirement": failed,
                                   "sources": sources})
            contribution = self.weight * float(totals[i])
            out.append({
                "score": round(score, 6),
                "similarity": round(score - contribution, 6),
                "attribute_weight": self.weight,
                "agreement": round(float(totals[i]), 6),
                "attribute_contribution": round(contribution, 6),
                "attributes": attributes,
                "matched": [f"{x['key']}={x['value']}" for x in attributes if x["status"] == grade.MATCH],
                "mismatched": [f"{x['key']}={x['value']}" for x in attributes if x["status"] == grade.MISMATCH],
                "no_evidence": [f"{x['key']}={x['value']}" for x in attributes if x["status"] == grade.NO_EVIDENCE],
                "not_read": [f"{x['key']}={x['value']}" for x in attributes if x["status"] == grade.NOT_READ],
                "evidence": "none in this gallery" if self.evidence is None
                else ("none for this item" if evidence_row < 0 else "stored"),
            })
        return out
