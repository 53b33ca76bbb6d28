"""Dataset readers: one module per on-disk layout, all returning a ``DatasetIndex`` of ``Sample`` records.

``read_dataset("cuhk-pedes", "/data/CUHK-PEDES")``, or from a command line
``read_spec("cuhk-pedes:/data/CUHK-PEDES")``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine.data.readers.cuhk_pedes import read_cuhk_pedes
from engine.data.readers.icfg_pedes import read_icfg_pedes
from engine.data.readers.market1501 import market1501_protocol, parse_market_name, read_market1501
from engine.data.readers.records import (
    MODALITIES,
    DatasetFormatError,
    DatasetIndex,
    DatasetNotFoundError,
    ReidProtocol,
    Sample,
)
from engine.data.readers.rstpreid import read_rstpreid
from engine.data.readers.sysu_mm01 import parse_sysu_path, read_sysu_mm01, sysu_mm01_protocol
from engine.data.readers.ufine6926 import read_ufine6926
from engine.data.readers.world import read_world

Reader = Callable[..., DatasetIndex]

READERS: dict[str, Reader] = {
    "cuhk-pedes": read_cuhk_pedes,
    "icfg-pedes": read_icfg_pedes,
    "rstpreid": read_rstpreid,
    "ufine6926": read_ufine6926,
    "sysu-mm01": read_sysu_mm01,
    "market1501": read_market1501,
    "world": read_world,
}


@dataclass(frozen=True)
class DatasetSpec:
    reader: str
    path: Path


def read_dataset(name: str, root: Path | str, *, check_images: bool = True) -> DatasetIndex:
    """Read the dataset at ``root`` with the reader registered as ``name``."""
    reader = READERS.get(name.lower())
    if reader is None:
        raise ValueError(f"unknown dataset reader {name!r}; readers: {sorted(READERS)}")
    return reader(Path(root), check_images=check_images)


def parse_dataset_spec(spec: str) -> DatasetSpec:
    """Split a ``READER:PATH`` string (only the first colon separates; the path may contain more)."""
    reader, sep, path = spec.partition(":")
    reader = reader.strip().lower()
    if not sep or not path.strip():
        raise ValueError(f"dataset {spec!r}: expected READER:PATH with READER one of {sorted(READERS)}")
    if reader not in READERS:
        raise ValueError(f"dataset {spec!r}: unknown reader {reader!r}; readers: {sorted(READERS)}")
    return DatasetSpec(reader, Path(path.strip()).expanduser())


def read_spec(spec: str, *, check_images: bool = True) -> DatasetIndex:
    """Read a dataset named by a ``READER:PATH`` string."""
    parsed = parse_dataset_spec(spec)
    return read_dataset(parsed.reader, parsed.path, check_images=check_images)


__all__ = [
    "MODALITIES", "READERS", "DatasetFormatError", "DatasetIndex", "DatasetNotFoundError", "DatasetSpec",
    "ReidProtocol", "Sample", "market1501_protocol", "parse_dataset_spec", "parse_market_name", "parse_sysu_path",
    "read_dataset", "read_spec", "sysu_mm01_protocol",
]
