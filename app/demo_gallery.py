"""The built-in demo gallery: the demo world (``engine.demo``) ingested once with a checkpoint, cached in the
user data folder beside the demo case database, so later launches open in seconds.

The gallery folder is named after the checkpoint's model fingerprint (a gallery only answers the model that
built it); a ``demo-ready.json`` marker, written atomically after a complete ingest, says it is usable.
Both stages report progress and stop at a cancel (``app.workers.Job``); a cancelled ingest resumes next time
(``engine.ingest`` skips sources already marked done).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from app.workers import Job
from engine.atomic import atomic_write_text
from engine.demo import DEMO_IDENTITIES, DEMO_IMAGES_PER_IDENTITY, DEMO_SEED, data_dir, demo_world_dir, demo_world_ready
from engine.gallery import Gallery

READY_MARKER = "demo-ready.json"
DEMO_CASE_TITLE = "Demo"


def demo_case_db() -> Path:
    """The default case database (in the user data folder)."""
    return data_dir() / "cases.db"


def demo_gallery_dir(fingerprint: str) -> Path:
    """Where the demo world ingested by the model with ``fingerprint`` lives."""
    if not fingerprint:
        raise ValueError("the demo gallery needs the model's fingerprint, got an empty one")
    return data_dir() / "demo" / f"gallery-{fingerprint[:16]}"


def demo_gallery_ready(gallery: Path) -> bool:
    marker = Path(gallery) / READY_MARKER
    try:
        info = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(info, dict) and info.get("seed") == DEMO_SEED and info.get("items", 0) > 0


def prepare_demo_gallery(models, job: Job, world: Path | None = None, gallery: Path | None = None) -> Path:
    """Build the demo world (when absent) and ingest it into the demo gallery for ``models`` (an
    ``app.checkpoint_models.CheckpointModels``); return the gallery folder. Runs in a worker."""
    from engine.ingest import ingest
    from engine.world.build import build_world

    job.progress(0, 0, "Loading the model")
    encoder = models.ingest_encoder()
    gallery = Path(gallery) if gallery is not None else demo_gallery_dir(encoder.fingerprint)
    if demo_gallery_ready(gallery):
        return gallery
    world = Path(world) if world is not None else demo_world_dir()
    if not demo_world_ready(world):
        build_world(world, identities=DEMO_IDENTITIES, images_per_identity=DEMO_IMAGES_PER_IDENTITY,
                    seed=DEMO_SEED, workers=max(1, min(4, os.cpu_count() or 1)),
                    progress=job.engine_progress("Rendering the demo world (once)"))
    job.check()
    summary = ingest(world, gallery, encoder, progress=job.engine_progress("Ingesting the demo world (once)"),
                     weights=models.domain_weights())
    job.check()
    items = len(Gallery.open(gallery))
    if items == 0:
        raise ValueError(f"ingesting the demo world {world} gave no items: {'; '.join(summary.lines())}")
    atomic_write_text(gallery / READY_MARKER, json.dumps({"seed": DEMO_SEED, "items": items,
                                                          "fingerprint": encoder.fingerprint}) + "\n")
    return gallery
