"""Done markers: ``<gallery>/ingest/sources/<source key>.json``, written (atomically) only after every item of
the source is committed to the gallery. A source with a marker is not read again; a source without one is
read again from the start and its items already in the gallery (same deterministic ids) are skipped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.kernel import jsonio
from engine.kernel.atomic import atomic_write_json

MARKER_FOLDER = ("ingest", "sources")


def marker_path(gallery_root: Path, key: str) -> Path:
    return Path(gallery_root).joinpath(*MARKER_FOLDER, f"{key}.json")


def read_marker(gallery_root: Path, key: str) -> dict[str, Any] | None:
    """The marker of source ``key``, or None when the source is not done (an unreadable marker counts as none)."""
    path = marker_path(gallery_root, key)
    try:
        record = jsonio.read(path)
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def write_marker(gallery_root: Path, key: str, record: dict[str, Any]) -> Path:
    path = marker_path(gallery_root, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    return atomic_write_json(path, record, indent=1)


def done_markers(gallery_root: Path) -> dict[str, dict[str, Any]]:
    """Every readable done marker of the gallery, by source key (unreadable ones count as none)."""
    folder = Path(gallery_root).joinpath(*MARKER_FOLDER)
    if not folder.is_dir():
        return {}
    found = {}
    for path in sorted(folder.glob("*.json")):
        record = read_marker(gallery_root, path.stem)
        if record is not None:
            found[path.stem] = record
    return found
