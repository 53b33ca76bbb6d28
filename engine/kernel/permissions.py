"""Owner-only permissions for what Lineup writes about people: case databases (and their WAL/SHM files),
evidence, galleries (folder, crops, vectors, indexes) and reports.

Files are created 0600 and folders 0700 by running their writers inside ``owner_only_umask()``: the process
umask becomes 0o077 for the duration, so every file or folder made meanwhile (by Python, OpenCV, FAISS or
SQLite) is the owner's alone. The umask is process-wide; the context is re-entrant and thread-safe (the first
to enter sets it, the last to leave restores it), and other threads writing meanwhile only get stricter modes.
``current_umask()`` tells writers that pick a mode themselves (``engine.kernel.atomic``) which mask is in force.
``restrict(path)`` tightens what already exists (a database made by an older Lineup, its WAL and SHM files).
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

OWNER_UMASK = 0o077
OWNER_FILE_MODE = 0o600
OWNER_DIR_MODE = 0o700
DATABASE_COMPANIONS = ("-wal", "-shm", "-journal")


def _read_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_LOCK = threading.Lock()
_DEPTH = 0
_SAVED = _read_umask()  # read once at import, before any thread could create a file in the 0 window


def current_umask() -> int:
    """The umask in force: 0o077 inside ``owner_only_umask``, else the process's own."""
    with _LOCK:
        return OWNER_UMASK | _SAVED if _DEPTH else _SAVED


@contextlib.contextmanager
def owner_only_umask() -> Iterator[None]:
    """Files and folders created inside are owner-only (0600 / 0700 at most)."""
    global _DEPTH
    with _LOCK:
        if _DEPTH == 0:
            os.umask(OWNER_UMASK | _SAVED)
        _DEPTH += 1
    try:
        yield
    finally:
        with _LOCK:
            _DEPTH -= 1
            if _DEPTH == 0:
                os.umask(_SAVED)


def restrict(path: str | Path) -> None:
    """Make an existing file 0600 (a folder 0700) when it is ours; missing paths and others' files are left."""
    path = Path(path)
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode) or info.st_uid != os.getuid():
        return
    wanted = OWNER_DIR_MODE if stat.S_ISDIR(info.st_mode) else OWNER_FILE_MODE
    if stat.S_IMODE(info.st_mode) & ~wanted:
        with contextlib.suppress(PermissionError):
            os.chmod(path, stat.S_IMODE(info.st_mode) & wanted)


def restrict_database_files(path: str | Path) -> None:
    """A database file and its companions (WAL, SHM, rollback journal) owner-only; SQLite gives companions it
    creates later the database file's mode."""
    path = Path(path)
    restrict(path)
    for suffix in DATABASE_COMPANIONS:
        restrict(path.with_name(path.name + suffix))


def restrict_tree(root: str | Path) -> None:
    """``restrict`` a folder and everything below it (symbolic links are not followed)."""
    root = Path(root)
    restrict(root)
    for folder, subfolders, files in os.walk(root):
        for name in (*subfolders, *files):
            restrict(Path(folder) / name)
