"""Scoring attribute evidence against ground truth, and reading the hand-labelled real footage.

Accuracy of an attribute is top-1 agreement over the samples whose truth states it and whose evidence has
it (``coverage`` = the share of those truths that got evidence at all). ``hat_type`` is scored as hat
presence (pixels tell a hat from none, not a cap from a beanie): truth "none" vs anything else, prediction
``P(none) < 0.5``. ``hat_color`` is scored only where the truth has a hat.

Real footage: ``people.json`` (``tests/data/footage``) lists, per clip and person, canonical attributes
and reference boxes ``{"frame": i, "box": [x, y, w, h]}`` (frame index in ``cv2.VideoCapture`` order).
:func:`footage_samples` yields one crop per box with its frame and, when asked, a foreground mask: ``"ingest"``,
the one video ingest stores (the fused detector's, run over the clip as ingest runs it), or ``"mog2"``, a
``cv2.createBackgroundSubtractorMOG2`` model learned over the whole clip first (a best case: it has seen the
future).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from engine.kernel import jsonio
from engine.perception.attributes.evidence import AttributeEvidence

SCORED: tuple[str, ...] = ("top_color", "bottom_color", "hair_color", "hat_type", "hat_color", "top_length",
                           "bottom_length")
#: What the model's heads are scored on besides: the labelled biometrics that find-similar across an outfit
#: change reads (the pixel reader does not read them).
HEAD_SCORED: tuple[str, ...] = SCORED + ("gender", "hairstyle")
MOG2_PASSES = 2
MOG2_BACKGROUND_RATIO = 0.7


def truth_value(attributes: Mapping[str, str], key: str) -> str | None:
    """The value an attribute is scored against (hat presence for ``hat_type``), ``None`` if not scored."""
    value = attributes.get(key)
    if value is None:
        return None
    if key == "hat_type":
        return "none" if value == "none" else "hat"
    if key == "hat_color" and attributes.get("hat_type", "none") == "none":
        return None
    return value


def predicted_value(evidence: AttributeEvidence, key: str) -> str | None:
    """The evidence's top-1 value (hat presence for ``hat_type``), ``None`` when it has no evidence."""
    dist = evidence.probabilities.get(key)
    if not dist:
        return None
    if key == "hat_type":
        return "none" if dist.get("none", 0.0) >= 0.5 else "hat"
    return max(dist, key=dist.__getitem__)


@dataclass
class Tally:
    """Per-attribute counts over ``keys``: truths seen, truths with evidence, correct top-1."""

    keys: tuple[str, ...] = SCORED
    truths: dict[str, int] = field(default_factory=dict)
    scored: dict[str, int] = field(default_factory=dict)
    correct: dict[str, int] = field(default_factory=dict)

    def add(self, attributes: Mapping[str, str], evidence: AttributeEvidence) -> None:
        for key in self.keys:
            truth = truth_value(attributes, key)
            if truth is None:
                continue
            self.truths[key] = self.truths.get(key, 0) + 1
            guess = predicted_value(evidence, key)
            if guess is None:
                continue
            self.scored[key] = self.scored.get(key, 0) + 1
            self.correct[key] = self.correct.get(key, 0) + int(guess == truth)

    def accuracy(self, key: str) -> float | None:
        n = self.scored.get(key, 0)
        return self.correct.get(key, 0) / n if n else None

    def table(self) -> dict[str, dict[str, float | int | None]]:
        """attribute → {"n", "accuracy", "coverage"} for every attribute that had a truth."""
        out = {}
        for key in self.keys:
            if key in self.truths:
                n = self.scored.get(key, 0)
                out[key] = {"n": n, "accuracy": self.accuracy(key), "coverage": n / self.truths[key]}
        return out


def load_people(path: str | Path) -> dict[str, dict[str, dict]]:
    """``clips`` of a ``people.json``: clip file → person id → {"attributes", "boxes", "description"}."""
    data = jsonio.read(path)
    if not isinstance(data, dict) or not isinstance(data.get("clips"), dict):
        raise ValueError(f"{path}: expected an object with a 'clips' object")
    return data["clips"]


def labelled_clips(path: str | Path, clips: Collection[str] | None = None) -> dict[str, dict[str, dict]]:
    """``load_people`` restricted to ``clips`` (file names; None: every clip); a clip the file does not label is
    a ``ValueError`` naming it and the clips it does label."""
    labelled = load_people(path)
    if clips is None:
        return labelled
    unknown = sorted(set(clips) - set(labelled))
    if unknown:
        raise ValueError(f"clip {', '.join(unknown)} is not in {path} (it labels {', '.join(sorted(labelled))})")
    return {clip: people for clip, people in labelled.items() if clip in set(clips)}


def read_frames(path: str | Path, wanted: set[int] | None = None) -> dict[int, np.ndarray]:
    """Frames of a clip by index (``cv2.VideoCapture`` order): the ``wanted`` ones, or all of them."""
    cap = cv2.VideoCapture(str(path))
    if not cap.isOpened():
        raise OSError(f"cannot open clip {path}")
    frames: dict[int, np.ndarray] = {}
    last = max(wanted) if wanted else None
    index = 0
    try:
        while last is None or index <= last:
            ok, frame = cap.read()
            if not ok:
                break
            if wanted is None or index in wanted:
                frames[index] = frame
            index += 1
    finally:
        cap.release()
    return frames


def mog2_foreground(frames: dict[int, np.ndarray], wanted: set[int]) -> dict[int, np.ndarray]:
    """Foreground masks (uint8, 255 = foreground, 127 = shadow) of the ``wanted`` frames of a clip (``frames``:
    all of them, by index) from a MOG2
    background model learned over every frame of the clip (:data:`MOG2_PASSES` passes), then applied to each
    wanted frame without learning. The background is the mixture's heaviest modes up to
    :data:`MOG2_BACKGROUND_RATIO` of the weight (OpenCV's default 0.9 also takes in a person who stands
    still for a fifth of the clip)."""
    model = cv2.createBackgroundSubtractorMOG2(history=max(2, len(frames)), detectShadows=True)
    model.setBackgroundRatio(MOG2_BACKGROUND_RATIO)
    for _ in range(MOG2_PASSES):
        for index in sorted(frames):
            model.apply(frames[index])
    return {i: model.apply(frames[i], learningRate=0.0) for i in sorted(wanted) if i in frames}


@dataclass(frozen=True)
class FootageSample:
    clip: str
    person: str
    frame_index: int
    box: tuple[int, int, int, int]
    crop: np.ndarray
    frame: np.ndarray
    attributes: dict[str, str]
    mask: np.ndarray | None


def ingest_foreground(frames: dict[int, np.ndarray], wanted: set[int]) -> dict[int, np.ndarray]:
    """Foreground masks (uint8, 255 = foreground) of the ``wanted`` frames of a clip (``frames``: all of them,
    by index) as video ingest sees them: the default fused detector (``engine.perception.detection.motion``) reset,
    warmed up on the clip's first frames, then run over every frame in order."""
    from engine.perception.detection.motion import FusedDetector

    detector = FusedDetector()
    detector.reset()
    detector.warm_up(frames[i] for i in sorted(frames))
    out = {}
    for index in sorted(frames):
        found = detector.detect(frames[index])
        if index in wanted and found.foreground is not None:
            out[index] = found.foreground
    return out


FOREGROUNDS = {"ingest": ingest_foreground, "mog2": mog2_foreground}


def footage_samples(people_json: str | Path, footage_dir: str | Path, masks: str | None = None,
                    clips: Collection[str] | None = None) -> Iterator[FootageSample]:
    """One sample per reference box of ``people_json`` (of ``clips`` only, when given), cut from the clips in
    ``footage_dir``, with the foreground mask of ``masks`` (a key of :data:`FOREGROUNDS`) or none."""
    if masks is not None and masks not in FOREGROUNDS:
        raise ValueError(f"masks must be one of {sorted(FOREGROUNDS)} or None, got {masks!r}")
    footage_dir = Path(footage_dir)
    for clip, people in labelled_clips(people_json, clips).items():
        wanted = {int(b["frame"]) for person in people.values() for b in person["boxes"]}
        frames = read_frames(footage_dir / clip, None if masks else wanted)  # a mask needs the whole clip
        foreground = FOREGROUNDS[masks](frames, wanted) if masks else {}
        for pid, person in people.items():
            for ref in person["boxes"]:
                i = int(ref["frame"])
                x, y, w, h = (int(v) for v in ref["box"])
                frame = frames[i]
                fg = foreground.get(i)
                yield FootageSample(clip, pid, i, (x, y, w, h), frame[y:y + h, x:x + w], frame,
                                    dict(person["attributes"]), None if fg is None else fg[y:y + h, x:x + w])
