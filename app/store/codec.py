"""Compact forms of a step's large outputs.

- kept ids: UTF-8 ids joined by newlines, zlib-compressed (ids share prefixes, so 50 000 ids take ~100 KB);
- kept scores: little-endian float32, zlib-compressed, aligned with the ids;
- score histogram over every ranked candidate (what the distribution plot draws), optionally with the
  histogram of the ground-truth relevant candidates, as a small JSON object.

A blob per step (not a row per item) keeps a 100 000-candidate step to one row write.

Large id lists are joined, split, checked and converted ``CHUNK`` ids at a time: one call into C over half a
million ids (a join, a split, a set) holds the interpreter lock for 30 to 50 ms, and the window's thread, waiting
for the lock while a worker records or reads such a step, would stall that long each time (docs/scaling.md).
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from app.store.errors import StoreInputError

HISTOGRAM_BINS = 128
_LEVEL = 6
#: Ids (or scores) per call into C: a few milliseconds of holding the interpreter lock each.
CHUNK = 32_768
#: Bytes of the joined ids text decoded and split per call (about ``CHUNK`` ids of ~30 characters).
_TEXT_CHUNK = 1 << 20


def chunks(values: Sequence) -> Iterator[Sequence]:
    """``values`` cut into slices of ``CHUNK``, in order."""
    for start in range(0, len(values), CHUNK):
        yield values[start : start + CHUNK]


def ids_text(ids: Sequence[str]) -> bytes:
    """The ids as newline-joined UTF-8 (the form that is hashed); each id must be non-empty, without newline."""
    parts = []
    for chunk in chunks(ids):
        for item_id in chunk:
            if not isinstance(item_id, str) or not item_id or "\n" in item_id or "\r" in item_id:
                raise StoreInputError(f"item ids must be non-empty strings without line breaks, got {item_id!r}")
        parts.append("\n".join(chunk).encode("utf-8"))
    return b"\n".join(parts)


def has_duplicates(ids: Sequence[str]) -> bool:
    """Whether an id appears twice."""
    seen: set[str] = set()
    for chunk in chunks(ids):
        seen.update(chunk)
    return len(seen) != len(ids)


def encode_ids(ids: Sequence[str]) -> tuple[bytes, str]:
    """(compressed blob, SHA-256 hex of the uncompressed text)."""
    text = ids_text(ids)
    return zlib.compress(text, _LEVEL), hashlib.sha256(text).hexdigest()


def decode_ids(blob: bytes) -> tuple[str, ...]:
    text = zlib.decompress(blob)
    ids: list[str] = []
    start, size = 0, len(text)
    while start < size:  # cut at a newline past each chunk: a newline byte never sits inside a UTF-8 character
        cut = text.find(b"\n", start + _TEXT_CHUNK) if start + _TEXT_CHUNK < size else -1
        stop = size if cut < 0 else cut
        ids.extend(text[start:stop].decode("utf-8").split("\n"))
        start = stop + 1
    return tuple(ids)


def encode_scores(scores: Sequence[float] | np.ndarray) -> bytes:
    array = np.asarray(scores, dtype="<f4")
    if array.ndim != 1:
        raise StoreInputError(f"scores must be one-dimensional, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise StoreInputError("scores must be finite numbers (found NaN or infinity)")
    return zlib.compress(array.tobytes(), _LEVEL)


def decode_scores(blob: bytes) -> np.ndarray:
    return np.frombuffer(zlib.decompress(blob), dtype="<f4")


def float_tuple(values: np.ndarray) -> tuple[float, ...]:
    """``values`` as a tuple of Python floats."""
    floats: list[float] = []
    for chunk in chunks(np.asarray(values)):
        floats.extend(chunk.tolist())
    return tuple(floats)


def score_histogram(scores: Sequence[float] | np.ndarray, relevant: Sequence[bool] | np.ndarray | None,
                    bins: int = HISTOGRAM_BINS) -> dict[str, Any]:
    """Counts of the candidates' scores in ``bins`` equal bins over [min, max] (a constant score gets one
    bin of width zero: ``low == high`` and all counts in bin 0), with ``relevant`` counts when ground truth
    is given, plus count, min, max, mean and standard deviation."""
    values = np.asarray(scores, dtype=np.float64)
    if values.ndim != 1:
        raise StoreInputError(f"scores must be one-dimensional, got shape {values.shape}")
    if not np.isfinite(values).all():
        raise StoreInputError("scores must be finite numbers (found NaN or infinity)")
    flags = None
    if relevant is not None:
        flags = np.asarray(relevant, dtype=bool)
        if flags.shape != values.shape:
            raise StoreInputError(f"relevant has shape {flags.shape}, scores have {values.shape}")
    if values.size == 0:
        return {"count": 0, "bins": bins, "low": None, "high": None, "counts": [], "relevant": None,
                "mean": None, "std": None}
    low, high = float(values.min()), float(values.max())
    if high > low:
        position = np.minimum(((values - low) / (high - low) * bins).astype(np.int64), bins - 1)
    else:
        position = np.zeros(values.size, dtype=np.int64)
    counts = np.bincount(position, minlength=bins)
    relevant_counts = None if flags is None else np.bincount(position[flags], minlength=bins).tolist()
    return {"count": int(values.size), "bins": bins, "low": low, "high": high, "counts": counts.tolist(),
            "relevant": relevant_counts, "mean": float(values.mean()), "std": float(values.std())}


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
