"""The record every dataset reader returns (``Sample``), the index over them, and the reader errors.

Errors name the file, the record (list index, line number or file name) and the field, so a broken
annotation file can be fixed without a debugger.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engine.kernel.paths import PathEscapeError, contained
from engine.kernel.vocabulary import IMAGE_MODALITIES as MODALITIES

_INTEGER = re.compile(r"-?\d+", re.ASCII)


class DatasetFormatError(ValueError):
    """A dataset file that does not follow its layout; names the file, the record and the field."""

    def __init__(self, file: Path | str, record: int | str | None, field_name: str | None, problem: str):
        self.file = Path(file)
        self.record = record
        self.field = field_name
        self.problem = problem
        where = [str(self.file)]
        if record is not None:
            where.append(f"record {record}" if isinstance(record, int) else str(record))
        if field_name is not None:
            where.append(f"field {field_name!r}")
        super().__init__(": ".join(where) + f": {problem}")


class DatasetNotFoundError(FileNotFoundError):
    """A dataset root, annotation file or image folder that does not exist."""

    def __init__(self, path: Path | str, what: str):
        self.path = Path(path)
        super().__init__(f"{what} not found: {self.path}")


@dataclass(frozen=True)
class Sample:
    """One image of a dataset with what the layout says about it.

    ``image`` is an absolute path; ``captions`` are the texts describing this image (empty for pure
    re-identification sets); ``camera`` keeps the layout's own label (``"c3"``, ``"cam3"``, ...);
    ``extra`` holds layout-specific fields (attributes, resolution, sequence numbers, ...).
    """

    image: Path
    identity: int
    split: str
    captions: tuple[str, ...] = ()
    camera: str | None = None
    modality: str = "rgb"
    outfit: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if self.modality not in MODALITIES:
            raise ValueError(f"sample {self.image}: modality {self.modality!r} is not one of {MODALITIES}")


@dataclass(frozen=True)
class DatasetIndex:
    """All samples of one dataset root, in the order the layout lists them."""

    name: str
    root: Path
    samples: tuple[Sample, ...]
    notes: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __len__(self) -> int:
        return len(self.samples)

    def __iter__(self) -> Iterator[Sample]:
        return iter(self.samples)

    @property
    def splits(self) -> tuple[str, ...]:
        """Split names in order of first appearance."""
        return tuple(dict.fromkeys(s.split for s in self.samples))

    @property
    def identities(self) -> tuple[int, ...]:
        return tuple(sorted({s.identity for s in self.samples}))

    @property
    def captions(self) -> int:
        """Number of captions over all samples."""
        return sum(len(s.captions) for s in self.samples)

    def split(self, name: str) -> DatasetIndex:
        """The samples of one split, as an index of their own."""
        if name not in self.splits:
            raise ValueError(f"dataset {self.name!r} at {self.root} has no split {name!r}; "
                             f"splits: {list(self.splits)}")
        return DatasetIndex(self.name, self.root, tuple(s for s in self.samples if s.split == name), self.notes)

    def by_identity(self) -> dict[int, list[Sample]]:
        out: dict[int, list[Sample]] = {}
        for sample in self.samples:
            out.setdefault(sample.identity, []).append(sample)
        return out


@dataclass(frozen=True)
class ReidProtocol:
    """A query/gallery evaluation protocol: which pairs are scored and which of those are positives.

    ``valid[i, j]`` says gallery item j is kept for query i; ``positive`` is a subset of ``valid``.
    Queries left without a positive have an all-False row (they are skipped, docs/methods.md §5).
    """

    query: tuple[Sample, ...]
    gallery: tuple[Sample, ...]
    valid: np.ndarray
    positive: np.ndarray

    @property
    def kept_queries(self) -> np.ndarray:
        """Indices of the queries that have at least one positive."""
        return np.flatnonzero(self.positive.any(axis=1))


# ---------------------------------------------------------------- field checks shared by the readers

def require_field(record: Any, file: Path, where: int | str, name: str) -> Any:
    """The value of ``name`` in a JSON object record, or a ``DatasetFormatError``."""
    if not isinstance(record, dict):
        raise DatasetFormatError(file, where, None, f"expected a JSON object, got {type(record).__name__}")
    if name not in record:
        raise DatasetFormatError(file, where, name, "missing")
    return record[name]


def as_identity(value: Any, file: Path, where: int | str, name: str) -> int:
    """An identity label: an int, or a string of digits (some releases quote them)."""
    if isinstance(value, bool):
        raise DatasetFormatError(file, where, name, f"expected an integer identity, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(value.strip())
    raise DatasetFormatError(file, where, name, f"expected an integer identity, got {value!r}")


def as_text(value: Any, file: Path, where: int | str, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DatasetFormatError(file, where, name, f"expected a non-empty string, got {value!r}")
    return value


def as_captions(value: Any, file: Path, where: int | str, name: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise DatasetFormatError(file, where, name, f"expected a non-empty list of strings, got {value!r:.80}")
    for k, caption in enumerate(value):
        if not isinstance(caption, str) or not caption.strip():
            raise DatasetFormatError(file, where, f"{name}[{k}]", f"expected a non-empty string, got {caption!r}")
    return tuple(value)


def as_relative_path(value: Any, file: Path, where: int | str, name: str) -> str:
    text = as_text(value, file, where, name)
    if Path(text).is_absolute():
        raise DatasetFormatError(file, where, name, f"expected a relative path, got {text!r}")
    return text


def existing_image(base: Path, relative: str, file: Path, where: int | str, name: str, check: bool,
                   allowed: Path | None = None) -> Path:
    """``base / relative``, refused (``DatasetFormatError``) when it resolves outside ``allowed`` (default
    ``base``) or, with ``check``, is no file."""
    path = base / relative
    try:
        contained(base if allowed is None else allowed, path, "image")
    except PathEscapeError as exc:
        raise DatasetFormatError(file, where, name, f"{relative!r} resolves to {exc.resolved}, outside the allowed "
                                                    f"folder {exc.root}") from None
    if check and not path.is_file():
        raise DatasetFormatError(file, where, name, f"image not found: {path}")
    return path


def require_dir(path: Path, what: str) -> Path:
    if not path.is_dir():
        raise DatasetNotFoundError(path, what)
    return path


def require_file(path: Path, what: str) -> Path:
    if not path.is_file():
        raise DatasetNotFoundError(path, what)
    return path
