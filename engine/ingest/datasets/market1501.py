"""Market-1501: ``bounding_box_train/`` (split ``train``), ``bounding_box_test/`` (``gallery``), ``query/``
(``query``); image names ``PPPP_cCsS_FFFFFF_BB.jpg`` = person, camera 1–6, sequence, frame, box.

Standard protocol (as torchreid and the original evaluation code do it): person ``-1`` images are junk
and are not read (counted in ``notes["junk_skipped"]``); person ``0000`` images are distractors, kept in
the gallery, never positive; at evaluation a gallery item with the query's person *and* camera is
removed; queries left without a positive are skipped (docs/methods.md §5). Other files (``Thumbs.db``) are
ignored; a ``.jpg`` whose name does not parse is an error.
"""

from __future__ import annotations

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
)

FOLDERS: dict[str, str] = {"train": "bounding_box_train", "gallery": "bounding_box_test", "query": "query"}
JUNK = -1
DISTRACTOR = 0
CAMERAS = range(1, 7)
_NAME = re.compile(r"(?P<pid>-1|\d{4})_c(?P<cam>\d)s(?P<seq>\d+)_(?P<frame>\d+)_(?P<box>\d+)\.jpg", re.ASCII)


@dataclass(frozen=True)
class MarketName:
    identity: int
    camera: int
    sequence: int
    frame: int
    box: int


def parse_market_name(name: str) -> MarketName:
    """Parse a Market-1501 image name; ``ValueError`` names the file and what is wrong."""
    match = _NAME.fullmatch(name)
    if match is None:
        raise ValueError(f"{name!r} is not a Market-1501 image name (PPPP_cCsS_FFFFFF_BB.jpg, person -1 or 4 digits)")
    camera = int(match["cam"])
    if camera not in CAMERAS:
        raise ValueError(f"{name!r}: camera {camera} is outside 1..6")
    return MarketName(int(match["pid"]), camera, int(match["seq"]), int(match["frame"]), int(match["box"]))


def read_market1501(root: Path, *, check_images: bool = True) -> DatasetIndex:
    """Read the three Market-1501 folders (``check_images`` is accepted for a uniform signature)."""
    root = Path(root)
    require_dir(root, "market1501 root")
    nested = root / "Market-1501-v15.09.15"
    base = nested if not (root / FOLDERS["train"]).is_dir() and nested.is_dir() else root
    samples: list[Sample] = []
    junk: dict[str, int] = {}
    for split, folder in FOLDERS.items():
        directory = require_dir(base / folder, f"market1501 folder {folder!r}")
        junk[split] = 0
        for path in sorted(p for p in directory.iterdir() if p.suffix.lower() == ".jpg"):
            try:
                parsed = parse_market_name(path.name)
            except ValueError as exc:
                raise DatasetFormatError(directory, path.name, "filename", str(exc)) from exc
            if parsed.identity == JUNK:
                junk[split] += 1
                continue
            samples.append(Sample(image=path, identity=parsed.identity, split=split, camera=f"c{parsed.camera}",
                                  modality="rgb", extra={"sequence": parsed.sequence, "frame": parsed.frame,
                                                         "box": parsed.box,
                                                         "distractor": parsed.identity == DISTRACTOR}))
    return DatasetIndex("market1501", root, tuple(samples), {"junk_skipped": junk})


def market1501_protocol(index: DatasetIndex) -> ReidProtocol:
    """Query/gallery masks of the standard single-query protocol (see the module docstring)."""
    query, gallery = index.split("query").samples, index.split("gallery").samples
    q_ids = np.array([s.identity for s in query])[:, None]
    g_ids = np.array([s.identity for s in gallery])[None, :]
    q_cams = np.array([s.camera for s in query], dtype=object)[:, None]
    g_cams = np.array([s.camera for s in gallery], dtype=object)[None, :]
    same_id = q_ids == g_ids
    valid = ~(same_id & (q_cams == g_cams))
    positive = same_id & valid & (g_ids != DISTRACTOR)
    valid &= positive.any(axis=1, keepdims=True)
    return ReidProtocol(tuple(query), tuple(gallery), valid, positive)
