"""Synthetic galleries of any size, written through the gallery's own writer (``Gallery.add_stream``) chunk by
chunk, for scale benchmarks and tests (docs/scaling.md).

Row r is item ``syn000000r`` (nine digits) seen by camera ``cam{r % cameras}`` at ``(r // cameras) * 0.2`` s,
person ``p{r // per_identity}`` on track ``r // per_identity``. Its vector in each view is a unit vector near its
person's centre, which itself lies near one of 1024 shared "outfit" directions, so the vectors cluster as
appearance vectors do (an IVF index meets them as it meets real ones). Everything is a function of the seed, the
view and the row: the same arguments give the same gallery whatever the chunk size.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from engine.index import indexes
from engine.index.errors import GalleryInputError
from engine.index.layout import ProgressFn
from engine.index.store import Gallery

SYNTHETIC_FINGERPRINT = "synthetic-gallery"
_BLOCK = 4096  # rows drawn from one random stream
_OUTFITS = 1024
_PEOPLE_TABLE = 8192
_PERSON_SPREAD = 0.6
_ITEM_SPREAD = 0.6


def item_id(row: int) -> str:
    return f"syn{row:09d}"


def synthetic_items(start: int, count: int, *, cameras: int = 8, per_identity: int = 20) -> list[dict]:
    """The records of rows ``start .. start + count - 1``."""
    out = []
    for row in range(start, start + count):
        camera = row % cameras
        person = row // per_identity
        out.append({"id": item_id(row), "source": f"synthetic/cam{camera:02d}.mp4", "frame": row // cameras,
                    "time": (row // cameras) * 0.2, "camera": f"cam{camera:02d}", "box": (8.0, 16.0, 64.0, 128.0),
                    "track": person, "identity": f"p{person:08d}"})
    return out


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _stream(seed: int, view: str, *parts: int) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(view.encode("utf-8")), *parts])


def synthetic_vectors(start: int, count: int, dim: int, *, view: str = "rgb", seed: int = 0,
                      per_identity: int = 20) -> np.ndarray:
    """float32 unit vectors [count, dim] of rows ``start .. start + count - 1`` in ``view``."""
    outfits = _unit(_stream(seed, view, 1).standard_normal((_OUTFITS, dim), dtype=np.float32))
    people = _unit(_stream(seed, view, 2).standard_normal((_PEOPLE_TABLE, dim), dtype=np.float32))
    out = np.empty((count, dim), dtype=np.float32)
    first_block, last_block = start // _BLOCK, (start + count - 1) // _BLOCK
    for block in range(first_block, last_block + 1):
        rows = np.arange(block * _BLOCK, (block + 1) * _BLOCK, dtype=np.int64)
        noise = _stream(seed, view, 3, block).standard_normal((_BLOCK, dim), dtype=np.float32)
        person = rows // per_identity
        centre = _unit(outfits[person % _OUTFITS] + _PERSON_SPREAD * people[(person * 7919) % _PEOPLE_TABLE])
        vectors = _unit(centre + _ITEM_SPREAD * noise / np.sqrt(dim, dtype=np.float32))
        a, b = max(start, rows[0]), min(start + count, rows[-1] + 1)
        out[a - start : b - start] = vectors[a - rows[0] : b - rows[0]]
    return out


def synthetic_chunks(start: int, items: int, *, dim: int, views: Sequence[str], seed: int, chunk: int,
                     cameras: int, per_identity: int) -> Iterator[tuple[list[dict], dict[str, np.ndarray]]]:
    """``(records, vectors by view)`` of rows ``start .. start + items - 1``, ``chunk`` rows at a time."""
    for first in range(start, start + items, chunk):
        count = min(chunk, start + items - first)
        yield (synthetic_items(first, count, cameras=cameras, per_identity=per_identity),
               {view: synthetic_vectors(first, count, dim, view=view, seed=seed, per_identity=per_identity)
                for view in views})


def make_synthetic_gallery(path: str | Path, items: int, *, dim: int = 192, views: Sequence[str] = ("rgb",),
                           seed: int = 0, chunk: int = 65_536, cameras: int = 8, per_identity: int = 20,
                           ivf_threshold: int = indexes.DEFAULT_IVF_THRESHOLD,
                           progress: ProgressFn | None = None) -> Gallery:
    """A gallery of ``items`` synthetic items in ``path`` (created; or, when it holds a synthetic gallery of the
    same views, grown to ``items``), written by ``Gallery.add_stream`` in chunks of ``chunk`` items. Returns it
    open. ``progress(done, items)`` counts items written."""
    for name, value, least in (("items", items, 0), ("dim", dim, 1), ("chunk", chunk, 1), ("cameras", cameras, 1),
                               ("per_identity", per_identity, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise GalleryInputError(f"{name} must be a whole number ≥ {least}, got {value!r}")
    views = tuple(views)
    root = Path(path)
    if (root / "gallery.json").exists():
        gallery = Gallery.open(root, finish_changes=True)
        if gallery.views != {view: dim for view in views}:
            raise GalleryInputError(f"{root} holds a gallery of views {gallery.views}, not {dict.fromkeys(views, dim)}")
    else:
        gallery = Gallery.create(root, {view: dim for view in views}, SYNTHETIC_FINGERPRINT,
                                 ivf_threshold=ivf_threshold)
    start = len(gallery)
    if start < items:
        chunks = synthetic_chunks(start, items - start, dim=dim, views=views, seed=seed, chunk=chunk,
                                  cameras=cameras, per_identity=per_identity)
        report = None if progress is None else (lambda done, _total: progress(start + done, items))
        gallery.add_stream(chunks, batch_size=chunk, progress=report, total=items - start)
    return gallery
