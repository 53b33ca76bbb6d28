"""Short names for gallery items on screen (Qt-free): the camera and the time of the sighting ("camera c2 ·
0:01:23.4") instead of the item's long id, which stays in tooltips, in the case record and in the report
(docs/architecture.md: item ids identify items; the analyst reads cameras and times)."""

from __future__ import annotations

import math
from collections.abc import Callable

from engine.kernel.timefmt import screen_time

#: Ids up to this length are shown whole when an item has neither camera nor time.
SHORT_ID = 12


def short_id(item_id: str) -> str:
    """The id itself when short, else its last eight characters after an ellipsis."""
    return item_id if len(item_id) <= SHORT_ID else "…" + item_id[-8:]


def item_label(gallery, item_id: str) -> str:
    """``camera <name> · <time>`` of ``item_id`` in ``gallery`` (an ``engine.index.Gallery``; either part
    left out when unknown); ``short_id`` when the gallery is None, lacks the item or knows neither."""
    if gallery is None or item_id not in gallery:
        return short_id(item_id)
    columns = gallery.columns
    row = gallery.row(item_id)
    parts = []
    code = int(columns.camera[row])
    if code >= 0:
        parts.append(f"camera {columns.cameras.names[code]}")
    seconds = float(columns.time[row])
    if math.isfinite(seconds):
        parts.append(screen_time(seconds))
    return " · ".join(parts) if parts else short_id(item_id)


def item_labeller(gallery) -> Callable[[str], str]:
    """``item_label`` bound to ``gallery`` (None: short ids)."""
    return lambda item_id: item_label(gallery, item_id)
