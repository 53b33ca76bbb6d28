"""One writer per folder: an OS-level lock (``filelock``: ``flock`` on POSIX) on a lock file inside the folder.

The writer's process id and start time sit beside the lock in a holder file, read only to name a live holder
in the refusal. The OS lock is the truth: it dies with its process, so a holder file left by a killed writer
never blocks anyone. Holds are re-entrant within one thread; another thread of the same process is refused
like another process. Galleries (``engine.index.writer_lock``) and training runs (``engine.lab.train.state``)
use it, each with its own file names and error.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from engine.kernel import jsonio
from engine.kernel.atomic import atomic_write_json
from engine.kernel.timefmt import utc_stamp

_depth = threading.local()  # per thread: (folder, lock file) → how many nested holds


def _holds() -> dict[tuple[str, str], int]:
    if not hasattr(_depth, "holds"):
        _depth.holds = {}
    return _depth.holds


def _key(root: Path, lock_file: str) -> tuple[str, str]:
    return os.path.realpath(root), lock_file


def holds(root: str | Path, lock_file: str) -> bool:
    """Whether the calling thread holds ``lock_file`` of the folder ``root``."""
    return _holds().get(_key(Path(root), lock_file), 0) > 0


def holder(root: str | Path, holder_file: str) -> dict | None:
    """What the holder file says about the writer (``pid``, ``started``), or None when it is absent or
    unreadable. It may describe a writer that has died: only the lock tells whether anyone writes now."""
    try:
        record = jsonio.read(Path(root) / holder_file)
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def busy_message(root: Path, holder_file: str, what: str) -> str:
    """"<what> ROOT is being written by process PID (started …)", or by another process not yet recorded."""
    record = holder(root, holder_file)
    if record is None or not isinstance(record.get("pid"), int):
        return (f"{what} {root} is being written by another process (it has not recorded itself in "
                f"{holder_file} yet); try again when it has finished")
    return (f"{what} {root} is being written by process {record['pid']} (started "
            f"{record.get('started', 'at an unknown time')}); try again when it has finished")


@contextlib.contextmanager
def exclusive(root: str | Path, *, lock_file: str, holder_file: str,
              refuse: Callable[[str], Exception], what: str) -> Iterator[None]:
    """Hold ``lock_file`` of the folder ``root`` (created when absent) for the block.

    Raises ``refuse(message)`` at once when another process or thread holds it, or when the folder cannot be
    created or locked; ``what`` names the folder's kind in that message."""
    root = Path(root)
    key = _key(root, lock_file)
    nested = _holds()
    if nested.get(key, 0):
        nested[key] += 1
        try:
            yield
        finally:
            nested[key] -= 1
        return
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise refuse(f"cannot create the {what} folder {root} to lock it: {exc}") from None
    lock = FileLock(root / lock_file, timeout=0, is_singleton=True)
    try:
        lock.acquire()
    except Timeout:
        raise refuse(busy_message(root, holder_file, what)) from None
    except OSError as exc:
        raise refuse(f"cannot lock {what} {root} for writing: {exc}") from None
    nested[key] = 1
    try:
        atomic_write_json(root / holder_file, {"pid": os.getpid(),
                                               "started": utc_stamp()})
        yield
    finally:
        nested.pop(key, None)
        with contextlib.suppress(OSError):
            (root / holder_file).unlink()
        lock.release()
