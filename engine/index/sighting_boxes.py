"""The boxes of a sighting frame by frame, for playing its source: where each item of the sighting stood, and
between two items of one track where the track's box was, linearly interpolated.

``sighting_items(gallery, item_id)`` finds the items of the sighting an item belongs to (``group_sightings``
over the items of its camera and source near its time: one track, or one camera within the gap);
``SightingBoxes(items, selected, position)`` answers ``at(position)``: the boxes to draw at a frame (or at an
image of a folder, by its place in the folder), the selected item's own box marked."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from engine.index.items import GalleryItem
from engine.index.sightings import DEFAULT_GAP, group_sightings
from engine.kernel.images import IMAGE_EXTENSIONS

#: Seconds around the item whose items of the same camera are looked at (a track's items that far apart still
#: bound its interpolation near the item).
DEFAULT_MARGIN = 120.0
#: The most items read from the gallery for one sighting.
MAX_ITEMS = 5000

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class ShownBox:
    """A box (x, y, w, h, source pixels) to draw: an item's own (``item`` names it) or interpolated between two
    items of ``track`` (``item`` None); ``selected``: the selected item's own box."""

    box: Box
    item: str | None
    track: int | None
    selected: bool = False

    @property
    def interpolated(self) -> bool:
        return self.item is None


def _is_image(source: str) -> bool:
    return Path(source).suffix.lower() in IMAGE_EXTENSIONS


def _place(item: GalleryItem) -> str:
    """Where an item was seen for grouping: its video, or the folder of its image (one sequence)."""
    return str(Path(item.source).parent) if _is_image(item.source) else item.source


def sighting_items(gallery, item_id: str, *, margin: float = DEFAULT_MARGIN, gap: float = DEFAULT_GAP,
                   limit: int = MAX_ITEMS) -> list[GalleryItem]:
    """The items of ``item_id``'s sighting in ``gallery`` (``engine.index.sightings``): among the items of its
    camera and source (or image folder) within ``margin`` seconds of it, those grouped with it; the item alone
    when it has no time. At most ``limit`` items are read."""
    item = gallery.item(item_id)
    if item.time is None:
        return [item]
    columns = gallery.columns
    code = columns.cameras.code(item.camera) if item.camera is not None else None
    times = columns.time
    near = np.abs(times - item.time) <= margin
    if code is not None:
        near &= columns.camera == code
    rows = np.flatnonzero(near)
    if len(rows) > limit:  # the closest in time
        rows = rows[np.argsort(np.abs(times[rows] - item.time), kind="stable")[:limit]]
    candidates = [gallery.item(int(row)) for row in rows]
    place = _place(item)
    candidates = [other for other in candidates if other.camera == item.camera and _place(other) == place]
    if all(other.id != item.id for other in candidates):
        candidates.append(item)
    placed = [replace(other, source=place) for other in candidates]  # a sequence's images: one source
    for sighting in group_sightings(placed, gap=gap):
        if item.id in sighting.items:
            members = set(sighting.items)
            return [other for other in candidates if other.id in members]
    return [item]


class SightingBoxes:
    """The boxes of ``items`` by position: ``position(item)`` places an item (a video's frame number, or the
    index of its image in a folder; None leaves it out). Items of one track are joined by linear interpolation
    between their positions; an item without a track shows only at its own position."""

    def __init__(self, items: Sequence[GalleryItem], selected: str | None = None,
                 position: Callable[[GalleryItem], int | None] = lambda item: item.frame) -> None:
        self.selected = selected
        self._own: dict[int, list[ShownBox]] = {}
        self._tracks: dict[int, list[tuple[int, Box]]] = {}
        for item in items:
            where = position(item)
            if where is None or item.box is None:
                continue
            box = tuple(float(v) for v in item.box)
            self._own.setdefault(where, []).append(ShownBox(box, item.id, item.track, item.id == selected))
            if item.track is not None:
                self._tracks.setdefault(item.track, []).append((where, box))
        for known in self._tracks.values():
            known.sort(key=lambda pair: pair[0])

    def positions(self) -> list[int]:
        """The positions where an item stands, in order."""
        return sorted(self._own)

    def at(self, position: int) -> list[ShownBox]:
        """The boxes at ``position``: the items standing there, and each track passing between two of its
        items (interpolated); the selected item's box last, so that it is drawn on top."""
        shown = list(self._own.get(position, ()))
        present = {box.track for box in shown if box.track is not None}
        for track, known in self._tracks.items():
            if track in present:
                continue
            box = _between(known, position)
            if box is not None:
                shown.append(ShownBox(box, None, track))
        return sorted(shown, key=lambda box: box.selected)


def _between(known: list[tuple[int, Box]], position: int) -> Box | None:
    """The box at ``position`` on the line between the known boxes either side of it; None outside them."""
    before = after = None
    for where, box in known:
        if where <= position:
            before = (where, box)
        elif after is None:
            after = (where, box)
            break
    if before is None or after is None or before[0] == position:
        return None
    share = (position - before[0]) / (after[0] - before[0])
    return tuple(a + (b - a) * share for a, b in zip(before[1], after[1], strict=True))
