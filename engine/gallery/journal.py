"""Redo journal for changes that replace several gallery files at once (remove, rebuild).

All new files are written first under temporary names; then ``journal.json`` lists the renames and the new
``gallery.json``; then the renames happen. Whoever finds a journal (``Gallery.open``, the next writer) rolls it
forward, so a crash leaves either the old gallery or the new one."""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from engine.atomic import atomic_write_json
from engine.gallery.errors import GalleryBusyError, GalleryCorruptError
from engine.gallery.writer_lock import holds_lock, writing
from engine.paths import PathEscapeError, contained
from engine.permissions import owner_only_umask

JOURNAL_FILE = "journal.json"
GALLERY_FILE = "gallery.json"
PENDING_SUFFIX = ".pending"
JOURNAL_WAIT_S = 10.0  # how long a reader waits for a live writer to finish applying its journal


def pending_name(path: Path) -> Path:
    return path.with_name(path.name + PENDING_SUFFIX)


def commit(root: Path, moves: list[tuple[Path, Path]], meta: dict, delete: list[str] = ()) -> None:
    """Record the journal, then apply it. ``moves`` are (pending file, final file) pairs inside ``root``."""
    record = {
        "moves": [[str(a.relative_to(root)), str(b.relative_to(root))] for a, b in moves],
        "gallery": meta,
        "delete": list(delete),
    }
    atomic_write_json(root / JOURNAL_FILE, record)
    roll_forward(root)


@owner_only_umask()
def roll_forward(root: Path) -> bool:
    """Finish a recorded change if one is pending; returns whether there was one."""
    path = root / JOURNAL_FILE
    if not path.exists():
        return False
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        moves, meta, delete = record["moves"], record["gallery"], record["delete"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise GalleryCorruptError(
            f"{path} is unreadable ({exc}); the last remove or rebuild cannot be finished"
        ) from None
    try:
        moves = [(contained(root, source, "journal move"), contained(root, target, "journal move"))
                 for source, target in moves]
        delete = [contained(root, relative, "journal deletion") for relative in delete]
    except (PathEscapeError, TypeError, ValueError) as exc:
        raise GalleryCorruptError(f"{path}: {exc}; the last remove or rebuild is not finished") from None
    for source, target in moves:
        if source.exists():
            os.replace(source, target)
    atomic_write_json(root / GALLERY_FILE, meta, indent=1)
    for relative in delete:
        with contextlib.suppress(FileNotFoundError):
            relative.unlink()
    path.unlink()
    return True


def clear_pending(root: Path) -> None:
    """Delete temporary files a crashed writer left before it recorded its journal."""
    for folder in (root, root / "vectors", root / "index"):
        if folder.is_dir():
            for leftover in folder.iterdir():
                if leftover.name.endswith((PENDING_SUFFIX, ".tmp")):
                    with contextlib.suppress(FileNotFoundError):
                        leftover.unlink()


def finish_pending(root: Path) -> None:
    """Apply a remove/rebuild journal found in ``root`` (see ``engine.gallery.journal``): the writer applying it
    now is waited for (it takes milliseconds); a journal a killed writer left is applied under the write lock."""
    deadline = time.monotonic() + JOURNAL_WAIT_S
    while (root / JOURNAL_FILE).exists():
        if holds_lock(root):
            roll_forward(root)
            return
        try:
            with writing(root):
                roll_forward(root)
            return
        except GalleryBusyError as exc:
            if time.monotonic() > deadline:
                raise GalleryBusyError(f"{exc}; its unfinished change ({JOURNAL_FILE}) was not applied within "
                                       f"{JOURNAL_WAIT_S:.0f} s") from None
            time.sleep(0.02)
