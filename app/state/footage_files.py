"""What the engine ingests, by file name, for the dialogs that offer footage: every video and image suffix it
reads and a built world's manifest (``engine.ingest.sources``, ``engine.kernel.images``; docs/architecture.md).
A dialog built from these lists never hides a file the engine would ingest."""

from __future__ import annotations

from engine.ingest.sources import VIDEO_EXTENSIONS, WORLD_MANIFEST
from engine.kernel.images import IMAGE_EXTENSIONS

__all__ = ["IMAGE_EXTENSIONS", "VIDEO_EXTENSIONS", "WORLD_MANIFEST"]
