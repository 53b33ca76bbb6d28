"""The candidates of a step over the whole of a gallery too large to score item by item (docs/scaling.md).

Up to the gallery's IVF threshold a step over the whole gallery scores every item exactly. Past it, the view's
IVF index (float16 codes of the stored rows, so its scores are the exact inner products) gives the best
``shortlist`` items among those the step may see (searched, not rejected, through the step's camera and time
filters); the confirmed items join them, scored exactly. The step's keep rule then applies to that shortlist,
and later steps score only their candidates' gathered rows."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engine.index import Gallery

#: items a whole-gallery step takes from the index of a gallery past its IVF threshold
SHORTLIST = 10_000


def check_shortlist(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"shortlist must be a whole number ≥ 1 (items a whole-gallery step takes from the index of "
                         f"a large gallery), got {value!r}")
    return int(value)


def shortlist(gallery: Gallery, view: str, vector: np.ndarray, k: int, *, size: int, rejected: np.ndarray,
              confirmed: np.ndarray, allowed: Callable[[], np.ndarray | None]) -> tuple[np.ndarray, np.ndarray]:
    """(rows ascending, their exact scores): the index's best ``k`` among the first ``size`` items that are not
    ``rejected`` (ascending rows) and pass ``allowed()`` (a mask over the first ``size`` rows, or None: all),
    plus the ``confirmed`` rows (ascending)."""
    mask = allowed()
    restricted = mask is not None or rejected.size or size < len(gallery)
    if restricted:
        mask = np.ones(size, dtype=bool) if mask is None else np.array(mask[:size], dtype=bool)
        mask[rejected[rejected < size]] = False
    rows, scores = gallery.search(view, vector, min(k, size), allowed=mask if restricted else None)
    extra = confirmed[~np.isin(confirmed, rows)] if confirmed.size else confirmed
    if extra.size:
        rows = np.concatenate([rows, extra])
        scores = np.concatenate([scores, gallery.scores(view, vector, extra)])
    order = np.argsort(rows)  # rows are distinct
    return rows[order].astype(np.int64), scores[order].astype(np.float32)
