"""Carried objects as attribute evidence: which person a detected bag belongs to, and what a track's objects
say about ``carrying_type`` (the evidence source ``"objects"``).

A detector that also finds COCO backpacks, umbrellas, handbags and suitcases hands them over with the people
(``Detections.objects``: boxes x, y, w, h in frame pixels, scores, ontology ``kinds``).

**Assignment, per frame** (``assign_objects``). Each person box is expanded by :data:`EXPAND` (a share of its
width left and right, of its height above — an umbrella is held over the head — and below), because a bag
held at the side or pulled behind sticks out of a tight person box. An object may belong to a person when at
least :data:`MIN_OVERLAP` of the object's own area lies inside that expanded box. Among the people it may
belong to, it goes to exactly one: the largest share of the object inside the person's own (unexpanded) box,
then the largest share inside the expanded box, then the highest person score. An object no person qualifies
for is left unassigned. A person may get several objects; per kind only the best score of the frame counts.

**Evidence, per track** (``CarriedTally``), over the ``n`` observations of the person in frames where the
detector looked for objects (observations from a detector that finds no objects at all are not counted: no
object evidence is not the same as "carries nothing"). A detection's strength is
``q = min(1, score / SURE_SCORE)``; per observation, ``q_kind`` is the strength of that kind (0 when not seen)
and ``q_max`` the strongest kind's. Then

    b          = mean over observations of q_max               (how often and how strongly something was seen)
    P(kind)    = b · Σ q_kind / Σ_kinds Σ q_kind               (kinds share b by their summed strength)
    P(none)    = 1 − b
    confidence = n / (n + HALF_FRAMES) · (b + (1 − b) · NONE_TRUST)

The first factor grows with the frames seen (1 frame: 0.2, 4 frames: 0.5, 40 frames: 0.91); the second trusts
an object that was seen fully and an absence only :data:`NONE_TRUST` as much, because detectors miss bags
(occluded, side-on, small). So a backpack seen in most of 40 frames gives P(backpack) ≈ b and a confidence near
0.9·b; one weak sighting in 40 frames is nearly an absence; nothing seen in 40 frames gives P(none) = 1 at
confidence ≈ 0.23, which the hybrid ranking (``engine.retrieval.evidence.agreement``) turns into a small penalty for
"with a backpack" and a moderate reward for "carrying nothing". ``carrying_color`` is not read here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from engine.kernel.boxes import coverage_matrix
from engine.kernel.ontology import ONTOLOGY
from engine.perception.attributes.evidence import AttributeEvidence

if TYPE_CHECKING:
    from engine.perception.detection.detectors import CarriedObjects

KEY = "carrying_type"
NONE = "none"
#: Expansion of a person box as shares of its size: (left and right, above, below).
EXPAND: tuple[float, float, float] = (0.3, 0.3, 0.05)
#: Share of an object's area that must lie inside a person's expanded box for it to belong to that person.
MIN_OVERLAP = 0.5
#: A detection scoring at least this counts as fully seen (q = 1); weaker ones count in proportion.
SURE_SCORE = 0.5
#: Observations at which the frame-count factor of the confidence reaches one half.
HALF_FRAMES = 4.0
#: How much an absence is trusted relative to a sighting (detectors miss bags).
NONE_TRUST = 0.25


class CarriedObjectsError(ValueError):
    """Person boxes or carried objects that cannot be assigned (names the input and the problem)."""


def expand_boxes(boxes: np.ndarray) -> np.ndarray:
    """Person boxes (x, y, w, h) grown by :data:`EXPAND`."""
    side, above, below = EXPAND
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    return np.stack([boxes[:, 0] - side * boxes[:, 2], boxes[:, 1] - above * boxes[:, 3],
                     boxes[:, 2] * (1 + 2 * side), boxes[:, 3] * (1 + above + below)], axis=1)


def _checked(name: str, boxes: np.ndarray) -> np.ndarray:
    boxes = np.asarray(boxes, dtype=np.float64)
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise CarriedObjectsError(f"{name} must be an [N, 4] array of (x, y, w, h) boxes, got shape {boxes.shape}")
    if not np.isfinite(boxes).all() or (boxes[:, 2:] < 0).any():
        raise CarriedObjectsError(f"{name} must be finite boxes with width and height ≥ 0")
    return boxes


def assign_objects(person_boxes: np.ndarray, object_boxes: np.ndarray,
                   person_scores: np.ndarray | None = None) -> np.ndarray:
    """int64 [M]: the person (row of ``person_boxes`` [N, 4]) each object (``object_boxes`` [M, 4]) belongs to,
    −1 when none (rule in the module docstring). ``person_scores`` [N] break exact ties (default: all equal)."""
    people = _checked("person boxes", person_boxes)
    objects = _checked("object boxes", object_boxes)
    owners = np.full(objects.shape[0], -1, dtype=np.int64)
    if not len(people) or not len(objects):
        return owners
    scores = np.zeros(len(people)) if person_scores is None else np.asarray(person_scores, dtype=np.float64)
    if scores.shape != (len(people),):
        raise CarriedObjectsError(f"person scores must be one per person box ({len(people)}), got shape "
                                  f"{scores.shape}")
    inside = coverage_matrix(objects, people)
    near = coverage_matrix(objects, expand_boxes(people))
    for j in range(len(objects)):
        eligible = np.flatnonzero(near[j] >= MIN_OVERLAP)
        if eligible.size:
            owners[j] = max(eligible.tolist(), key=lambda i: (inside[j, i], near[j, i], scores[i]))
    return owners


def objects_by_person(person_boxes: np.ndarray, objects: CarriedObjects | None,
                      person_scores: np.ndarray | None = None) -> list[dict[str, float]] | None:
    """Per person box, the kinds of object assigned to it this frame with their best score (``{}``: nothing);
    ``None`` when the detector gave no objects at all (``objects`` is None)."""
    if objects is None:
        return None
    people = np.asarray(person_boxes).reshape(-1, 4)
    found: list[dict[str, float]] = [{} for _ in range(len(people))]
    owners = assign_objects(people, objects.boxes, person_scores)
    for owner, kind, score in zip(owners.tolist(), objects.kinds, objects.scores.tolist(), strict=True):
        if owner >= 0:
            found[owner][kind] = max(found[owner].get(kind, 0.0), float(score))
    return found


def strength(score: float) -> float:
    """q = min(1, score / SURE_SCORE), clipped at 0."""
    return min(1.0, max(0.0, float(score)) / SURE_SCORE)


@dataclass
class CarriedTally:
    """The carried objects of one track over its observations (``observe`` per observation, ``evidence`` at
    the end; rule in the module docstring)."""

    frames: int = 0
    presence: float = 0.0  # Σ over observations of q_max
    strengths: dict[str, float] = field(default_factory=dict)  # kind → Σ over observations of q_kind
    hits: dict[str, int] = field(default_factory=dict)  # kind → observations it was seen in

    def observe(self, seen: Mapping[str, float] | None) -> None:
        """One observation: kind → best score of the objects assigned to the person (``{}``: none seen);
        ``None`` when the detector looked for no objects (the observation is not counted)."""
        if seen is None:
            return
        self.frames += 1
        unknown = sorted(set(seen) - (set(ONTOLOGY.attributes[KEY]) - {NONE}))
        if unknown:
            raise CarriedObjectsError(f"carried object kinds {unknown} are not {KEY} values of the ontology "
                                      f"other than {NONE!r}")
        strongest = 0.0
        for kind, score in seen.items():
            q = strength(score)
            self.strengths[kind] = self.strengths.get(kind, 0.0) + q
            self.hits[kind] = self.hits.get(kind, 0) + 1
            strongest = max(strongest, q)
        self.presence += strongest

    def evidence(self) -> AttributeEvidence | None:
        """``carrying_type`` evidence, or None when no observation looked for objects."""
        if self.frames == 0:
            return None
        n = self.frames
        seen = self.presence / n
        total = sum(self.strengths.values())
        dist = dict.fromkeys(ONTOLOGY.attributes[KEY], 0.0)
        dist[NONE] = 1.0 - seen
        for kind, summed in self.strengths.items():
            if total > 0:
                dist[kind] += seen * summed / total
        confidence = n / (n + HALF_FRAMES) * (seen + (1.0 - seen) * NONE_TRUST)
        info = {"source": "carried objects", "frames": n, "hits": dict(self.hits),
                "mean_strength": {k: round(v / self.hits[k], 4) for k, v in self.strengths.items()}}
        return AttributeEvidence({KEY: dist}, {KEY: float(min(1.0, confidence))}, info=info)
