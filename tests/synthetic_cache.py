"""Synthetic galleries (``engine.index.synthetic.make_synthetic_gallery``) built once and kept between test
sessions: a million items take minutes to write (about 80 s of CPU, three and a half minutes on a loaded
2-core machine), so each is kept in a folder named by the function's arguments under ``LINEUP_SYNTHETIC_CACHE``
(default: ``lineup-synthetic-galleries`` in the system's temporary folder). A gallery is built in a folder of
its own and renamed into place when whole, so an interrupted build is never reused."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from engine.index.synthetic import make_synthetic_gallery

READY = "built-whole"


def cache_root() -> Path:
    return Path(os.environ.get("LINEUP_SYNTHETIC_CACHE") or Path(tempfile.gettempdir()) / "lineup-synthetic-galleries")


def cached_synthetic_gallery(items: int, *, dim: int = 192, views: Sequence[str] = ("rgb",), seed: int = 0) -> Path:
    """The folder of a synthetic gallery of these arguments, built on first use. Tests must not write to it."""
    folder = cache_root() / f"items{items}-dim{dim}-{'+'.join(views)}-seed{seed}"
    if (folder / READY).exists():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    partial = folder.with_name(f"{folder.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    make_synthetic_gallery(partial, items, dim=dim, views=views, seed=seed)
    (partial / READY).write_text("")
    try:
        partial.rename(folder)
    except OSError:  # another session finished the same gallery first
        shutil.rmtree(partial, ignore_errors=True)
    return folder
