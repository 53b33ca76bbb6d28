"""Dataset readers: one module per on-disk layout, all returning a ``DatasetIndex`` of ``Sample`` records.

``read_dataset("cuhk-pedes", "/data/CUHK-PEDES")``, or from a command line
``read_spec("cuhk-pedes:/data/CUHK-PEDES")`` (``cuhk-pedes:export.json?root=/data`` lets the file's image paths
lead anywhere under ``/data``; by default they stay inside the dataset folder given).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine.ingest.datasets.cuhk_pedes import read_cuhk_pedes
from engine.ingest.datasets.icfg_pedes import read_icfg_pedes
from engine.ingest.datasets.market1501 import market1501_protocol, parse_market_name, read_market1501
from engine.ingest.datasets.pku_sketch import pku_sketch_protocol, read_pku_sketch
from engine.ingest.datasets.records import (
    MODALITIES,
    DatasetFormatError,
    DatasetIndex,
    DatasetNotFoundError,
    ReidProtocol,
    Sample,
)
from engine.ingest.datasets.rstpreid import read_rstpreid
from engine.ingest.datasets.sysu_mm01 import parse_sysu_path, read_sysu_mm01, sysu_mm01_protocol
from engine.ingest.datasets.ufine6926 import read_ufine6926
from engine.ingest.datasets.world import read_world

Reader = Callable[..., DatasetIndex]

READERS: dict[str, Reader] = {
    "cuhk-pedes": read_cuhk_pedes,
    "icfg-pedes": read_icfg_pedes,
    "rstpreid": read_rstpreid,
    "ufine6926": read_ufine6926,
    "sysu-mm01": read_sysu_mm01,
    "market1501": read_market1501,
    "pku-sketch": read_pku_sketch,
    "world": read_world,
}


ROOT_OPTION = "?root="


@dataclass(frozen=True)
class DatasetSpec:
    reader: str
    path: Path
    allowed_root: Path | None = None


#: Readers that take image paths from an annotation file (the others list folders); they accept ``allowed_root``.
PATH_READERS = frozenset({"cuhk-pedes", "icfg-pedes", "rstpreid", "ufine6926"})


def read_dataset(name: str, root: Path | str, *, check_images: bool = True,
                 allowed_root: Path | str | None = None) -> DatasetIndex:
    """Read the dataset at ``root`` with the reader registered as ``name``.

    Image paths read from its files must resolve inside the dataset folder given (``engine.kernel.paths``), or inside
    ``allowed_root`` when given: e.g. the folder holding both an exported annotation file and the world its
    ``..`` paths point into."""
    reader = READERS.get(name.lower())
    if reader is None:
        raise ValueError(f"unknown dataset reader {name!r}; readers: {sorted(READERS)}")
    if allowed_root is None:
        return reader(Path(root), check_images=check_images)
    if name.lower() not in PATH_READERS:
        raise ValueError(f"dataset reader {name!r} lists its folders and takes no allowed root")
    return reader(Path(root), check_images=check_images, allowed_root=Path(allowed_root))


def parse_dataset_spec(spec: str) -> DatasetSpec:
    """Split a ``READER:PATH`` string (only the first colon separates; the path may contain more). A trailing
    ``?root=DIR`` sets the allowed root of the image paths (see ``read_dataset``)."""
    reader, sep, path = spec.partition(":")
    path, option, allowed = path.rpartition(ROOT_OPTION) if ROOT_OPTION in path else (path, "", "")
    if option and not allowed.strip():
        raise ValueError(f"dataset {spec!r}: {ROOT_OPTION}DIR needs a folder")
    reader = reader.strip().lower()
    if not sep or not path.strip():
        raise ValueError(f"dataset {spec!r}: expected READER:PATH with READER one of {sorted(READERS)}")
    if reader not in READERS:
        raise ValueError(f"dataset {spec!r}: unknown reader {reader!r}; readers: {sorted(READERS)}")
    return DatasetSpec(reader, Path(path.strip()).expanduser(),
                       Path(allowed.strip()).expanduser() if option else None)


def read_spec(spec: str, *, check_images: bool = True) -> DatasetIndex:
    """Read a dataset named by a ``READER:PATH`` string."""
    parsed = parse_dataset_spec(spec)
    return read_dataset(parsed.reader, parsed.path, check_images=check_images, allowed_root=parsed.allowed_root)


__all__ = [
    "MODALITIES", "READERS", "DatasetFormatError", "DatasetIndex", "DatasetNotFoundError", "DatasetSpec",
    "ReidProtocol", "Sample", "market1501_protocol", "parse_dataset_spec", "parse_market_name", "parse_sysu_path",
    "pku_sketch_protocol", "read_dataset", "read_spec", "sysu_mm01_protocol",
]
