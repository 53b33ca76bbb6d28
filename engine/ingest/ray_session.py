"""Ray for ingest (docs/scaling.md): ``require_ray`` imports it or says how to install it, ``ray_session`` starts a
local Ray (``workers`` CPUs, no dashboard, quiet logs, its files in a temporary folder) or joins a running
cluster at ``address``, and stops or leaves it afterwards.

A local Ray's files go to ``<system temp>/lineup-ray-*`` (Ray's socket paths must stay short, which a folder
inside a gallery does not promise); the folder is removed when the session ends, and folders left by an ingest
that was killed are removed by the next one (each holds the process id of the ingest that made it).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from engine.ingest.errors import IngestError

INSTALL_HINT = "pip install 'lineup[cluster]'"
TEMP_PREFIX = "lineup-ray-"
OWNER_FILE = "ingest.pid"


def require_ray(what: str) -> ModuleType:
    """The ``ray`` module; an ``IngestError`` naming ``what`` needed it and how to install it when it is absent."""
    try:
        import ray
    except ImportError as exc:
        raise IngestError(f"{what} runs on Ray, which is not installed ({exc}); install the cluster extra: "
                          f"{INSTALL_HINT}") from None
    return ray


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale_folders(base: Path | None = None) -> list[Path]:
    """Remove the temporary Ray folders of ingests that are no longer running; returns those removed."""
    base = Path(base or tempfile.gettempdir())
    removed = []
    for folder in base.glob(f"{TEMP_PREFIX}*"):
        try:
            pid = int((folder / OWNER_FILE).read_text().strip())
        except (OSError, ValueError):
            continue  # not ours, or still being made
        if not _alive(pid):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


@contextlib.contextmanager
def ray_session(ray: ModuleType, workers: int | None, address: str | None) -> Iterator[int]:
    """Ray started locally with ``workers`` CPUs, or joined at ``address``; yields how many workers to run (with
    ``address`` and no ``workers``: one per CPU of the cluster)."""
    if ray.is_initialized():
        raise IngestError("Ray is already running in this process; an ingest starts (or joins) its own")
    quiet = {"logging_level": logging.ERROR, "log_to_driver": False}
    folder = None
    if address is None:
        if workers is None or workers < 1:
            raise IngestError(f"a local Ray needs at least 1 worker, got {workers}")
        sweep_stale_folders()
        folder = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX))
        (folder / OWNER_FILE).write_text(f"{os.getpid()}\n")
        try:
            ray.init(address="local", num_cpus=workers, include_dashboard=False, _temp_dir=str(folder), **quiet)
        except Exception:
            shutil.rmtree(folder, ignore_errors=True)
            raise
    else:
        try:
            ray.init(address=address, **quiet)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise IngestError(f"cannot join the Ray cluster at {address!r}: {exc}") from None
    try:
        count = workers if workers is not None else max(1, int(ray.cluster_resources().get("CPU", 1)))
        yield count
    finally:
        ray.shutdown()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
