"""Follow a sighting to the next camera (docs/methods.md §9).

From a sighting (``engine.index.sightings``: a run of one camera's items), ``follow_query`` makes a find-similar
step over the whole gallery: its example is the sighting's best item (the router picks the gallery's best view
for it, as for any find-similar: ``appearance``, else ``rgb``, else a re-identification view), its cameras every
gallery camera but the sighting's, its time range the sighting widened by ``window`` seconds on both sides,
and ``whole_gallery`` set so that it scores every item again, not only the ones earlier steps kept (those
steps looked for the person on other cameras and cut the next sightings).

``proposals`` turns such a step's kept items into candidate next sightings for the investigator to confirm
or reject: the kept items that pass the step's camera and time filters (a confirmed item is kept whatever
the filters, so the followed sighting's own items are left out here), grouped into sightings
(``group_sightings``), each with its best appearance score, the attribute agreement of its items with the
example (``attribute_agreement``) and its ``direction`` ("after" or "before" the followed sighting: its
middle time against the middle of the step's time range, which is the followed sighting's).

Ranking rule: proposals are ordered by score + ``TIE_WEIGHT`` · agreement. Agreement is in [0, 1] and cosine
scores between candidates differ by tenths, so agreement only reorders proposals whose scores lie within
``TIE_WEIGHT`` of each other: it breaks ties and near-ties, never overturns a clear appearance match. A
proposal without evidence counts agreement 0 there (it loses a near-tie to one whose evidence agrees).
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.index import Gallery
from engine.index import evidence_table as store
from engine.index.sightings import DEFAULT_GAP, Sighting, group_sightings
from engine.kernel.ontology import ATTRIBUTE_KEYS, COLOR_KEYS
from engine.retrieval.evidence.likeness import key_columns, key_score, same_value
from engine.retrieval.evidence.ranking import evidence_for
from engine.retrieval.search.errors import NoCandidatesError, QueryInputError
from engine.retrieval.search.query import StepQuery
from engine.retrieval.search.step import StepResult

DEFAULT_WINDOW = 12 * 3600.0  # seconds before and after a sighting that the next one is looked for in
MAX_WINDOW = 31 * 86400.0  # a month on each side: beyond it "the next camera" means nothing
FOLLOW_KEEP = 100  # items a follow step keeps (k) when no keep rule is given
DEFAULT_PROPOSALS = 5
#: Weight of the attribute agreement in the proposals' order (see the module docstring).
TIE_WEIGHT = 0.05
DIRECTIONS = ("after", "before")

_VALUE_COLUMNS = list(range(len(store.VALUE_COLUMNS)))
_KEY_SPANS = key_columns(ATTRIBUTE_KEYS)
_COLOUR = np.asarray([key in COLOR_KEYS for key in ATTRIBUTE_KEYS])


@dataclass(frozen=True)
class Proposal:
    """A candidate next sighting: ``score`` the step's best score among its items, ``agreement`` the mean
    attribute agreement of its items with the followed example (None: no evidence on either side),
    ``direction`` "after" or "before" the followed sighting."""

    sighting: Sighting
    score: float
    agreement: float | None
    direction: str

    def to_dict(self) -> dict[str, Any]:
        return {**self.sighting.to_dict(), "score": self.score, "agreement": self.agreement,
                "direction": self.direction}


def gallery_cameras(gallery: Gallery) -> list[str]:
    """The names of the cameras the gallery's items were seen by, sorted."""
    columns = gallery.columns
    codes = np.unique(columns.camera)
    return sorted(columns.cameras.names[int(code)] for code in codes if code >= 0)


def duration(seconds: float) -> str:
    """A window in words: "90 s", "45 min", "12 h", "3 days"."""
    if seconds < 60:
        return f"{seconds:.3g} s"
    if seconds < 3600:
        return f"{seconds / 60:.3g} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.3g} h"
    return f"{seconds / 86400:.3g} days"


def _window(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise QueryInputError(f"the follow window must be a number of seconds, got {value!r}")
    if not 0 < value <= MAX_WINDOW:
        raise QueryInputError(f"the follow window must be more than 0 and at most {duration(MAX_WINDOW)} "
                              f"({MAX_WINDOW:.0f} s), got {value!r} s")
    return float(value)


def follow_query(gallery: Gallery, sighting: Sighting, *, window: float = DEFAULT_WINDOW, rho: float | None = None,
                 k: int | None = None, threshold: float | None = None) -> StepQuery:
    """The step that looks for ``sighting``'s person on the gallery's other cameras within ``window`` seconds
    before and after it (see the module docstring); keeps ``FOLLOW_KEEP`` items unless a keep rule is given.
    ``QueryInputError`` for a sighting or window it cannot follow, ``NoCandidatesError`` when no item of another
    camera was seen within the window."""
    if not isinstance(sighting, Sighting):
        raise QueryInputError(f"follow needs a sighting (engine.index.sightings.Sighting), got "
                              f"{type(sighting).__name__}")
    window = _window(window)
    if sighting.camera is None:
        raise QueryInputError(f"the sighting of item {sighting.best!r} has no camera: following it to another "
                              f"camera needs to know which camera it was seen by")
    if sighting.start is None or sighting.end is None:
        raise QueryInputError(f"the sighting of item {sighting.best!r} on {sighting.camera} has no time: following "
                              f"it needs the time it was seen")
    if sighting.best not in gallery:
        raise QueryInputError(f"the sighting's best item {sighting.best!r} is not in the gallery {gallery.root}")
    cameras = [name for name in gallery_cameras(gallery) if name != sighting.camera]
    if not cameras:
        raise QueryInputError(f"the gallery {gallery.root} has one camera only ({sighting.camera}): there is no "
                              f"other camera to follow the sighting to")
    low, high = sighting.start - window, sighting.end + window
    columns = gallery.columns
    times = columns.time
    codes = [columns.cameras.lookup(name) for name in cameras]
    if not (np.isin(columns.camera, codes) & (times >= low) & (times <= high)).any():
        raise NoCandidatesError(f"no item of another camera ({', '.join(cameras)}) was seen within {duration(window)} "
                                f"of the sighting on {sighting.camera}: widen the window to follow it")
    if rho is None and k is None and threshold is None:
        k = FOLLOW_KEEP
    return StepQuery(example=sighting.best, cameras=frozenset(cameras), time_range=(low, high), whole_gallery=True,
                     rho=rho, k=k, threshold=threshold)


def is_follow(query: StepQuery) -> bool:
    """Whether ``query`` has a follow step's form: find similar over the whole gallery, with cameras and a time
    range closed on both sides."""
    return (query.whole_gallery and query.example is not None and query.cameras is not None
            and query.time_range is not None and None not in query.time_range)


def attribute_agreement(gallery: Gallery, example: str, item_ids: Collection[str]) -> np.ndarray:
    """float64 [len(item_ids)]: how alike each item's attribute evidence is to ``example``'s, in [0, 1]; NaN
    where either has none.

    Per attribute key, the probability that both show the same value (``engine.retrieval.evidence.likeness``),
    averaged over the evidence sources that read the key on both items; the key's log-score mapped to [0, 1]
    (``key_score``); the mean over the keys read. Colour keys do not count when either item is infrared."""
    ids = list(item_ids)
    out = np.full(len(ids), np.nan)
    evidence = evidence_for(gallery)
    if evidence is None or not ids:
        return out
    rows = np.asarray([gallery.row(example), *(gallery.row(i) for i in ids)], dtype=np.int64)
    evidence_rows = evidence.evidence_row[rows]
    total = np.zeros((len(_KEY_SPANS), len(ids)))
    count = np.zeros_like(total)
    for source in evidence.sources:
        values = evidence.table.gather(source, evidence_rows, _VALUE_COLUMNS)
        same = same_value(values[:1], values[1:], _KEY_SPANS)[:, 0, :]
        read = ~np.isnan(same)
        total += np.where(read, same, 0.0)
        count += read
    if evidence.infrared is not None:
        dark = evidence.infrared[rows]
        blind = dark[1:] | dark[0]
        count[np.ix_(_COLOUR, blind)] = 0
    read = count > 0
    scores = np.where(read, key_score(total / np.maximum(count, 1)), 0.0)
    keys = read.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(keys > 0, scores.sum(axis=0) / keys, np.nan)


def _direction(sighting: Sighting, middle: float) -> str:
    return "after" if (sighting.start + sighting.end) / 2 >= middle else "before"


def proposals(result: StepResult, gallery: Gallery, *, count: int = DEFAULT_PROPOSALS, gap: float = DEFAULT_GAP,
              exclude: Collection[str] = ()) -> list[Proposal]:
    """The best ``count`` candidate next sightings of a follow step (see the module docstring); ``exclude``:
    items not to propose (e.g. already confirmed ones)."""
    query = result.query
    if not is_follow(query):
        raise QueryInputError(f"step {result.index + 1} is not a follow step (find similar over the whole gallery "
                              f"within cameras and a time range): it has no proposals")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise QueryInputError(f"count must be a whole number ≥ 1, got {count!r}")
    kept = np.isin(result.rows, result.kept, assume_unique=True)
    scores = {result.item_ids[int(row)]: float(score)
              for row, score in zip(result.rows[kept], result.scores[kept], strict=True)}
    low, high = query.time_range
    excluded = set(exclude)
    items = [item for item in (gallery.item(i) for i in scores if i not in excluded)
             if item.camera in query.cameras and item.time is not None and low <= item.time <= high]
    if not items:
        return []
    found = group_sightings(items, scores, gap)
    middle = (low + high) / 2
    agreement = dict(zip([i.id for i in items], attribute_agreement(gallery, query.example, [i.id for i in items]),
                         strict=True))
    out = []
    for sighting in found:
        values = [agreement[i] for i in sighting.items if not math.isnan(agreement[i])]
        mean = float(np.mean(values)) if values else None
        out.append(Proposal(sighting, max(scores[i] for i in sighting.items), mean, _direction(sighting, middle)))
    out.sort(key=lambda p: (-(p.score + TIE_WEIGHT * (p.agreement or 0.0)), p.sighting.start, p.sighting.items))
    return out[:count]
