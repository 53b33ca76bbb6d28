"""Export a built world as a CUHK-PEDES-style JSON so text-person-search tooling can train on it.

Layout written: one JSON array of ``{"split", "captions", "file_path", "processed_tokens", "id"}``, one
record per RGB image (all resolutions unless ``resolutions`` narrows it), ``captions`` = the image's
descriptions UC..UF, ``id`` = the world identity. ``file_path`` is relative to the folder holding the
JSON file, so ``read_dataset("cuhk-pedes", OUT_JSON)`` finds the images (``engine.ingest.datasets.captioned``).
Put the JSON inside the world folder to keep it valid when the world moves.

Splits are assigned by identity, deterministically: identities sorted, shuffled with ``seed``, then cut
into train/val/test by ``fractions`` (default 80/10/10; with three or more identities val and test get
at least one each). The write is atomic.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Collection
from pathlib import Path

from engine.ingest.datasets.world import read_world
from engine.kernel.atomic import atomic_write_json
from engine.kernel.vocabulary import WORLD_RESOLUTIONS as RESOLUTIONS


def tokens(caption: str) -> list[str]:
    """Lower-case word tokens of a caption (the shape of CUHK-PEDES ``processed_tokens``)."""
    return re.findall(r"[a-z0-9]+(?:['-][a-z0-9]+)*", caption.lower())


def identity_splits(identities: Collection[int], seed: int = 0,
                    fractions: tuple[float, float, float] = (0.8, 0.1, 0.1)) -> dict[int, str]:
    """Deterministic identity → ``train``/``val``/``test`` assignment (see the module docstring)."""
    if len(fractions) != 3 or any(f < 0 for f in fractions) or abs(sum(fractions) - 1.0) > 1e-9:
        raise ValueError(f"fractions must be three non-negative numbers summing to 1, got {fractions}")
    order = sorted(identities)
    random.Random(f"export:{seed}").shuffle(order)
    n = len(order)
    n_val, n_test = (round(f * n) for f in fractions[1:])
    if n >= 3:
        n_val = max(n_val, 1) if fractions[1] > 0 else 0
        n_test = max(n_test, 1) if fractions[2] > 0 else 0
    n_train = max(n - n_val - n_test, 0)
    split = {}
    for k, identity in enumerate(order):
        split[identity] = "train" if k < n_train else ("val" if k < n_train + n_val else "test")
    return split


def export_cuhk_pedes(world_dir: Path, out_json: Path, *, seed: int = 0,
                      fractions: tuple[float, float, float] = (0.8, 0.1, 0.1),
                      resolutions: Collection[str] | None = None) -> int:
    """Write the world's RGB images with their descriptions as CUHK-PEDES JSON; returns the record count."""
    if resolutions is not None and not set(resolutions) <= set(RESOLUTIONS):
        raise ValueError(f"resolutions {sorted(resolutions)} must be among {list(RESOLUTIONS)}")
    world = read_world(Path(world_dir))
    rgb = [s for s in world.samples
           if s.modality == "rgb" and (resolutions is None or s.extra["resolution"] in resolutions)]
    if not rgb:
        raise ValueError(f"world {world_dir} has no RGB images to export")
    missing = [s.extra["id"] for s in rgb if not s.captions]
    if missing:
        raise ValueError(f"world {world_dir}: RGB images without descriptions, e.g. {missing[:3]}")
    split = identity_splits({s.identity for s in rgb}, seed, fractions)
    out_json = Path(out_json)
    base = out_json.resolve().parent
    records = [{"split": split[s.identity], "captions": list(s.captions),
                "file_path": Path(os.path.relpath(s.image.resolve(), base)).as_posix(),
                "processed_tokens": [tokens(c) for c in s.captions], "id": s.identity} for s in rgb]
    atomic_write_json(out_json, records)
    return len(records)
