"""The evidence folder beside a case database: query images (sketches, IR stills) copied in by content.

Layout: ``<database file name>.evidence/case-<id>/<sha256><suffix>``. Files are written before the database
transaction that refers to them (temporary file, fsync, ``os.replace``); a process killed in between leaves
only an unreferenced file, which the next identical query reuses.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from app.store.errors import StoreInputError

_SUFFIX = re.compile(r"\.[a-z0-9]{1,8}")


@dataclass(frozen=True)
class EvidenceSource:
    """Image bytes to keep with a case: from a file (``original_path`` set) or made in the app (None)."""

    data: bytes
    suffix: str
    original_path: str | None

    @classmethod
    def from_file(cls, path: str | Path) -> EvidenceSource:
        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise StoreInputError(f"evidence file {path} cannot be read: {exc.strerror or exc}") from None
        return cls(data, path.suffix, str(path.resolve()))

    @classmethod
    def from_bytes(cls, data: bytes, suffix: str = ".png") -> EvidenceSource:
        if not isinstance(data, bytes | bytearray) or not data:
            raise StoreInputError("evidence bytes must be a non-empty bytes object")
        return cls(bytes(data), suffix, None)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def stored_name(self) -> str:
        suffix = self.suffix.lower()
        return self.sha256 + (suffix if _SUFFIX.fullmatch(suffix) else ".bin")


def evidence_root(db_path: str | Path) -> Path:
    db_path = Path(db_path)
    return db_path.with_name(db_path.name + ".evidence")


def case_folder(root: Path, case_id: int) -> Path:
    return root / f"case-{case_id}"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def store_evidence(root: Path, case_id: int, source: EvidenceSource) -> Path:
    """Write ``source`` into the case's folder unless an intact copy is already there; return its path.
    Folders and file are owner-only (``engine.kernel.permissions``)."""
    from engine.kernel.permissions import owner_only_umask  # a stdlib-only kernel module, imported where it is used

    with owner_only_umask():
        return _store(root, case_id, source)


def _store(root: Path, case_id: int, source: EvidenceSource) -> Path:
    folder = case_folder(root, case_id)
    target = folder / source.stored_name
    if target.is_file() and sha256_file(target) == source.sha256:
        return target
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(source.data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    directory = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
    return target
