"""Content digests of a gallery's items (docs/hardening.md, "Content-bound gallery fingerprints").

Each item has stored digests, one row of ``content.sha256`` (row i = item row i, fixed width): the SHA-256 of
its ``items.jsonl`` record (its line, every field: id, source, frame, time, camera, box, crop path, crop and
source SHA-256, attributes …; Lineup writes each record in one canonical form, ``GalleryItem.to_json``, and a
remove copies lines unchanged, so any change to the bytes is a change to the record), then the SHA-256 of its
float16 vector bytes in each view, views in name order.
The item's content digest is the SHA-256 of that row; the gallery's content chain runs over the items in row
order, ``H_0`` = 32 zero bytes, ``H_n = SHA-256(H_{n-1} ‖ d_n)``, and ``gallery.json`` records ``H_count``
(``content_head``), as does each recorded version for its first n items.

Adding items digests only the new items and carries the chain on from the recorded head; removing items keeps
the kept items' stored rows and re-chains them; setting a view digests only that view's vectors. A write
never re-digests the content already recorded, so a change made behind the gallery's back stays visible: the
stored rows say what each item held when it was added, and ``verify`` names the items whose record or vectors
no longer match. Attribute evidence (``engine.index.evidence_table``) is not in the chain.

The file is appended past the committed rows like ``items.jsonl``: bytes past ``count`` rows are an interrupted
add that readers ignore and the next writer trims. A gallery without ``content_head`` (made before digests were
kept) has a fingerprint over model, views and item ids only until a write or ``lineup gallery rebuild``
records its digests.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from engine.index.errors import GalleryCorruptError

CONTENT_FILE = "content.sha256"
HEAD_KEY = "content_head"
DIGEST_BYTES = 32
ZERO_HEAD = "0" * 64
_RECORD_TAG = b"lineup item record\n"
_VECTOR_TAG = b"lineup item vector\n"


def view_names(views: Iterable[str]) -> list[str]:
    """The views in the order their digests follow the record digest in a row: by name."""
    return sorted(views)


def row_width(views: Iterable[str]) -> int:
    """Bytes per item row: the record digest and one digest per view."""
    return DIGEST_BYTES * (1 + len(list(views)))


def record_digest(line: bytes) -> bytes:
    """SHA-256 of an item's ``items.jsonl`` line (without its line end), as Lineup wrote it."""
    return hashlib.sha256(_RECORD_TAG + line.rstrip(b"\n")).digest()


def vector_digest(view: str, row: np.ndarray) -> bytes:
    """SHA-256 of one stored vector: the view's name, its dimension and the float16 little-endian bytes."""
    data = np.ascontiguousarray(row, dtype="<f2")
    head = _VECTOR_TAG + f"{view}\n{data.shape[-1]}\n".encode()
    return hashlib.sha256(head + data.tobytes()).digest()


def item_parts(line: bytes, rows: Sequence[np.ndarray], views: Sequence[str]) -> bytes:
    """One item's stored digests: its record's, then its vector's in each of ``views`` (in that order)."""
    return record_digest(line) + b"".join(vector_digest(view, row) for view, row in zip(views, rows, strict=True))


def parts_of(lines: Sequence[bytes], blocks: Mapping[str, np.ndarray]) -> bytes:
    """The stored digest rows of consecutive items: ``lines[i]`` is an ``items.jsonl`` line and
    ``blocks[view][i]`` its vector."""
    names = view_names(blocks)
    arrays = [np.ascontiguousarray(blocks[name], dtype="<f2") for name in names]
    return b"".join(item_parts(line, [array[i] for array in arrays], names) for i, line in enumerate(lines))



def digests(parts: bytes, width: int) -> list[bytes]:
    """Each item's content digest (SHA-256 of its stored row)."""
    return [hashlib.sha256(parts[start : start + width]).digest() for start in range(0, len(parts), width)]


def chain(parts: bytes, width: int, start: str = ZERO_HEAD) -> str:
    """The chain head after the items of ``parts`` (hex), carried on from head ``start``."""
    head = bytes.fromhex(start)
    for digest in digests(parts, width):
        head = hashlib.sha256(head + digest).digest()
    return head.hex()


def path_of(root: Path) -> Path:
    return Path(root) / CONTENT_FILE


def read_parts(root: Path, rows: int, width: int) -> bytes:
    """The stored rows of the first ``rows`` items; ``GalleryCorruptError`` when the file is missing or short."""
    path = path_of(root)
    try:
        with open(path, "rb") as fh:
            data = fh.read(rows * width)
    except FileNotFoundError:
        raise GalleryCorruptError(f"content digests file {path} is missing; `lineup gallery rebuild` computes "
                                  f"it again from the items and vectors as they are now") from None
    except OSError as exc:
        raise GalleryCorruptError(f"content digests file {path} cannot be read: {exc}") from None
    if len(data) < rows * width:
        raise GalleryCorruptError(f"content digests file {path} holds {len(data) // width} rows, the gallery has "
                                  f"{rows} items; `lineup gallery rebuild` computes it again from the items and "
                                  f"vectors as they are now")
    return data


def append_parts(root: Path, committed_rows: int, width: int, data: bytes) -> None:
    """Write ``data`` after the committed rows (dropping an uncommitted tail first) and fsync."""
    path = path_of(root)
    with open(path, "r+b" if path.exists() else "w+b") as fh:
        start = committed_rows * width
        fh.truncate(start)
        fh.seek(start)
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def trim(root: Path, rows: int, width: int) -> None:
    """Drop an interrupted add's rows past the committed ones."""
    path = path_of(root)
    if path.exists() and path.stat().st_size > rows * width:
        with open(path, "r+b") as fh:
            fh.truncate(rows * width)


def write_new(path: Path, data: bytes) -> None:
    """Write a complete digests file at ``path`` (a temporary name the caller moves into place) and fsync."""
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def with_view(parts: bytes, views: Sequence[str], view: str, block: np.ndarray) -> tuple[bytes, list[str]]:
    """Stored rows with the digests of ``view`` (every item's vector in ``block``) set, the other digests kept;
    returns the new rows and their views in order."""
    names = view_names(views)
    width = row_width(names)
    count = len(parts) // width if width else 0
    table = np.frombuffer(parts, dtype=np.uint8).reshape(count, 1 + len(names), DIGEST_BYTES)
    columns = {name: table[:, 1 + i] for i, name in enumerate(names)}
    half = np.asarray(block)
    columns[view] = np.frombuffer(b"".join(vector_digest(view, half[i]) for i in range(count)),
                                  dtype=np.uint8).reshape(count, DIGEST_BYTES)
    new_names = view_names(columns)
    out = np.concatenate([table[:, :1], *(columns[name][:, None] for name in new_names)], axis=1)
    return np.ascontiguousarray(out).tobytes(), new_names


def compute(items_path: Path, items_bytes: int, stored: Mapping[str, np.ndarray], count: int,
            chunk: int = 4096) -> bytes:
    """Digest rows computed now from ``items.jsonl`` (its committed bytes) and the stored vectors."""
    with open(items_path, "rb") as fh:
        lines = fh.read(items_bytes).split(b"\n")[:count]
    if len(lines) < count:
        raise GalleryCorruptError(f"{items_path} holds {len(lines)} items, gallery.json records {count}")
    out = []
    for start in range(0, count, chunk):
        stop = min(count, start + chunk)
        blocks = {view: np.asarray(array[start:stop]) for view, array in stored.items()}
        out.append(parts_of(lines[start:stop], blocks))
    return b"".join(out)
