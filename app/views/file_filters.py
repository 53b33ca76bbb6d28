"""File-dialog filters made from the engine's own lists of what it reads, so a dialog never hides a file the
engine would ingest (``app.state.footage_files``: every video and image suffix, the built world's
``manifest.jsonl``; docs/architecture.md)."""

from __future__ import annotations

from collections.abc import Iterable

from app.state.footage_files import IMAGE_EXTENSIONS, VIDEO_EXTENSIONS, WORLD_MANIFEST


def _patterns(suffixes: Iterable[str]) -> str:
    return " ".join(f"*{suffix}" for suffix in sorted(suffixes))


def footage_filter() -> str:
    """``QFileDialog`` name filters for one footage file: every video and image suffix the engine ingests
    (first, all of them together), a built world's manifest, then all files."""
    return ";;".join([
        f"Footage: videos and images ({_patterns(VIDEO_EXTENSIONS | IMAGE_EXTENSIONS)} {WORLD_MANIFEST})",
        f"Videos ({_patterns(VIDEO_EXTENSIONS)})",
        f"Images ({_patterns(IMAGE_EXTENSIONS)})",
        f"Built world manifest ({WORLD_MANIFEST})",
        "All files (*)",
    ])
