"""One loader for files shipped in ``resources/`` (works from a checkout and from an installed wheel)."""

from __future__ import annotations

from importlib import resources as _importlib_resources
from pathlib import Path


def resource_path(*parts: str) -> Path:
    """Return the filesystem path of a shipped resource, e.g. ``resource_path("ontology.json")``."""
    base = Path(str(_importlib_resources.files("resources")))
    path = base.joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"shipped resource not found: {path}")
    return path
