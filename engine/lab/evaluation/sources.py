"""What an evaluation runs on and with: a world's benchmark files (built on demand, rebuilt when the
world's manifest changed), and a real dataset named ``READER:PATH`` (the model checkpoint comes from
``engine.retrieval.models.discovery``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.ingest.datasets import READERS, DatasetIndex, parse_dataset_spec, read_spec
from engine.ingest.datasets.world import manifest_path
from engine.kernel import jsonio
from engine.kernel.hashing import sha256_file
from engine.lab.evaluation.errors import EvaluationError
from engine.lab.world.benchmarks import VERSION, build_benchmarks, load_benchmark

BENCHMARKS_FOLDER = "benchmarks"


# ------------------------------------------------------------------------------------------- worlds


def _current(folder: Path, name: str, manifest_sha: str) -> bool:
    """True when ``folder/name.json`` exists, has this code's schema version and the world's manifest hash."""
    file = folder / f"{name}.json"
    if not file.is_file():
        return False
    try:
        header = jsonio.read(file)
    except (OSError, jsonio.JsonInputError):  # unreadable or damaged: rebuilt
        return False
    return (
        isinstance(header, dict)
        and header.get("version") == VERSION
        and header.get("manifest_sha256") == manifest_sha
    )


def world_benchmark(
    world: Path | str, name: str, benchmarks_dir: Path | str | None = None, seed: int = 0
) -> tuple[dict[str, Any], bool]:
    """(loaded benchmark ``name`` of a world, whether it was (re)built now).

    The files live in ``benchmarks_dir`` (default WORLD/benchmarks); they are built when absent and
    rebuilt when stale (another schema version, or the world's manifest hash differs).
    """
    world = Path(world)
    manifest = manifest_path(world)
    folder = Path(benchmarks_dir) if benchmarks_dir is not None else manifest.parent / BENCHMARKS_FOLDER
    built = False
    if not _current(folder, name, sha256_file(manifest)):
        build_benchmarks(manifest.parent, folder, seed=seed)
        built = True
    return load_benchmark(folder, name), built


# ----------------------------------------------------------------------------------------- datasets


def is_dataset_spec(text: str) -> bool:
    """True for ``READER:PATH`` with a known reader other than ``world`` (and not an existing path)."""
    if Path(text).exists():
        return False
    reader, sep, _ = text.partition(":")
    return bool(sep) and reader.strip().lower() in READERS and reader.strip().lower() != "world"


def read_dataset_spec(spec: str) -> DatasetIndex:
    """Read a ``READER:PATH`` dataset (errors name the spec, the file and the problem)."""
    parsed = parse_dataset_spec(spec)
    if parsed.reader == "world":
        raise EvaluationError(f"{spec!r}: a world is evaluated with --world DIR and the world protocols")
    return read_spec(spec)
