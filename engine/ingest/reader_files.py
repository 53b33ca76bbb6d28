"""Where ingest's reader (``engine.ingest.reader``) puts what it cuts out of a source, crops and silhouettes, and
where it looks up the done markers (``engine.ingest.markers``):

- ``GalleryFiles``: straight into the gallery folder, for an ingest in one process;
- ``HeldFiles``: kept in memory and handed over batch by batch (``take``), for a worker that ships its batches
  to the gallery's one writer (``engine.ingest.cluster``, docs/scaling.md); a worker on another machine has no
  gallery folder. Crop names are the gallery's own (``engine.index.crops.crop_name``), so the writer stores the
  bytes under the names the items already carry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from engine.index.crops import crop_name, put_crop, put_silhouette
from engine.ingest.markers import read_marker


class ReaderFiles(Protocol):
    def put_crop(self, data: bytes, suffix: str) -> tuple[str, str]: ...

    def put_silhouette(self, item_id: str, mask: np.ndarray) -> None: ...

    def marker(self, key: str) -> dict[str, Any] | None: ...


class GalleryFiles:
    """Crops and silhouettes written into the gallery folder ``root``; its done markers read from there."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def put_crop(self, data: bytes, suffix: str) -> tuple[str, str]:
        return put_crop(self.root, data, suffix)

    def put_silhouette(self, item_id: str, mask: np.ndarray) -> None:
        put_silhouette(self.root, item_id, mask)

    def marker(self, key: str) -> dict[str, Any] | None:
        return read_marker(self.root, key)


class HeldFiles:
    """Crops (relative name → bytes) and silhouettes (item id → mask) held until ``take``; done markers looked up
    in ``markers`` (source key → marker, as the writer read them)."""

    def __init__(self, markers: Mapping[str, dict[str, Any]]) -> None:
        self.markers = markers
        self.crops: dict[str, bytes] = {}
        self.silhouettes: dict[str, np.ndarray] = {}

    def put_crop(self, data: bytes, suffix: str) -> tuple[str, str]:
        relative, digest = crop_name(data, suffix)
        self.crops[relative] = data
        return relative, digest

    def put_silhouette(self, item_id: str, mask: np.ndarray) -> None:
        self.silhouettes[item_id] = np.asarray(mask)

    def marker(self, key: str) -> dict[str, Any] | None:
        return self.markers.get(key)

    def take(self, items: Iterable[Any]) -> tuple[dict[str, bytes], dict[str, np.ndarray]]:
        """The crops and silhouettes of ``items`` (``GalleryItem``s), no longer held here."""
        crops: dict[str, bytes] = {}
        silhouettes: dict[str, np.ndarray] = {}
        for item in items:
            if item.crop is not None and item.crop in self.crops:
                crops[item.crop] = self.crops.pop(item.crop)
            if item.id in self.silhouettes:
                silhouettes[item.id] = self.silhouettes.pop(item.id)
        return crops, silhouettes
