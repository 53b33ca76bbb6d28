"""Atomic file writes: write a temporary file beside the target, then ``os.replace`` it into place."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _umask()


def atomic_write_text(path: Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` so that readers see either the old file or the whole new one.

    The new file keeps the mode of the file it replaces, else gets the usual ``0o666 & ~umask``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o666 & ~_UMASK
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def atomic_write_json(path: Path, data: Any, *, indent: int | None = None) -> Path:
    """Serialise ``data`` as JSON and write it atomically (compact unless ``indent`` is given)."""
    separators = (",", ":") if indent is None else None
    return atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=indent, separators=separators))
