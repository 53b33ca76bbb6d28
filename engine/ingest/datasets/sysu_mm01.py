"""SYSU-MM01: ``cam1``..``cam6``/``<4-digit person>``/``<4-digit frame>.jpg``; cameras 3 and 6 are
near-infrared, the others RGB; ``exp/train_id.txt``, ``exp/val_id.txt``, ``exp/test_id.txt`` hold
comma-separated person ids (split names ``train``, ``val``, ``test``). Images of persons listed in no
id file are left out and counted in ``notes["unlisted_images"]``.

Protocol (docs/methods.md §4, the standard one): queries are all IR images (cams 3, 6) of the test persons;
the gallery holds, per test person and RGB camera (all-search 1, 2, 4, 5; indoor 1, 2), one randomly
drawn image (single-shot; ``shots=10`` for multi-shot); gallery items from cam 2 are ignored for cam-3
queries (same place); results are averaged over 10 random gallery draws (``trial`` 0..9).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.ingest.datasets.records import (
    DatasetFormatError,
    DatasetIndex,
    ReidProtocol,
    Sample,
    require_dir,
    require_file,
)

CAMERAS = (1, 2, 3, 4, 5, 6)
IR_CAMERAS = frozenset({3, 6})
GALLERY_CAMERAS = {"all": (1, 2, 4, 5), "indoor": (1, 2)}
TRIALS = 10
SPLIT_FILES = {"train": "train_id.txt", "val": "val_id.txt", "test": "test_id.txt"}
_CAMERA = re.compile(r"cam(\d)", re.ASCII)
_PERSON = re.compile(r"\d{4}", re.ASCII)
_FRAME = re.compile(r"(\d{4})\.jpg", re.ASCII)
_ID = re.compile(r"\d+", re.ASCII)


@dataclass(frozen=True)
class SysuName:
    camera: int
    identity: int
    frame: int

    @property
    def modality(self) -> str:
        return "ir" if self.camera in IR_CAMERAS else "rgb"


def parse_sysu_path(path: Path | str) -> SysuName:
    """Parse ``.../camC/PPPP/FFFF.jpg``; ``ValueError`` names the path and the part that is wrong."""
    parts = Path(path).parts[-3:]
    if len(parts) != 3:
        raise ValueError(f"{str(path)!r} is not camC/PPPP/FFFF.jpg")
    cam, person, frame = parts
    cam_match, frame_match = _CAMERA.fullmatch(cam), _FRAME.fullmatch(frame)
    if cam_match is None or int(cam_match[1]) not in CAMERAS:
        raise ValueError(f"{str(path)!r}: camera folder {cam!r} is not cam1..cam6")
    if _PERSON.fullmatch(person) is None:
        raise ValueError(f"{str(path)!r}: person folder {person!r} is not 4 digits")
    if frame_match is None:
        raise ValueError(f"{str(path)!r}: image name {frame!r} is not 4 digits + .jpg")
    return SysuName(int(cam_match[1]), int(person), int(frame_match[1]))


def read_id_file(file: Path) -> list[int]:
    """Person ids of one ``exp/*_id.txt`` file (comma-separated, whitespace and newlines allowed)."""
    require_file(file, "SYSU-MM01 id file")
    ids = []
    for position, token in enumerate(t.strip() for t in file.read_text(encoding="utf-8").split(",")):
        if not token:
            continue
        if not _ID.fullmatch(token):
            raise DatasetFormatError(file, f"entry {position + 1}", "id", f"{token!r} is not a person id")
        ids.append(int(token))
    return ids


def read_sysu_mm01(root: Path, *, check_images: bool = True) -> DatasetIndex:
    """Read SYSU-MM01 (``check_images`` is accepted for a uniform signature; files are listed)."""
    root = require_dir(Path(root), "sysu-mm01 root")
    split_of: dict[int, str] = {}
    for split, name in SPLIT_FILES.items():
        file = root / "exp" / name
        for identity in read_id_file(file):
            if identity in split_of:
                raise DatasetFormatError(file, f"id {identity}", "id",
                                         f"already listed in split {split_of[identity]!r}")
            split_of[identity] = split
    samples: list[Sample] = []
    unlisted = 0
    for camera in CAMERAS:
        cam_dir = require_dir(root / f"cam{camera}", f"SYSU-MM01 camera folder cam{camera}")
        for person_dir in sorted(p for p in cam_dir.iterdir() if not p.name.startswith(".")):
            for path in sorted(p for p in _entries(person_dir) if not p.name.startswith(".")):
                try:
                    parsed = parse_sysu_path(path)
                except ValueError as exc:
                    raise DatasetFormatError(path.parent, path.name, "filename", str(exc)) from exc
                split = split_of.get(parsed.identity)
                if split is None:
                    unlisted += 1
                    continue
                samples.append(Sample(image=path, identity=parsed.identity, split=split, camera=f"cam{camera}",
                                      modality=parsed.modality, extra={"camera_index": camera,
                                                                       "frame": parsed.frame}))
    return DatasetIndex("sysu-mm01", root, tuple(samples), {"unlisted_images": unlisted})


def _entries(person_dir: Path) -> list[Path]:
    if not person_dir.is_dir():
        raise DatasetFormatError(person_dir.parent, person_dir.name, "filename",
                                 "expected a person folder (4 digits), found a file")
    if _PERSON.fullmatch(person_dir.name) is None:
        raise DatasetFormatError(person_dir.parent, person_dir.name, "filename",
                                 f"person folder {person_dir.name!r} is not 4 digits")
    return list(person_dir.iterdir())


def sysu_mm01_protocol(index: DatasetIndex, mode: str = "all", trial: int = 0, shots: int = 1,
                       seed: int = 0) -> ReidProtocol:
    """IR→RGB query/gallery masks for one random gallery draw (see the module docstring)."""
    if mode not in GALLERY_CAMERAS:
        raise ValueError(f"SYSU-MM01 mode {mode!r} is not one of {list(GALLERY_CAMERAS)}")
    if shots < 1:
        raise ValueError(f"shots must be >= 1, got {shots}")
    test = index.split("test").samples
    query = tuple(s for s in test if s.extra["camera_index"] in IR_CAMERAS)
    rng = random.Random(f"sysu:{seed}:{mode}:{trial}")
    by_place: dict[tuple[int, int], list[Sample]] = {}
    for sample in test:
        if sample.extra["camera_index"] in GALLERY_CAMERAS[mode]:
            by_place.setdefault((sample.identity, sample.extra["camera_index"]), []).append(sample)
    gallery: list[Sample] = []
    for key in sorted(by_place):
        images = by_place[key]
        gallery.extend(rng.sample(images, min(shots, len(images))))
    q_ids = np.array([s.identity for s in query])[:, None]
    g_ids = np.array([s.identity for s in gallery])[None, :]
    q_cam = np.array([s.extra["camera_index"] for s in query])[:, None]
    g_cam = np.array([s.extra["camera_index"] for s in gallery])[None, :]
    valid = ~((q_cam == 3) & (g_cam == 2))
    positive = (q_ids == g_ids) & valid
    valid &= positive.any(axis=1, keepdims=True)
    return ReidProtocol(query, tuple(gallery), valid, positive)
