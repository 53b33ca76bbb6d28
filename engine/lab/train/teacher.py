"""The pixel reader as a teacher: crops of ingested footage galleries, each with the pixel reader's confident
readings as targets for the model's image attribute heads (``losses.teacher_attributes``; docs/training-notes.md,
"A teacher on real crops").

A gallery made by ``lineup ingest`` stores every RGB crop's pixel evidence (``engine.retrieval.evidence.items``):
per attribute a distribution over the ontology's values and a confidence. ``read_teacher_data`` keeps, for
the keys in ``training.teacher_attributes`` (a subset of ``TEACHER_KEYS``), the readings whose confidence is
at least ``training.teacher_min_confidence``; a reading's target is its most probable value, its weight its
confidence. Crops without a kept reading are left out; kept crops are decoded once and resized to the
model's input size as the training cache is (``engine.lab.train.data.decode_images_with_sizes``).

Each step draws ``teacher_per_batch`` crops with its teacher generator (seeded by the run's seed, the epoch
and the step, on a stream of its own: ``engine.lab.train.trainer.step_seed``), without repeats when there are
enough, and normalises and augments them like every other RGB image of the batch; ``TeacherBatch`` carries
them to the model (``teacher_images`` / ``teacher_resolution`` of ``engine.lab.train.forward``) and the targets
to the loss.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from engine.index import Gallery, GalleryError
from engine.index.evidence_table import COLUMN_OF, CONFIDENCE_COLUMN, EvidenceTable
from engine.kernel.ontology import ATTRIBUTE_KEYS, ONTOLOGY
from engine.kernel.paths import is_contained
from engine.kernel.progress import ProgressFn, no_progress
from engine.kernel.vocabulary import WORLD_TO_MODEL_RESOLUTION
from engine.lab.data.augment import ImageAugment
from engine.lab.train.config import TEACHER_KEYS, TrainConfig, TrainConfigError
from engine.lab.train.data import TrainingDataError, decode_images_with_sizes
from engine.retrieval.models import ModelConfig
from engine.retrieval.models.names import RESOLUTIONS

IGNORE = -100


class TeacherDataError(TrainingDataError):
    """Teacher galleries that cannot be read or teach nothing; the message names the folder and the problem."""


@dataclass(frozen=True)
class TeacherSource:
    """What one gallery folder gave: its clips, items, crops kept and confident readings per key."""

    folder: str
    clips: tuple[str, ...]
    items: int
    crops: int
    readings: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {"folder": self.folder, "clips": list(self.clips), "items": self.items, "crops": self.crops,
                "readings": dict(self.readings)}


@dataclass(frozen=True)
class TeacherBatch:
    """One step's teacher crops: normalised images, their resolution index, targets and confidence weights
    ([B, 18] in ``ATTRIBUTE_KEYS`` order; −100 and 0 where the attribute is not taught)."""

    images: torch.Tensor
    resolution: torch.Tensor
    targets: torch.Tensor
    weights: torch.Tensor

    def to(self, device: torch.device) -> TeacherBatch:
        return TeacherBatch(*(t.to(device, non_blocking=True) for t in
                              (self.images, self.resolution, self.targets, self.weights)))

    def forward_kwargs(self) -> dict[str, torch.Tensor]:
        return {"teacher_images": self.images, "teacher_resolution": self.resolution}


@dataclass
class TeacherData:
    """Every kept crop (uint8 [N, 3, H, W] at the model's input size) with its targets and weights."""

    images: torch.Tensor
    resolution: torch.Tensor  # [N] index into engine.retrieval.models.names.RESOLUTIONS
    targets: torch.Tensor  # long [N, 18]
    weights: torch.Tensor  # float [N, 18]
    keys: tuple[str, ...]
    min_confidence: float
    sources: tuple[TeacherSource, ...] = ()
    content_sha256: str = ""
    item_ids: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.images.shape[0])

    def summary(self) -> dict[str, Any]:
        """What the run was taught with (recorded in the data fingerprint, the log and the checkpoint)."""
        readings = {key: sum(s.readings.get(key, 0) for s in self.sources) for key in self.keys}
        return {"folders": [s.to_dict() for s in self.sources], "crops": len(self), "readings": readings,
                "keys": list(self.keys), "min_confidence": self.min_confidence,
                "content_sha256": self.content_sha256}

    def draw(self, count: int, generator: torch.Generator, mean: torch.Tensor, std: torch.Tensor,
             augment: ImageAugment | None) -> TeacherBatch:
        """``count`` crops drawn with ``generator`` (distinct when there are enough), normalised by ``mean`` and
        ``std`` and, with ``augment``, augmented with the same generator."""
        n = len(self)
        if count <= n:
            rows = torch.randperm(n, generator=generator)[:count]
        else:
            rows = torch.randint(0, n, (count,), generator=generator)
        images = (self.images.index_select(0, rows).float() / 255.0 - mean) / std
        if augment is not None:
            images = augment(images, generator)
        return TeacherBatch(images, self.resolution[rows], self.targets[rows], self.weights[rows])


def check_teacher_settings(model: ModelConfig, training: TrainConfig, source: str = "training") -> None:
    """The teacher is on exactly when both ``training.teacher_data`` and ``losses.teacher_attributes`` are set."""
    weight = model.losses.teacher_attributes
    if training.teacher_data and weight <= 0:
        raise TrainConfigError(f"{source}: 'teacher_data' is set but losses.teacher_attributes is 0; give the "
                               "loss a weight or leave teacher_data empty")
    if weight > 0 and not training.teacher_data:
        raise TrainConfigError(f"{source}: losses.teacher_attributes is {weight} but 'teacher_data' lists no "
                               "gallery folder")


def _open(folder: Path) -> tuple[Gallery, EvidenceTable]:
    if not folder.exists():
        raise TeacherDataError(f"teacher gallery {folder} does not exist")
    if not folder.is_dir():
        raise TeacherDataError(f"teacher gallery {folder} is not a folder")
    try:
        gallery = Gallery.open(folder, check_indexes=False)
        table = EvidenceTable.read(folder)
    except GalleryError as exc:
        raise TeacherDataError(f"teacher gallery {folder}: {exc}") from None
    if table is None or "pixels" not in table.sources:
        raise TeacherDataError(f"teacher gallery {folder} has no pixel attribute evidence; ingest it with "
                               f"attributes on, or run `lineup gallery rebuild {folder} --attributes`")
    return gallery, table


def _readings(values: np.ndarray, keys: Sequence[str], min_confidence: float) -> dict[str, tuple[int, float]]:
    """key → (value index, confidence) of the readings in one pixel-evidence row that clear the threshold."""
    out = {}
    for key in keys:
        confidence = float(values[CONFIDENCE_COLUMN[key]])
        if math.isnan(confidence) or confidence < min_confidence:
            continue
        probabilities = values[[COLUMN_OF[(key, v)] for v in ONTOLOGY.attributes[key]]]
        if not np.isfinite(probabilities).all() or not probabilities.sum() > 0:
            continue
        out[key] = (int(np.argmax(probabilities)), confidence)
    return out


def read_teacher_data(folders: Sequence[str | Path], image_size: tuple[int, int], min_confidence: float,
                      keys: Sequence[str] = ("top_color", "bottom_color", "hair_color"),
                      progress: ProgressFn = no_progress) -> TeacherData:
    """The kept crops of every gallery in ``folders`` with their readings of ``keys`` at or above
    ``min_confidence`` (see the module docstring). Raises ``TeacherDataError`` for a missing folder, a folder
    that is not a gallery, a gallery without pixel evidence, or galleries that keep no reading at all."""
    if not folders:
        raise TeacherDataError("no teacher gallery given")
    unknown = [key for key in keys if key not in TEACHER_KEYS]
    if unknown or not keys:
        raise TeacherDataError(f"teacher attributes must be keys of {list(TEACHER_KEYS)}, got {list(keys)}")
    if not 0 < min_confidence <= 1:
        raise TeacherDataError(f"teacher minimum confidence must lie in (0, 1], got {min_confidence}")
    paths: list[Path] = []
    resolution: list[int] = []
    rows: list[dict[str, tuple[int, float]]] = []
    item_ids: list[str] = []
    sources: list[TeacherSource] = []
    digest = hashlib.sha256(json.dumps([list(keys), min_confidence]).encode("utf-8"))
    for folder in map(Path, folders):
        gallery, table = _open(folder)
        pixels = table.matrix("pixels")
        evidence_rows = table.row_map(gallery.ids)
        clips, kept, counts = set(), 0, dict.fromkeys(keys, 0)
        for row, item in zip(evidence_rows.tolist(), gallery.iter_items(), strict=True):
            clips.add(Path(item.source).name)
            if row < 0 or item.crop is None or (item.modality or "rgb") != "rgb":
                continue
            found = _readings(np.asarray(pixels[row], dtype=np.float32), keys, min_confidence)
            if not found:
                continue
            if not is_contained(folder, item.crop):
                raise TeacherDataError(f"teacher gallery {folder}: item {item.id!r} has a crop outside the folder")
            paths.append(folder / item.crop)
            resolution.append(RESOLUTIONS.index(WORLD_TO_MODEL_RESOLUTION.get(item.resolution or "HR", "hr")))
            rows.append(found)
            item_ids.append(item.id)
            kept += 1
            for key in found:
                counts[key] += 1
            digest.update(json.dumps([item.id, item.crop_sha256 or item.crop,
                                      {k: [v, round(c, 3)] for k, (v, c) in sorted(found.items())}]).encode("utf-8"))
        sources.append(TeacherSource(str(folder.resolve()), tuple(sorted(clips)), len(gallery), kept, counts))
    if not paths:
        raise TeacherDataError(f"the teacher galleries {[str(f) for f in folders]} have no reading of {list(keys)} "
                               f"with confidence ≥ {min_confidence}")
    images, _ = decode_images_with_sizes(paths, image_size, progress)
    targets = torch.full((len(rows), len(ATTRIBUTE_KEYS)), IGNORE, dtype=torch.long)
    weights = torch.zeros((len(rows), len(ATTRIBUTE_KEYS)), dtype=torch.float32)
    for i, found in enumerate(rows):
        for key, (value, confidence) in found.items():
            targets[i, ATTRIBUTE_KEYS.index(key)] = value
            weights[i, ATTRIBUTE_KEYS.index(key)] = confidence
    return TeacherData(images, torch.tensor(resolution, dtype=torch.long), targets, weights, tuple(keys),
                       float(min_confidence), tuple(sources), digest.hexdigest(), item_ids)


def load_teacher(training: TrainConfig, model: ModelConfig, progress: ProgressFn = no_progress) -> TeacherData | None:
    """The run's teacher data, or None when ``teacher_data`` is empty (the teacher is off)."""
    check_teacher_settings(model, training)
    if not training.teacher_data:
        return None
    return read_teacher_data(training.teacher_data, tuple(model.vision.image_size), training.teacher_min_confidence,
                             training.teacher_attributes, progress)
