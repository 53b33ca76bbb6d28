"""Hand-labelled person boxes on footage, and detections scored against them.

The labels file (``tests/data/footage/boxes.json``; its README says how it was made)::

    {"source": "...", "clips": {"<file name>": {"size": [W, H], "people": {"p1": "..."},
      "frames": {"<frame index>": [{"box": [x, y, w, h], "person": "p1", "partial": false, "ignore": false}]}}}}

Frame indices are 0-based in ``cv2.VideoCapture`` read order; a frame listed with no boxes shows nobody.

Scoring one frame (``score_frame``): detections and labels are paired greedily, the pair with the highest IoU
first, while IoU ≥ ``min_iou`` (0.5); each detection and label is used at most once. A detection paired with a
label is a hit (true positive) unless the label is ``ignore`` (then it counts for nothing); an unpaired
detection is a false positive; an unpaired label that is not ``ignore`` is a miss. Precision = hits /
(hits + false positives), recall = hits / (hits + misses), over the frames pooled.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.kernel import jsonio
from engine.perception.detection.detectors import iou_matrix


class LabelsError(ValueError):
    """A labels file is missing or breaks the format above."""


@dataclass(frozen=True)
class LabelledBox:
    box: tuple[float, float, float, float]  # x, y, w, h in frame pixels
    person: str
    partial: bool = False
    ignore: bool = False


@dataclass(frozen=True)
class LabelledClip:
    name: str
    size: tuple[int, int]  # width, height
    people: dict[str, str]
    frames: dict[int, list[LabelledBox]]


@dataclass
class Tally:
    hits: int = 0
    false_positives: int = 0
    misses: int = 0

    def add(self, other: Tally) -> None:
        self.hits += other.hits
        self.false_positives += other.false_positives
        self.misses += other.misses

    @property
    def precision(self) -> float:
        found = self.hits + self.false_positives
        return self.hits / found if found else 1.0

    @property
    def recall(self) -> float:
        present = self.hits + self.misses
        return self.hits / present if present else 1.0

    def to_dict(self) -> dict[str, float]:
        return {"hits": self.hits, "false_positives": self.false_positives, "misses": self.misses,
                "precision": self.precision, "recall": self.recall}


def load_box_labels(path: str | Path) -> dict[str, LabelledClip]:
    """Clips by file name, checked: boxes inside their frame with positive size, person ids present."""
    path = Path(path)
    try:
        data = jsonio.read(path)
    except OSError as exc:
        raise LabelsError(f"labels file {path} cannot be read: {exc.strerror or exc}") from None
    except jsonio.JsonInputError as exc:
        raise LabelsError(f"labels file {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("clips"), dict):
        raise LabelsError(f"labels file {path} needs a 'clips' object")
    return {name: _clip(path, name, entry) for name, entry in data["clips"].items()}


def _clip(path: Path, name: str, entry: object) -> LabelledClip:
    where = f"{path}: clip {name!r}"
    if not isinstance(entry, dict) or not isinstance(entry.get("frames"), dict):
        raise LabelsError(f"{where} needs a 'frames' object")
    size = entry.get("size")
    if not (isinstance(size, list) and len(size) == 2 and all(isinstance(v, int) and v > 0 for v in size)):
        raise LabelsError(f"{where}: 'size' must be [width, height] in pixels, got {size!r}")
    width, height = size
    frames: dict[int, list[LabelledBox]] = {}
    for key, boxes in entry["frames"].items():
        if not key.isdigit():
            raise LabelsError(f"{where}: frame index must be a whole number ≥ 0, got {key!r}")
        if not isinstance(boxes, list):
            raise LabelsError(f"{where} frame {key}: expected a list of boxes, got {type(boxes).__name__}")
        frames[int(key)] = [_box(f"{where} frame {key}", item, width, height) for item in boxes]
    people = entry.get("people", {})
    if not isinstance(people, dict):
        raise LabelsError(f"{where}: 'people' must map person ids to descriptions")
    return LabelledClip(name, (width, height), dict(people), dict(sorted(frames.items())))


def _box(where: str, item: object, width: int, height: int) -> LabelledBox:
    if not isinstance(item, dict):
        raise LabelsError(f"{where}: a box entry must be an object, got {item!r}")
    box = item.get("box")
    if not (isinstance(box, list) and len(box) == 4 and all(isinstance(v, int | float) for v in box)):
        raise LabelsError(f"{where}: 'box' must be [x, y, w, h], got {box!r}")
    x, y, w, h = (float(v) for v in box)
    if w <= 0 or h <= 0 or x < 0 or y < 0 or x + w > width or y + h > height:
        raise LabelsError(f"{where}: box {box} does not lie inside the {width}×{height} frame with positive size")
    person = item.get("person")
    if not isinstance(person, str) or not person:
        raise LabelsError(f"{where}: box {box} needs a 'person' id")
    flags = {key: item.get(key, False) for key in ("partial", "ignore")}
    if not all(isinstance(v, bool) for v in flags.values()):
        raise LabelsError(f"{where}: 'partial' and 'ignore' must be true or false, got {flags}")
    return LabelledBox((x, y, w, h), person, flags["partial"], flags["ignore"])


def score_frame(detected: np.ndarray, labels: list[LabelledBox], min_iou: float = 0.5) -> Tally:
    """Hits, false positives and misses of detections [N, 4] (x, y, w, h) against one frame's labels."""
    detected = np.asarray(detected, np.float64).reshape(-1, 4)
    truth = np.array([label.box for label in labels], np.float64).reshape(-1, 4)
    ignore = np.array([label.ignore for label in labels], bool)
    used_detection: set[int] = set()
    used_label: set[int] = set()
    hits = 0
    if len(detected) and len(truth):
        overlap = iou_matrix(detected, truth)
        pairs = np.argwhere(overlap >= min_iou)
        for d, t in sorted(pairs.tolist(), key=lambda pair: -overlap[pair[0], pair[1]]):
            if d in used_detection or t in used_label:
                continue
            used_detection.add(d)
            used_label.add(t)
            hits += int(not ignore[t])
    misses = sum(1 for t in range(len(truth)) if t not in used_label and not ignore[t])
    return Tally(hits, len(detected) - len(used_detection), misses)
