"""Scoring carried-objects evidence (``engine.perception.attributes.objects``) against ground-truth ``carrying_type``,
given any detector whose ``Detections`` carry ``objects``.

- Real footage (:func:`labelled_carrying`): the hand-labelled people of ``people.json`` (``tests/data/footage``).
  The people are the labelled reference boxes (not the detector's person boxes, so a person the detector
  misses is still scored); each reference frame is read once and run through the detector (reset per clip,
  frames in order: meant for stateless detectors, which are the ones that find objects); the detector's objects
  are assigned among all the people labelled in that frame, and each person's reference frames are tallied as
  the observations of one track.
- Synthetic world (:func:`world_carrying`): every RGB HR image of a built world's manifest is one person
  filling the image (the person box is the whole image); scored per image (one observation) and per outfit
  (its images tallied as one track), against the manifest's ``carrying_type``.

:func:`score_carrying` turns rows into top-1 accuracy, coverage, false alarms (truth ``none``, evidence names
an object) and object recall (truth an object, evidence names that object), with a confusion count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from engine.kernel import jsonio
from engine.lab.evaluation.attribute_accuracy import labelled_clips, read_frames
from engine.perception.attributes.evidence import AttributeEvidence
from engine.perception.attributes.objects import KEY, NONE, CarriedTally, objects_by_person


@dataclass(frozen=True)
class CarriedRow:
    """One scored person (or image, or outfit): its truth and what the objects evidence says."""

    name: str
    truth: str
    predicted: str | None  # None: no objects evidence (the detector looked for no objects)
    probability_of_truth: float | None
    confidence: float | None
    frames: int
    hits: dict[str, int]

    @classmethod
    def of(cls, name: str, truth: str, evidence: AttributeEvidence | None) -> CarriedRow:
        if evidence is None:
            return cls(name, truth, None, None, None, 0, {})
        dist = evidence.probabilities[KEY]
        return cls(name, truth, evidence.best(KEY), round(dist.get(truth, 0.0), 4),
                   round(evidence.confidence[KEY], 4), int(evidence.info.get("frames", 0)),
                   dict(evidence.info.get("hits", {})))

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def score_carrying(rows: Iterable[CarriedRow]) -> dict[str, Any]:
    """{"n", "scored", "coverage", "accuracy", "false_alarm_rate", "object_recall", "carrying", "not_carrying",
    "confusion"}: accuracy is top-1 over the rows with evidence; false alarms over scored rows whose truth is
    ``none``; object recall over scored rows whose truth is an object (None where there are no such rows)."""
    rows = list(rows)
    scored = [r for r in rows if r.predicted is not None]
    empty = [r for r in scored if r.truth == NONE]
    carrying = [r for r in scored if r.truth != NONE]

    def share(hits: int, total: int) -> float | None:
        return hits / total if total else None

    return {"n": len(rows), "scored": len(scored), "coverage": share(len(scored), len(rows)),
            "accuracy": share(sum(r.predicted == r.truth for r in scored), len(scored)),
            "false_alarm_rate": share(sum(r.predicted != NONE for r in empty), len(empty)),
            "object_recall": share(sum(r.predicted == r.truth for r in carrying), len(carrying)),
            "carrying": len(carrying), "not_carrying": len(empty),
            "confusion": {f"{t}->{p}": n for (t, p), n in sorted(Counter((r.truth, r.predicted)
                                                                          for r in scored).items())}}


def labelled_carrying(people_json: str | Path, footage_dir: str | Path, detector,
                      clips: Collection[str] | None = None) -> list[CarriedRow]:
    """One row per labelled person (of ``clips`` only, when given) whose attributes state ``carrying_type``
    (method in the module docstring)."""
    rows = []
    footage_dir = Path(footage_dir)
    for clip, people in labelled_clips(people_json, clips).items():
        by_frame: dict[int, list[tuple[str, list[float]]]] = {}
        for pid, person in people.items():
            for ref in person["boxes"]:
                by_frame.setdefault(int(ref["frame"]), []).append((pid, [float(v) for v in ref["box"]]))
        frames = read_frames(footage_dir / clip, set(by_frame))
        detector.reset()
        tallies = {pid: CarriedTally() for pid in people}
        for index in sorted(frames):
            found = detector.detect(frames[index])
            labelled = by_frame[index]
            seen = objects_by_person(np.array([box for _, box in labelled], np.float32), found.objects)
            for k, (pid, _) in enumerate(labelled):
                tallies[pid].observe(None if seen is None else seen[k])
        for pid, person in people.items():
            truth = person["attributes"].get(KEY)
            if truth is not None:
                rows.append(CarriedRow.of(f"{clip}:{pid}", truth, tallies[pid].evidence()))
    return rows


def _manifest(world: Path, limit: int | None) -> list[dict]:
    path = world / "manifest.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"no manifest at {path}; build a world first (lineup world build --out {world} ...)")
    with open(path, "rb") as fh:
        records = [jsonio.loads(line, f"{path} line {number}", expect=dict)
                   for number, line in enumerate(fh, start=1) if line.strip()]
    records = [r for r in records if r["modality"] == "rgb" and r["resolution"] == "HR"]
    return records[:limit] if limit else records


def world_carrying(world: str | Path, detector, limit: int | None = None) -> dict[str, list[CarriedRow]]:
    """{"image": one row per RGB HR image, "outfit": one row per (identity, outfit) over its images}."""
    world = Path(world)
    per_image, outfits, truths = [], {}, {}
    detector.reset()
    for record in _manifest(world, limit):
        image = cv2.imread(str(world / record["image"]), cv2.IMREAD_COLOR)
        if image is None:
            raise OSError(f"cannot read {world / record['image']}")
        height, width = image.shape[:2]
        found = detector.detect(image)
        seen = objects_by_person(np.array([[0, 0, width, height]], np.float32), found.objects)
        truth = record["attributes"][KEY]
        single = CarriedTally()
        single.observe(None if seen is None else seen[0])
        per_image.append(CarriedRow.of(record["image"], truth, single.evidence()))
        outfit = f"{record['identity']}/{record.get('outfit', 0)}"
        outfits.setdefault(outfit, CarriedTally()).observe(None if seen is None else seen[0])
        truths[outfit] = truth
    return {"image": per_image,
            "outfit": [CarriedRow.of(name, truths[name], tally.evidence()) for name, tally in outfits.items()]}


def score_table(groups: Mapping[str, list[CarriedRow]]) -> dict[str, dict[str, Any]]:
    """``score_carrying`` of each group of rows."""
    return {name: score_carrying(rows) for name, rows in groups.items()}
