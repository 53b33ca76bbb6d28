"""``vectors/<view>.f16.npy``: an ordinary float16 .npy file with a fixed 128-byte header, so rows can be
appended in place. ``gallery.json`` holds the committed row count; bytes past it are an interrupted append
that readers ignore and the next writer trims."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import numpy as np

from engine.index.errors import GalleryCorruptError
from engine.kernel.atomic import atomic_write_bytes

HEADER_BYTES = 128
DTYPE = np.dtype("<f2")
_MAGIC = b"\x93NUMPY\x01\x00"


def _header(rows: int, dim: int) -> bytes:
    text = "{'descr': '<f2', 'fortran_order': False, 'shape': (" + f"{rows}, {dim}), " + "}"
    body = text.ljust(HEADER_BYTES - len(_MAGIC) - 2 - 1) + "\n"
    header = _MAGIC + len(body).to_bytes(2, "little") + body.encode("latin1")
    assert len(header) == HEADER_BYTES
    return header


def read_header(path: Path) -> tuple[int, int]:
    """(rows, dim) recorded in the header; raises ``GalleryCorruptError`` for anything but our layout."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(HEADER_BYTES)
    except OSError as exc:
        raise GalleryCorruptError(f"cannot read vectors file {path}: {exc}") from exc
    declared = int.from_bytes(raw[8:10], "little") if len(raw) >= 10 else -1
    if len(raw) < HEADER_BYTES or not raw.startswith(_MAGIC) or declared != HEADER_BYTES - 10:
        raise GalleryCorruptError(f"vectors file {path} does not start with a {HEADER_BYTES}-byte .npy header")
    try:
        meta = ast.literal_eval(raw[10:].decode("latin1").strip())
        rows, dim = meta["shape"]
        ok = meta["descr"] == "<f2" and not meta["fortran_order"]
    except (ValueError, SyntaxError, KeyError, TypeError):
        ok = False
    if not ok:
        raise GalleryCorruptError(f"vectors file {path} has an unreadable or non-float16 header")
    return int(rows), int(dim)


def create(path: Path, dim: int) -> None:
    """An empty vectors file (shape (0, dim)), written atomically."""
    atomic_write_bytes(path, _header(0, dim))


def check(path: Path, rows: int, dim: int) -> None:
    """The file holds at least ``rows`` rows of ``dim`` float16 values (its header may lag behind)."""
    if not path.is_file():
        raise GalleryCorruptError(f"vectors file {path} is missing")
    _, header_dim = read_header(path)
    if header_dim != dim:
        raise GalleryCorruptError(f"vectors file {path} has dimension {header_dim}, gallery.json says {dim}")
    size = path.stat().st_size
    needed = HEADER_BYTES + rows * dim * DTYPE.itemsize
    if size < needed:
        raise GalleryCorruptError(
            f"vectors file {path} holds {(size - HEADER_BYTES) // (dim * DTYPE.itemsize)} rows, gallery.json "
            f"records {rows}: vectors were lost, the items must be added again"
        )


def rows_view(path: Path, rows: int, dim: int) -> np.ndarray:
    """Read-only memory map of the first ``rows`` rows."""
    if rows == 0:
        return np.zeros((0, dim), dtype=DTYPE)
    return np.memmap(path, dtype=DTYPE, mode="r", offset=HEADER_BYTES, shape=(rows, dim))


def append(path: Path, committed_rows: int, dim: int, block: np.ndarray) -> None:
    """Write ``block`` after the committed rows (dropping any uncommitted tail first) and fsync.

    The header is not touched: ``set_rows`` updates it once the batch is committed."""
    data = np.ascontiguousarray(block, dtype=DTYPE)
    with open(path, "r+b") as fh:
        start = HEADER_BYTES + committed_rows * dim * DTYPE.itemsize
        fh.truncate(start)
        fh.seek(start)
        fh.write(memoryview(data.reshape(-1).view(np.uint8)))
        fh.flush()
        os.fsync(fh.fileno())


def set_rows(path: Path, rows: int, dim: int) -> None:
    """Trim the file to ``rows`` rows and make its header say so."""
    with open(path, "r+b") as fh:
        fh.truncate(HEADER_BYTES + rows * dim * DTYPE.itemsize)
        fh.seek(0)
        fh.write(_header(rows, dim))
        fh.flush()
        os.fsync(fh.fileno())


def write_new(path: Path, array: np.ndarray) -> None:
    """Write a complete vectors file at ``path`` (a temporary name the caller later moves into place)."""
    data = np.ascontiguousarray(array, dtype=DTYPE)
    with open(path, "wb") as fh:
        fh.write(_header(data.shape[0], data.shape[1]))
        fh.write(memoryview(data.reshape(-1).view(np.uint8)))
        fh.flush()
        os.fsync(fh.fileno())
