"""One writer per gallery folder: the folder lock (``engine.kernel.folder_lock``) on ``writer.lock``.

Every write (items, vectors, indexes, attribute evidence, done markers) happens while the lock is held; an
ingest holds it for its whole run. A second writer is refused at once with ``GalleryBusyError`` naming the
holder, whose process id and start time sit beside the lock in ``writer.json``; a ``writer.json`` left by a
killed writer never blocks anyone. Holds are re-entrant within one thread (``ingest`` holds it,
``Gallery.add`` inside takes it again); another thread of the same process is refused like another process.
Readers never take it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from engine.index.errors import GalleryBusyError
from engine.kernel import folder_lock

LOCK_FILE = "writer.lock"
HOLDER_FILE = "writer.json"
#: Files of the lock itself: a folder holding nothing else is still an empty gallery folder.
LOCK_FILES: frozenset[str] = frozenset({LOCK_FILE, HOLDER_FILE})


def holds_lock(root: str | Path) -> bool:
    """Whether the calling thread holds the write lock of the gallery folder ``root``."""
    return folder_lock.holds(root, LOCK_FILE)


def holder(root: str | Path) -> dict | None:
    """What ``writer.json`` says about the writer (``pid``, ``started``), or None when it is absent or unreadable.
    It may describe a writer that has died: only the lock tells whether anyone writes now."""
    return folder_lock.holder(root, HOLDER_FILE)


@contextmanager
def writing(root: str | Path) -> Iterator[None]:
    """Hold the write lock of the gallery folder ``root`` (created when absent) for the block.

    Raises ``GalleryBusyError`` at once when another process or thread holds it."""
    with folder_lock.exclusive(root, lock_file=LOCK_FILE, holder_file=HOLDER_FILE, refuse=GalleryBusyError,
                               what="gallery"):
        yield


def is_empty_folder(root: str | Path) -> bool:
    """True when ``root`` is absent, or a folder holding nothing but the write lock's own files."""
    root = Path(root)
    if not root.exists():
        return True
    return root.is_dir() and all(entry.name in LOCK_FILES for entry in root.iterdir())
