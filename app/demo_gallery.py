"""The built-in demo gallery: the demo world (``engine.lab.demo``) ingested with a checkpoint, kept in the user data
folder beside the demo case database (docs/architecture.md, "First launch").

The gallery folder is named after the checkpoint's model fingerprint (a gallery only answers the model that
built it); a ``demo-ready.json`` marker, written atomically once the gallery is complete, says it is usable.

First launch takes one of two paths:

- **shipped** (seconds): ``resources/demo_gallery`` holds the demo gallery prebuilt from the shipped checkpoint
  (``make demo-gallery``, ``build_shipped_gallery``): one deterministic archive of the gallery folder and
  ``demo-gallery.json``, which records the model fingerprint, the world's seed and size, the item count and the
  archive's SHA-256. When that fingerprint is the checkpoint's and the archive's hash holds, the archive is
  unpacked beside the target, opened and verified (``engine.index.verify``: item records, crop hashes, vectors,
  indexes, evidence) and only then moved into place. Nothing in it is rewritten, so its records still match
  the content digests taken when it was built. Its items name their source images where the build rendered
  the world (``build_world_dir``), which is not on this computer: for a world item the source image is its crop,
  byte for byte (the crop's SHA-256 is the source's), and the crop is in the gallery.
- **build** (minutes): otherwise (no shipped gallery, another checkpoint, a damaged archive) the demo world is
  rendered and ingested here, as before. Both stages report progress and stop at a cancel
  (``app.workers.Job``); a cancelled ingest resumes next time (``engine.ingest`` skips sources already done).

Ground truth travels inside the gallery: every world item carries its identity and attributes, which is all the
trainer's badges and the demo scripts (``resources/demos``) read, so the world's images and manifest are not
shipped; ``lineup demo`` renders the world itself when asked.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from app.workers import Job
from engine.index import Gallery
from engine.index.writer_lock import LOCK_FILES
from engine.kernel import jsonio
from engine.kernel.atomic import atomic_write_text
from engine.lab.demo import (
    DEMO_IDENTITIES,
    DEMO_IMAGES_PER_IDENTITY,
    DEMO_SEED,
    data_dir,
    demo_world_dir,
    demo_world_ready,
)

READY_MARKER = "demo-ready.json"
DEMO_CASE_TITLE = "Demo"
SHIPPED_FOLDER = "demo_gallery"  # in resources/
SHIPPED_INFO = "demo-gallery.json"
SHIPPED_ARCHIVE = "gallery.tar.gz"
SHIPPED_FORMAT = 1


class ShippedGalleryError(ValueError):
    """The shipped demo gallery cannot be used (absent, for another model, damaged); the message says why."""


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
        info = jsonio.read(marker)
    except (OSError, ValueError):
        return False
    return isinstance(info, dict) and info.get("seed") == DEMO_SEED and info.get("items", 0) > 0


def demo_gallery_origin(gallery: Path) -> str | None:
    """How the ready demo gallery in ``gallery`` was made: ``"shipped"`` or ``"built"`` (None when not ready)."""
    if not demo_gallery_ready(gallery):
        return None
    info = jsonio.read(Path(gallery) / READY_MARKER, expect=dict)
    return info.get("origin", "built")


def shipped_gallery_dir() -> Path:
    """Where the prebuilt demo gallery ships (``resources/demo_gallery``; it may be absent)."""
    from importlib import resources as importlib_resources

    return Path(str(importlib_resources.files("resources"))) / SHIPPED_FOLDER


# ----------------------------------------------------------------------------------------------- the shipped one


@dataclass(frozen=True)
class ShippedInfo:
    """``demo-gallery.json``: what the shipped archive holds and which model made it."""

    model_fingerprint: str
    seed: int
    identities: int
    images_per_identity: int
    items: int
    archive: str
    archive_sha256: str
    archive_bytes: int
    world_manifest_sha256: str

    @classmethod
    def read(cls, folder: Path) -> ShippedInfo:
        path = Path(folder) / SHIPPED_INFO
        try:
            data = jsonio.read(path)
        except FileNotFoundError:
            raise ShippedGalleryError(f"no demo gallery is shipped ({path} is absent)") from None
        except (OSError, ValueError) as exc:
            raise ShippedGalleryError(f"{path} is unreadable: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != SHIPPED_FORMAT:
            raise ShippedGalleryError(f"{path} is not a format-{SHIPPED_FORMAT} demo gallery description")
        try:
            info = cls(**{name: data[name] for name in cls.__dataclass_fields__})
        except (KeyError, TypeError) as exc:
            raise ShippedGalleryError(f"{path} lacks the field {exc}") from None
        if Path(info.archive).name != info.archive:
            raise ShippedGalleryError(f"{path}: archive {info.archive!r} must be a file name beside it")
        return info

    def to_dict(self) -> dict:
        return {"format": SHIPPED_FORMAT, **{name: getattr(self, name) for name in self.__dataclass_fields__}}


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def install_shipped_gallery(fingerprint: str, target: Path, job: Job, shipped: Path | None = None) -> Path:
    """Unpack the shipped demo gallery into ``target`` when it was built by the model with ``fingerprint``,
    verify it and mark it ready; ``ShippedGalleryError`` says why not (then nothing is left behind)."""
    from engine.index.verify import verify_gallery

    folder = Path(shipped) if shipped is not None else shipped_gallery_dir()
    info = ShippedInfo.read(folder)
    if info.model_fingerprint != fingerprint:
        raise ShippedGalleryError(f"the shipped demo gallery was built by model {info.model_fingerprint[:16]}, "
                                  f"not by this checkpoint's {fingerprint[:16]}")
    if (info.seed, info.identities, info.images_per_identity) != (DEMO_SEED, DEMO_IDENTITIES,
                                                                  DEMO_IMAGES_PER_IDENTITY):
        raise ShippedGalleryError(f"the shipped demo gallery holds world {info.seed} ({info.identities} × "
                                  f"{info.images_per_identity}), not the demo world {DEMO_SEED} "
                                  f"({DEMO_IDENTITIES} × {DEMO_IMAGES_PER_IDENTITY})")
    archive = folder / info.archive
    job.progress(0, 4, "Checking the shipped demo gallery")
    if not archive.is_file() or archive.stat().st_size != info.archive_bytes or _sha256_file(archive) != \
            info.archive_sha256:
        raise ShippedGalleryError(f"the shipped demo gallery {archive} is missing or damaged (its size or "
                                  f"SHA-256 is not the one {SHIPPED_INFO} records)")
    job.check()
    target = Path(target)
    staging = target.with_name(f".{target.name}.unpacking")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        job.progress(1, 4, "Unpacking the shipped demo gallery")
        staging.mkdir(parents=True)
        with tarfile.open(archive, "r:gz") as tar:
            tar.extractall(staging, filter="data")
        job.check()
        job.progress(2, 4, "Verifying the demo gallery")
        gallery = Gallery.open(staging)
        if gallery.model_fingerprint != fingerprint or len(gallery) != info.items:
            raise ShippedGalleryError(f"the shipped demo gallery holds {len(gallery)} items of model "
                                      f"{gallery.model_fingerprint[:16]}; {SHIPPED_INFO} says {info.items} of "
                                      f"{fingerprint[:16]}")
        problems = verify_gallery(gallery, check_crops=True, check_sources=False)
        if problems:
            raise ShippedGalleryError(f"the shipped demo gallery does not verify: {problems[0]}"
                                      + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
        job.check()
        job.progress(3, 4, "Installing the demo gallery")
        atomic_write_text(staging / READY_MARKER, json.dumps({
            "seed": DEMO_SEED, "items": info.items, "fingerprint": fingerprint, "origin": "shipped",
            "archive_sha256": info.archive_sha256}) + "\n")
        if target.exists():  # an earlier build that never finished: the shipped gallery replaces it
            shutil.rmtree(target)
        os.replace(staging, target)
    except (OSError, KeyError, tarfile.TarError, ValueError) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(exc, ShippedGalleryError):
            raise
        raise ShippedGalleryError(f"the shipped demo gallery could not be unpacked: {exc}") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    job.progress(4, 4, "Demo gallery ready")
    return target


def _pack(root: Path, archive: Path) -> None:
    """A deterministic gzip'd tar of the gallery folder ``root``: sorted names, no times, owners or modes of
    this machine (owner-only modes, as the gallery writes them), so the same gallery gives the same bytes."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(root.rglob("*"), key=lambda p: p.relative_to(root).as_posix()):
            name = path.relative_to(root).as_posix()
            if name in LOCK_FILES or path.is_symlink():  # the writer's lock and holder note are no content
                continue
            entry = tarfile.TarInfo(name)
            entry.mtime, entry.uid, entry.gid, entry.uname, entry.gname = 0, 0, 0, "", ""
            if path.is_dir():
                entry.type, entry.mode = tarfile.DIRTYPE, 0o700
                tar.addfile(entry)
            else:
                data = path.read_bytes()
                entry.size, entry.mode = len(data), 0o600
                tar.addfile(entry, io.BytesIO(data))
    with open(archive, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0,
                                                   compresslevel=9) as gz:
        gz.write(buffer.getvalue())


def build_world_dir() -> Path:
    """Where ``build_shipped_gallery`` renders the world: a fixed folder named after the seed in the system's
    temporary folder, so the item records (which name their source image, and which the gallery's content
    digests bind) come out the same on every build and name no user's folder."""
    return Path(tempfile.gettempdir()) / f"lineup-demo-world-{DEMO_SEED}"


def build_shipped_gallery(checkpoint: Path, out: Path, job: Job, *, identities: int = DEMO_IDENTITIES,
                          images_per_identity: int = DEMO_IMAGES_PER_IDENTITY,
                          world: Path | None = None) -> ShippedInfo:
    """Render the demo world, ingest it with ``checkpoint`` and write the shipped demo gallery into ``out``
    (``demo-gallery.json`` and the archive); ``make demo-gallery`` runs it for the shipped checkpoint. The world
    is rendered in ``world`` (default ``build_world_dir()``), which must not exist, and deleted afterwards.
    ``identities``/``images_per_identity`` other than the demo's make a gallery the app will not take (tests)."""
    from app.checkpoint_models import CheckpointModels
    from engine.ingest import ingest
    from engine.lab.world.build import build_world

    models = CheckpointModels(checkpoint, device="cpu")
    job.progress(0, 0, "Loading the model")
    encoder = models.ingest_encoder()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    world = Path(world) if world is not None else build_world_dir()
    if world.exists():
        raise ValueError(f"{world} exists: another demo gallery build is running, or one was cut short (then "
                         "delete it and run again)")
    try:
        gallery = world.with_name(world.name + "-gallery")
        shutil.rmtree(gallery, ignore_errors=True)
        build_world(world, identities=identities, images_per_identity=images_per_identity, seed=DEMO_SEED,
                    workers=max(1, min(4, os.cpu_count() or 1)), progress=job.engine_progress("Rendering the world"))
        job.check()
        ingest(world, gallery, encoder, progress=job.engine_progress("Ingesting the world"),
               weights=models.domain_weights())
        job.check()
        items = len(Gallery.open(gallery))
        archive = out / SHIPPED_ARCHIVE
        _pack(gallery, archive)
        info = ShippedInfo(model_fingerprint=encoder.fingerprint, seed=DEMO_SEED, identities=identities,
                           images_per_identity=images_per_identity, items=items, archive=SHIPPED_ARCHIVE,
                           archive_sha256=_sha256_file(archive), archive_bytes=archive.stat().st_size,
                           world_manifest_sha256=_sha256_file(world / "manifest.jsonl"))
    finally:
        shutil.rmtree(world, ignore_errors=True)
        shutil.rmtree(world.with_name(world.name + "-gallery"), ignore_errors=True)
    atomic_write_text(out / SHIPPED_INFO, json.dumps(info.to_dict(), indent=1) + "\n")
    return info


# ------------------------------------------------------------------------------------------------ first launch


def prepare_demo_gallery(models, job: Job, world: Path | None = None, gallery: Path | None = None,
                         shipped: Path | None = None) -> Path:
    """The ready demo gallery for ``models`` (an ``app.checkpoint_models.CheckpointModels``): the cached one, else
    the shipped one unpacked and verified (``install_shipped_gallery``), else the demo world built (when
    absent) and ingested here. Returns the gallery folder. Runs in a worker."""
    job.progress(0, 0, "Loading the model")
    fingerprint = models.query_encoder().fingerprint
    gallery = Path(gallery) if gallery is not None else demo_gallery_dir(fingerprint)
    if demo_gallery_ready(gallery):
        return gallery
    job.check()
    try:
        return install_shipped_gallery(fingerprint, gallery, job, shipped)
    except ShippedGalleryError as exc:
        job.progress(0, 0, f"Building the demo gallery here: {exc}")
    return _build_and_ingest(models, job, world, gallery)


def _build_and_ingest(models, job: Job, world: Path | None, gallery: Path) -> Path:
    from engine.ingest import ingest
    from engine.lab.world.build import build_world

    encoder = models.ingest_encoder()
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
    atomic_write_text(gallery / READY_MARKER, json.dumps({"seed": DEMO_SEED, "items": items, "origin": "built",
                                                          "fingerprint": encoder.fingerprint}) + "\n")
    return gallery


def main(argv: list[str] | None = None) -> int:
    """``python -m app.demo_gallery [--checkpoint C] [--out DIR]``: build the shipped demo gallery
    (``make demo-gallery``)."""
    import argparse
    import sys
    import threading
    import time

    from engine.retrieval.models.discovery import default_checkpoint

    parser = argparse.ArgumentParser(prog="python -m app.demo_gallery", description=main.__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", type=Path, help="Checkpoint folder (default: the shipped one)")
    parser.add_argument("--out", type=Path, help="Output folder (default: resources/demo_gallery)")
    args = parser.parse_args(argv)
    start = time.monotonic()
    last = [""]

    def report(done: int, total: int, message: str) -> None:
        line = f"{message} {done}/{total}" if total else message
        if line != last[0]:
            last[0] = line
            print(f"[{time.monotonic() - start:6.1f} s] {line}", file=sys.stderr, flush=True)

    try:
        info = build_shipped_gallery(args.checkpoint or default_checkpoint(), args.out or shipped_gallery_dir(),
                                     Job(threading.Event(), report))
    except (OSError, ValueError) as exc:
        print(f"python -m app.demo_gallery: {exc}", file=sys.stderr)
        return 1
    print(f"{info.items} items of model {info.model_fingerprint[:16]}; {info.archive} "
          f"{info.archive_bytes / 1e6:.1f} MB; {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
