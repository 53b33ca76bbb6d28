"""Find similar when the person may have changed clothes: embedding plus biometric likeness (docs/methods.md §8).

A find-similar step normally ranks by the example's embedding, which on the synthetic world mostly encodes
the outfit: across an outfit change it finds the same person first for 4 % of queries. This step adds the
likeness (``engine.retrieval.evidence.likeness``) of the example's and each candidate's stored model evidence (the
checkpoint's attribute heads, computed at ingest) on the attributes a change of clothes leaves as they were
(``BIOMETRIC_KEYS``; without the colour keys when the example or the candidate is an infrared image):

    score = (cos(v_example, v_item) + λ · likeness) / (1 + λ)          v: ``similarity_view`` of the gallery

so that sightings in the same clothes stay near the top while sightings in other clothes rise. v is the
gallery's ``appearance`` view when it has one (footage and crops: the shipped re-identification network, which
finds the same person on real crops far better than the checkpoint), else its ``rgb`` view. λ =
``LIKENESS_WEIGHT``, the grid value (0, 1, 2, 4, 8, 16, ∞) with the best mean any-time mAP over galleries that
hold both kinds of sighting on a calibration world (docs/training-notes.md, "Find similar across an outfit
change"). Candidates without model evidence get likeness 0 and say so in their explanation.

``BiometricTerm`` is built once per step; ``likeness(rows)`` gathers the candidates' evidence rows only,
``scores`` mixes it with their similarities, and ``explain_rows`` gives explanations of the same form as the
attribute term's (``engine.retrieval.evidence.ranking``) with ``rule`` set to ``RULE_NAME``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from engine.index import evidence_table as store
from engine.kernel.ontology import BIOMETRIC_KEYS, ONTOLOGY
from engine.perception.appearance.views import APPEARANCE_VIEW
from engine.retrieval.encoding.views import IMAGE_QUERY_VIEW
from engine.retrieval.evidence import agreement as agree
from engine.retrieval.evidence import readings as grade
from engine.retrieval.evidence.likeness import (
    OUTFIT_CHANGE_WEIGHT,
    consecutive_columns,
    key_score,
    outfit_change_keys,
    same_value,
    with_similarity,
)
from engine.retrieval.evidence.ranking import GalleryEvidence
from engine.retrieval.search.errors import QueryInputError

SOURCE = "model"
RULE_NAME = "biometrics"
#: λ: the likeness's weight against the embedding's cosine (see the module docstring).
LIKENESS_WEIGHT = OUTFIT_CHANGE_WEIGHT
#: The views whose cosine the score mixes in, in order of preference (λ was calibrated with ``rgb``).
SIMILARITY_VIEWS: tuple[str, ...] = (APPEARANCE_VIEW, IMAGE_QUERY_VIEW)


def similarity_view(available) -> str:
    """The first of ``SIMILARITY_VIEWS`` the gallery has (``GalleryMismatchError`` is the router's to raise)."""
    return next((view for view in SIMILARITY_VIEWS if view in available), IMAGE_QUERY_VIEW)
IR_MODALITY = "ir"
#: Every (key, value) column of the biometric keys in the evidence table, key by key.
_COLUMNS = [store.COLUMN_OF[(key, value)] for key in BIOMETRIC_KEYS for value in ONTOLOGY.attributes[key]]
_CONFIDENCE = [store.CONFIDENCE_COLUMN[key] for key in BIOMETRIC_KEYS]
_SPANS = consecutive_columns(BIOMETRIC_KEYS)
_WITHOUT_COLOUR = np.asarray([key in outfit_change_keys(infrared=True) for key in BIOMETRIC_KEYS])


def _likeness(a: np.ndarray, used: np.ndarray) -> np.ndarray:
    """Mean key score over the keys that count and have readings (0 where none has)."""
    counted = used & ~np.isnan(a)
    total = np.where(counted, key_score(np.nan_to_num(a)), 0.0).sum(axis=1)
    count = counted.sum(axis=1)
    return np.where(count > 0, total / np.maximum(count, 1), 0.0)


@dataclass(frozen=True, eq=False)
class BiometricTerm:
    """One outfit-change step: the example's gallery row, the gallery's evidence and the modality code of
    every gallery row (``ir_code``: the code of infrared items, None when the gallery has none)."""

    example: int
    evidence: GalleryEvidence = field(repr=False)
    modality: np.ndarray = field(repr=False)
    ir_code: int | None = None

    @classmethod
    def of_gallery(cls, gallery, evidence: GalleryEvidence | None, example_id: str) -> BiometricTerm:
        """The term for ``example_id``, or ``QueryInputError`` when the gallery or the example has no model
        evidence to read biometrics from."""
        if evidence is None or SOURCE not in evidence.table.sources:
            raise QueryInputError(f"find similar across an outfit change reads the checkpoint's attribute heads, and "
                                  f"the gallery {gallery.root} has no model evidence (compute it with "
                                  f"`lineup gallery rebuild --attributes --checkpoint PATH`)")
        row = gallery.row(example_id)
        term = cls(row, evidence, gallery.columns.modality, gallery.columns.modalities.lookup(IR_MODALITY))
        if np.isnan(term._readings(np.asarray([row]))).all():
            raise QueryInputError(f"example item {example_id!r} has no model evidence: find similar across an "
                                  f"outfit change cannot read its biometrics (rebuild the gallery's attributes)")
        return term

    #: the attribute term's interface: no stated attributes, no weight, nothing required
    weight: ClassVar[float] = 0.0
    required: ClassVar[tuple[str, ...]] = ()

    def _readings(self, rows: np.ndarray) -> np.ndarray:
        return self.evidence.table.gather(SOURCE, self.evidence.evidence_row[rows], _COLUMNS + _CONFIDENCE)

    def _is_ir(self, rows: np.ndarray) -> np.ndarray:
        if self.ir_code is None:
            return np.zeros(rows.shape[0], dtype=bool)
        return self.modality[rows] == self.ir_code

    def per_key(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(a_k [n, K] probability of the same value, used [n, K] keys that count, candidate readings
        [n, columns + confidences], example readings [columns + confidences]) for gallery ``rows``."""
        rows = np.asarray(rows, dtype=np.int64)
        mine = self._readings(np.asarray([self.example]))
        theirs = self._readings(rows)
        width = len(_COLUMNS)
        a = same_value(mine[:, :width], theirs[:, :width], _SPANS)[:, 0, :].T
        used = np.broadcast_to(_WITHOUT_COLOUR, a.shape).copy()
        if not self._is_ir(np.asarray([self.example]))[0]:
            used[~self._is_ir(rows)] = True
        return a, used, theirs, mine[0]

    def scores(self, rows: np.ndarray, similarity: np.ndarray) -> np.ndarray:
        """float32 [n] step scores of gallery ``rows`` given their cosine ``similarity`` to the example."""
        return with_similarity(similarity, self.likeness(rows), LIKENESS_WEIGHT).astype(np.float32)

    def likeness(self, rows: np.ndarray) -> np.ndarray:
        """float64 [n] biometric likeness of each candidate to the example, in [0, 1] (0 without evidence)."""
        a, used, _, _ = self.per_key(rows)
        return _likeness(a, used)

    def explain(self, row: int, score: float) -> dict[str, Any]:
        return self.explain_rows(np.asarray([row]), np.asarray([score]))[0]

    def explain_rows(self, rows: np.ndarray, scores: np.ndarray, *, best: bool = True) -> list[dict[str, Any]]:
        """Per row: its score split into similarity and likeness, and per biometric key the example's most
        probable value, the candidate's probability of it and its own most probable value, and the key's
        status graded against the candidate's own reading (``engine.retrieval.evidence.readings``), as the attribute
        term grades a key. ``best`` is the attribute term's switch; the most probable values are
        always given here."""
        rows = np.asarray(rows, dtype=np.int64)
        a, used, theirs, mine = self.per_key(rows)
        likeness = _likeness(a, used)
        weight = LIKENESS_WEIGHT
        width = len(_COLUMNS)
        out = []
        for i, score in enumerate(np.asarray(scores, dtype=np.float64).tolist()):
            attributes = []
            for k, key in enumerate(BIOMETRIC_KEYS):
                values = ONTOLOGY.attributes[key]
                example_p = mine[_SPANS[k]]
                candidate_p = theirs[i, _SPANS[k]]
                shown = values[int(np.argmax(example_p))] if not np.isnan(example_p).all() else None
                sources = {}
                if not np.isnan(candidate_p).all() and shown is not None:
                    top = int(np.argmax(candidate_p))
                    confidence = float(theirs[i, width + k])
                    sources[SOURCE] = {"probability": round(float(candidate_p[values.index(shown)]), 4),
                                       "confidence": round(confidence, 4),
                                       "best": values[top], "best_probability": round(float(candidate_p[top]), 4),
                                       **grade.grade_reading(SOURCE, key, shown, candidate_p, confidence)}
                value_a = None if math.isnan(a[i, k]) or not used[i, k] else \
                    float(agree.key_agreement(a[i, k], 1.0, len(values)))
                status = grade.overall_status({s: r["verdict"] for s, r in sources.items()})
                attributes.append({"key": key, "value": shown or "unknown",
                                   "agreement": None if value_a is None else round(value_a, 4),
                                   "status": status if value_a is not None else grade.NO_EVIDENCE,
                                   "counted": bool(used[i, k]),
                                   "required": False, "failed_requirement": False, "sources": sources})
            has_evidence = not np.isnan(theirs[i, :width]).all()
            out.append({
                "rule": RULE_NAME,
                "score": round(score, 6),
                "similarity": round((1 + weight) * score - weight * float(likeness[i]), 6),
                "likeness": round(float(likeness[i]), 6),
                "likeness_weight": weight,
                "attribute_weight": 0.0,
                "agreement": 0.0,
                "attribute_contribution": 0.0,
                "attributes": attributes,
                "matched": [f"{x['key']}={x['value']}" for x in attributes if x["status"] == "match"],
                "mismatched": [f"{x['key']}={x['value']}" for x in attributes if x["status"] == "mismatch"],
                "no_evidence": [f"{x['key']}={x['value']}" for x in attributes if x["status"] == "no evidence"],
                "evidence": "stored" if has_evidence else "none for this item",
            })
        return out
