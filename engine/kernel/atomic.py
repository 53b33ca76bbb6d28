"""Atomic file writes: write a temporary file beside the target, fsync it, then ``os.replace`` it into place.

Readers see either the old file or the whole new one, never a part. The temporary file is named
``.<name>.<random><suffix>`` (suffix ``.tmp`` unless given) in the target's folder and is removed when the
write fails. The new file keeps the mode of the file it replaces, else gets the usual ``0o666 & ~umask``
(owner-only inside ``engine.kernel.permissions.owner_only_umask``).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engine.kernel.permissions import current_umask


@contextlib.contextmanager
def atomic_target(path: Path, *, suffix: str = ".tmp") -> Iterator[Path]:
    """Yield a temporary path beside ``path`` for a writer that needs a file name (``faiss.write_index``,
    ``cv2.imwrite``, ``open``); on success fsync it and ``os.replace`` it onto ``path``, on any error remove it.

    Writers that choose the format by the name's ending (``cv2.imwrite``) want ``suffix=path.suffix``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o666 & ~current_umask()
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, mode)
        with open(tmp, "r+b") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def atomic_write_bytes(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically and return the path."""
    path = Path(path)
    with atomic_target(path) as tmp, open(tmp, "wb") as fh:
        fh.write(data)
    return path


def atomic_write_text(path: Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically and return the path."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, data: Any, *, indent: int | None = None) -> Path:
    """Serialise ``data`` as JSON and write it atomically (compact unless ``indent`` is given)."""
    separators = (",", ":") if indent is None else None
    return atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=indent, separators=separators))
