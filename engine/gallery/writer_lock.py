"""One writer per gallery folder: an OS-level lock (``filelock``: ``flock`` on POSIX) on ``writer.lock``.

Every write (items, vectors, indexes, attribute evidence, done markers) happens while the lock is held; an
ingest holds it for its whole run. A second writer is refused at once with ``GalleryBusyError`` naming the
holder, whose process id and start time sit beside the lock in ``writer.json``. The OS lock is the truth:
it dies with its process, so a ``writer.json`` left by a killed writer never blocks anyone, it is only read
to name a live holder. Holds are re-entrant within one thread (``ingest`` holds it, ``Gallery.add`` inside
takes it again); another thread of the same process is refused like another process. Readers never take it.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock, Timeout

from engine.atomic import atomic_write_json
from engine.gallery.errors import GalleryBusyError

LOCK_FILE = "writer.lock"
HOLDER_FILE = "writer.json"
#: Files of the lock itself: a folder holding nothing else is still an empty gallery folder.
LOCK_FILES: frozenset[str] = frozenset({LOCK_FILE, HOLDER_FILE})

_depth = threading.local()  # per thread: gallery folder → how many nested holds


def _holds() -> dict[str, int]:
    if not hasattr(_depth, "holds"):
        _depth.holds = {}
    return _depth.holds


def _key(root: Path) -> str:
    return os.path.realpath(root)


def holds_lock(root: str | Path) -> bool:
    """Whether the calling thread holds the write lock of the gallery folder ``root``."""
    return _holds().get(_key(Path(root)), 0) > 0


def holder(root: str | Path) -> dict | None:
    """What ``writer.json`` says about the writer (``pid``, ``started``), or None when it is absent or unreadable.
    It may describe a writer that has died: only the lock tells whether anyone writes now."""
    try:
        record = json.loads((Path(root) / HOLDER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _busy(root: Path) -> GalleryBusyError:
    record = holder(root)
    if record is None or not isinstance(record.get("pid"), int):
        return GalleryBusyError(f"gallery {root} is being written by another process (it has not recorded "
                                f"itself in {HOLDER_FILE} yet); try again when it has finished")
    return GalleryBusyError(f"gallery {root} is being written by process {record['pid']} (started "
                            f"{record.get('started', 'at an unknown time')}); try again when it has finished")


@contextlib.contextmanager
def writing(root: str | Path) -> Iterator[None]:
    """Hold the write lock of the gallery folder ``root`` (created when absent) for the block.

    Raises ``GalleryBusyError`` at once when another process or thread holds it."""
    root = Path(root)
    key = _key(root)
    holds = _holds()
    if holds.get(key, 0):
        holds[key] += 1
        try:
            yield
        finally:
            holds[key] -= 1
        return
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GalleryBusyError(f"cannot create the gallery folder {root} to lock it: {exc}") from None
    lock = FileLock(root / LOCK_FILE, timeout=0, is_singleton=True)
    try:
        lock.acquire()
    except Timeout:
        raise _busy(root) from None
    except OSError as exc:
        raise GalleryBusyError(f"cannot lock gallery {root} for writing: {exc}") from None
    holds[key] = 1
    try:
        atomic_write_json(root / HOLDER_FILE, {"pid": os.getpid(),
                                               "started": datetime.now(UTC).isoformat(timespec="seconds")})
        yield
    finally:
        holds.pop(key, None)
        with contextlib.suppress(OSError):
            (root / HOLDER_FILE).unlink()
        lock.release()


def is_empty_folder(root: str | Path) -> bool:
    """True when ``root`` is absent, or a folder holding nothing but the write lock's own files."""
    root = Path(root)
    if not root.exists():
        return True
    return root.is_dir() and all(entry.name in LOCK_FILES for entry in root.iterdir())
