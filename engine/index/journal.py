"""Redo journal for changes that replace several gallery files at once (remove, rebuild).

All new files are written first under temporary names; then ``journal.json`` lists the renames and the new
``gallery.json``; then the renames happen. A crash leaves either the old gallery or the new one: the next
writer, holding the write lock, rolls a journal forward. Readers never apply one (a read-only command changes
nothing): they wait for the live writer that is applying it, and refuse a journal no writer is applying.

A journal is applied only when it is one Lineup writes for this gallery: it carries the gallery's identity
(``gallery_identity``), every move renames ``X.pending`` to ``X`` in the same folder, and it deletes only
crops (docs/hardening.md)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from pathlib import Path

from engine.index.errors import GalleryBusyError, GalleryCorruptError, GalleryPendingChangeError
from engine.index.writer_lock import holds_lock, writing
from engine.kernel import jsonio
from engine.kernel.atomic import atomic_write_json
from engine.kernel.paths import PathEscapeError, contained
from engine.kernel.permissions import owner_only_umask

JOURNAL_FILE = "journal.json"
GALLERY_FILE = "gallery.json"
PENDING_SUFFIX = ".pending"
JOURNAL_WAIT_S = 10.0  # how long a reader waits for a live writer to finish applying its journal


def pending_name(path: Path) -> Path:
    return path.with_name(path.name + PENDING_SUFFIX)


def gallery_identity(meta: dict) -> str:
    """The gallery's identity: its ``id`` (made at creation), or for a gallery made before ids were kept, a
    digest of its creation time and model fingerprint."""
    if isinstance(meta.get("id"), str) and meta["id"]:
        return meta["id"]
    seed = f"{meta.get('created')}\n{meta.get('model_fingerprint')}"
    return "legacy-" + hashlib.sha256(seed.encode("utf-8")).hexdigest()[:32]


def commit(root: Path, moves: list[tuple[Path, Path]], meta: dict, delete: list[str] = ()) -> None:
    """Record the journal, then apply it. ``moves`` are (pending file, final file) pairs inside ``root``; the
    caller holds the write lock."""
    record = {
        "gallery_id": gallery_identity(meta),
        "moves": [[str(a.relative_to(root)), str(b.relative_to(root))] for a, b in moves],
        "gallery": meta,
        "delete": list(delete),
    }
    atomic_write_json(root / JOURNAL_FILE, record)
    roll_forward(root)


def _current_identity(root: Path) -> str | None:
    try:
        meta = jsonio.read(root / GALLERY_FILE, expect=dict)
    except (OSError, ValueError):
        return None
    return gallery_identity(meta)


def _checked(root: Path, path: Path) -> tuple[list[tuple[Path, Path]], dict, list[Path]]:
    """The journal's moves, new metadata and deletions, or ``GalleryCorruptError`` saying why it is not one
    this gallery's writer wrote."""
    try:
        record = jsonio.read(path, expect=dict)
        moves, meta, delete, tag = record["moves"], record["gallery"], record["delete"], record.get("gallery_id")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise GalleryCorruptError(
            f"{path} is unreadable ({exc}); the last remove or rebuild cannot be finished"
        ) from None
    if not isinstance(meta, dict) or not isinstance(moves, list) or not isinstance(delete, list):
        raise GalleryCorruptError(f"{path} is not a gallery journal (wrong field types); it was not applied")
    identity = _current_identity(root)
    if tag is None or tag != identity or gallery_identity(meta) != identity:
        raise GalleryCorruptError(f"{path} was not written for this gallery (it names gallery {tag!r}, the gallery "
                                  f"is {identity!r}); it was not applied — move it away if it is not yours")
    try:
        moves = [(contained(root, source, "journal move"), contained(root, target, "journal move"))
                 for source, target in moves]
        delete = [contained(root, relative, "journal deletion") for relative in delete]
    except (PathEscapeError, TypeError, ValueError) as exc:
        raise GalleryCorruptError(f"{path}: {exc}; the last remove or rebuild is not finished") from None
    for source, target in moves:
        if source != pending_name(target):
            raise GalleryCorruptError(f"{path}: it would move {source.name} onto {target.name}, not a pending file "
                                      f"onto its own name; it was not applied")
    crops = (root / "crops").resolve()
    for relative in delete:
        if crops not in relative.resolve().parents:
            raise GalleryCorruptError(f"{path}: it would delete {relative.name}, which is not a crop; it was not "
                                      f"applied")
    return moves, meta, delete


@owner_only_umask()
def roll_forward(root: Path) -> bool:
    """Finish a recorded change if one is pending (the caller holds the write lock); returns whether there
    was one."""
    path = root / JOURNAL_FILE
    if not path.exists():
        return False
    if not holds_lock(root):
        raise GalleryBusyError(f"{path}: only the gallery's writer, holding its write lock, applies a journal")
    moves, meta, delete = _checked(root, path)
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
    for folder in (root, root / "vectors", root / "index", root / "columns"):
        if folder.is_dir():
            for leftover in folder.iterdir():
                if leftover.name.endswith((PENDING_SUFFIX, ".tmp")):
                    with contextlib.suppress(FileNotFoundError):
                        leftover.unlink()


def finish_pending(root: Path) -> None:
    """For a writer: apply a remove/rebuild journal found in ``root``. The writer applying it now is waited for
    (it takes milliseconds); a journal a killed writer left is checked and applied under the write lock."""
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


def await_pending(root: Path) -> None:
    """For a reader: wait while a live writer applies its journal; never apply one. A journal no writer is
    applying (a writer was killed mid-change, or the file was put there) is refused with
    ``GalleryPendingChangeError``, which says how to finish it."""
    deadline = time.monotonic() + JOURNAL_WAIT_S
    path = root / JOURNAL_FILE
    while path.exists():
        if holds_lock(root):
            return  # this thread is the writer; it applies its own journal
        try:
            with writing(root):
                orphaned = path.exists()
        except GalleryBusyError:
            orphaned = False
        if orphaned:
            raise GalleryPendingChangeError(
                f"{path}: the gallery has an unfinished remove or rebuild that no writer is applying, and a "
                f"read-only command does not apply it; run `lineup gallery rebuild {root}` to check and finish it")
        if time.monotonic() > deadline:
            raise GalleryBusyError(f"{path}: a writer has been applying this change for over "
                                   f"{JOURNAL_WAIT_S:.0f} s; try again later")
        time.sleep(0.02)
