"""One ranking for the results grid as columns (``ResultSet``): built from a ``StepResult``, a ``FinalRanking``,
the whole gallery or ids over a gallery, without a Python object per item, so a million rows cost a few numpy
arrays (docs/architecture.md, "The window at a million items"): item ids are decoded from the gallery's id
column only for the rows asked for (``RowIds``), cameras stay codes into their names (``CodedNames``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from app.views.thumbnails import CropResolver, GalleryCrops

_DECODE_BLOCK = 65_536


class ResultsInputError(ValueError):
    """A ResultSet or a setter received inconsistent data."""


class RowIds(Sequence[str]):
    """The ids of some gallery rows, in the given order, decoded from the gallery's id column when read (an id
    is a few bytes of a memory-mapped file; a list of a million ids would be a million Python strings)."""

    def __init__(self, columns, rows: np.ndarray) -> None:
        self.rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        self._columns = columns
        # plain arrays over the mapped files: indexing a memmap makes a memmap object per access
        self._blob = np.asarray(columns.ids_blob)
        self._ends = np.asarray(columns.array("ids_end.i64"))
        if self.rows.size and (int(self.rows.min()) < 0 or int(self.rows.max()) >= self._ends.shape[0]):
            raise ResultsInputError(f"rows outside the gallery's {self._ends.shape[0]:,} items")

    def __len__(self) -> int:
        return int(self.rows.shape[0])

    def _decode(self, row: int) -> str:
        start = int(self._ends[row - 1]) if row else 0
        return self._blob[start : int(self._ends[row])].tobytes().decode("utf-8")

    def __getitem__(self, key):  # noqa: ANN001 - int or slice, as a Sequence takes
        if isinstance(key, slice):
            return [self._decode(int(r)) for r in self.rows[key]]
        return self._decode(int(self.rows[key]))

    def __iter__(self) -> Iterator[str]:
        for first in range(0, len(self), _DECODE_BLOCK):
            for row in self.rows[first : first + _DECODE_BLOCK].tolist():
                yield self._decode(row)

    def take(self, positions: np.ndarray) -> RowIds:
        """The ids at ``positions`` of this sequence, in that order."""
        return RowIds(self._columns, self.rows[np.asarray(positions, dtype=np.int64)])

    def gallery_rows(self, item_ids: Sequence[str]) -> np.ndarray:
        """The gallery row of each id (−1 where the gallery has none)."""
        return np.asarray(self._columns.rows_of(list(item_ids)), dtype=np.int64)

    @property
    def gallery_size(self) -> int:
        return int(self._ends.shape[0])


class CodedNames(Sequence[str | None]):
    """Names stored as int32 ``codes`` into ``names`` (−1: none), read one at a time."""

    def __init__(self, codes: np.ndarray, names: Sequence[str]) -> None:
        self.codes = np.asarray(codes, dtype=np.int32).reshape(-1)
        self.names = list(names)
        self._present: list[str] | None = None
        if self.codes.size and (int(self.codes.min()) < -1 or int(self.codes.max()) >= len(self.names)):
            raise ResultsInputError(f"name codes outside −1..{len(self.names) - 1}")

    @classmethod
    def of(cls, values: Iterable[str | None]) -> CodedNames:
        """Codes for plain values (names sorted)."""
        values = list(values)
        names = sorted({v for v in values if v is not None})
        lookup = {name: code for code, name in enumerate(names)}
        return cls(np.fromiter((-1 if v is None else lookup[v] for v in values), np.int32, len(values)), names)

    def __len__(self) -> int:
        return int(self.codes.shape[0])

    def __getitem__(self, key):  # noqa: ANN001 - int or slice
        if isinstance(key, slice):
            return [None if c < 0 else self.names[c] for c in self.codes[key].tolist()]
        code = int(self.codes[key])
        return None if code < 0 else self.names[code]

    def present(self) -> list[str]:
        """The names some entry has, sorted (counted once)."""
        if self._present is None:
            used = np.bincount(self.codes + 1, minlength=len(self.names) + 1)[1:] > 0
            self._present = sorted(name for name, seen in zip(self.names, used.tolist(), strict=True) if seen)
        return list(self._present)

    def mask(self, wanted: Iterable[str]) -> np.ndarray:
        """bool per entry: whether its name is one of ``wanted`` (entries without a name never are)."""
        wanted = set(wanted)
        allowed = np.zeros(len(self.names) + 1, dtype=bool)
        allowed[1:] = [name in wanted for name in self.names]
        return allowed[self.codes + 1]


class DeferredExplanations(Mapping[str, str]):
    """Tooltip lines per item id made by ``compute()`` on first use (a hover), not when a step is shown: the
    batch of a step's best items costs the UI thread milliseconds it needs to paint the new results."""

    def __init__(self, compute: Callable[[], Mapping[str, str]]) -> None:
        self._compute = compute
        self._lines: dict[str, str] | None = None

    def _resolved(self) -> dict[str, str]:
        if self._lines is None:
            self._lines = dict(self._compute())
        return self._lines

    @property
    def computed(self) -> bool:
        return self._lines is not None

    def __getitem__(self, item_id: str) -> str:
        return self._resolved()[item_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._resolved())

    def __len__(self) -> int:
        return len(self._resolved())


def kept_explanations(explanations: Mapping[str, str] | None) -> Mapping[str, str]:
    """A private copy of ``explanations`` (a deferred one is kept as it is, still unresolved)."""
    if explanations is None:
        return {}
    return explanations if isinstance(explanations, DeferredExplanations) else dict(explanations)


def member_flags(rows: np.ndarray, members: np.ndarray, size: int) -> np.ndarray:
    """bool per entry of ``rows``: whether it is one of ``members`` (rows below ``size``), in linear time."""
    flags = np.zeros(size, dtype=bool)
    flags[np.asarray(members, dtype=np.int64)] = True
    return flags[rows]


@dataclass(frozen=True, eq=False)
class ResultSet:
    """One ranking to show, as columns: entry i is the i-th item of the ranking, best first (the "score"
    sort shows this order, so a ``FinalRanking`` keeps its docs/methods.md §1.3 order).

    ``ids``: a list, or ``RowIds`` over a gallery; ``scores``/``times``: float, NaN when unknown; ``cameras``:
    name or None per entry (kept as ``CodedNames``); ``relevant``: ground truth or None; ``kept``: whether the
    step kept the item (items not kept are drawn faded) or None; ``explanations``: optional text per id shown in
    the tooltip; ``crops``: item id -> crop path."""

    ids: Sequence[str]
    scores: np.ndarray
    cameras: Sequence[str | None]
    times: np.ndarray
    relevant: np.ndarray | None = None
    kept: np.ndarray | None = None
    explanations: Mapping[str, str] = field(default_factory=dict)
    crops: CropResolver | None = None

    def __post_init__(self) -> None:
        ids = self.ids if isinstance(self.ids, RowIds) else list(self.ids)
        n = len(ids)
        scores = np.asarray(self.scores, dtype=np.float64).reshape(-1)
        times = np.asarray(self.times, dtype=np.float64).reshape(-1)
        cameras = self.cameras if isinstance(self.cameras, CodedNames) else CodedNames.of(self.cameras)
        for name, size in (("scores", scores.shape[0]), ("times", times.shape[0]), ("cameras", len(cameras))):
            if size != n:
                raise ResultsInputError(f"ResultSet.{name} has {size} entries for {n} ids")
        for name in ("relevant", "kept"):
            value = getattr(self, name)
            if value is not None:
                value = np.asarray(value, dtype=bool).reshape(-1)
                if value.shape[0] != n:
                    raise ResultsInputError(f"ResultSet.{name} has {value.shape[0]} entries for {n} ids")
                object.__setattr__(self, name, value)
        if isinstance(ids, RowIds):
            if n and np.count_nonzero(np.bincount(ids.rows, minlength=1) > 1):
                raise ResultsInputError("ResultSet.ids holds an item id more than once")
        elif len(set(ids)) != n:
            raise ResultsInputError("ResultSet.ids holds an item id more than once")
        object.__setattr__(self, "ids", ids)
        object.__setattr__(self, "scores", scores)
        object.__setattr__(self, "times", times)
        object.__setattr__(self, "cameras", cameras)
        object.__setattr__(self, "explanations", kept_explanations(self.explanations))
        object.__setattr__(self, "_entry_lookup", None)
        object.__setattr__(self, "_time_order", None)

    def __len__(self) -> int:
        return len(self.ids)

    # ------------------------------------------------------------------------------------------ look-ups

    def entry_of(self, item_id: str) -> int | None:
        """The entry (position in the ranking) of an id, or None."""
        found = self.entries_of([item_id])
        return None if found[0] < 0 else int(found[0])

    def entries_of(self, item_ids: Sequence[str]) -> np.ndarray:
        """The entry of each id (−1 where the set has none), with one index built on first use: an entry per
        gallery row for ``RowIds`` (ids are found through the gallery's own look-up), else a dict."""
        item_ids = list(item_ids)
        lookup = self._entry_lookup
        if isinstance(self.ids, RowIds):
            if lookup is None:
                lookup = np.full(self.ids.gallery_size, -1, dtype=np.int64)
                lookup[self.ids.rows] = np.arange(len(self), dtype=np.int64)
                object.__setattr__(self, "_entry_lookup", lookup)
            if not item_ids:
                return np.zeros(0, dtype=np.int64)
            rows = self.ids.gallery_rows(item_ids)
            return np.where(rows >= 0, lookup[np.maximum(rows, 0)], -1)
        if lookup is None:
            lookup = {item_id: i for i, item_id in enumerate(self.ids)}
            object.__setattr__(self, "_entry_lookup", lookup)
        return np.fromiter((lookup.get(i, -1) for i in item_ids), np.int64, len(item_ids))

    def score_of(self, item_id: str) -> float | None:
        """The score of an id in this ranking (None: not in it, or unscored)."""
        entry = self.entry_of(item_id)
        if entry is None:
            return None
        score = float(self.scores[entry])
        return score if math.isfinite(score) else None

    def prepare(self, *, time_sorted: bool = False) -> ResultSet:
        """Build now what the grid reads later (the id look-up, the cameras present, and with ``time_sorted`` the
        time order): for a worker thread, so that showing a million rows costs the UI thread no pass over them.
        Returns itself."""
        self.entries_of([])
        self.cameras.present()
        if time_sorted:
            self.time_order()
        return self

    def time_order(self) -> np.ndarray:
        """Every entry, earliest first (entries without a time last, ties in ranking order); sorted once, so a
        worker can sort a large set before the grid shows it."""
        order = self._time_order
        if order is None:
            order = np.argsort(np.where(np.isfinite(self.times), self.times, np.inf), kind="stable")
            order.flags.writeable = False
            object.__setattr__(self, "_time_order", order)
        return order

    # ------------------------------------------------------------------------------------------ makers

    @classmethod
    def empty(cls) -> ResultSet:
        return cls([], np.zeros(0), [], np.zeros(0))

    @classmethod
    def from_ids(cls, gallery, ids: Sequence[str], scores, *, relevant=None, kept=None,
                 explanations: Mapping[str, str] | None = None) -> ResultSet:
        """Items of an ``engine.index.Gallery`` in the given order; camera and time from its columns."""
        rows = gallery.rows(ids)
        return cls._from_rows(gallery, rows, list(ids), scores, relevant, kept, explanations)

    @classmethod
    def from_gallery(cls, gallery) -> ResultSet:
        """Every item of a gallery in row order, unscored (no id is looked up or decoded)."""
        rows = np.arange(len(gallery), dtype=np.int64)
        return cls._from_rows(gallery, rows, None, np.full(rows.shape[0], math.nan), None, None, None)

    @classmethod
    def from_step(cls, step, gallery, explanations: Mapping[str, str] | None = None) -> ResultSet:
        """A ``StepResult``'s candidates, best first, with its kept flags and ground truth."""
        rows, scores = step.ranked()
        relevant = None if step.relevant is None else step.relevant[step.order]
        kept = member_flags(rows, step.kept, len(gallery))
        return cls._from_rows(gallery, rows, None, scores, relevant, kept, explanations)

    @classmethod
    def from_ranking(cls, ranking, gallery, explanations: Mapping[str, str] | None = None) -> ResultSet:
        """A ``FinalRanking`` (every gallery item; unranked ones have no score)."""
        return cls._from_rows(gallery, ranking.rows, None, ranking.scores, None, None, explanations)

    @classmethod
    def _from_rows(cls, gallery, rows, ids, scores, relevant, kept, explanations) -> ResultSet:
        """``ids`` None: the rows' ids, read from the gallery's id column when asked for."""
        columns = gallery.columns
        rows = np.asarray(rows, dtype=np.int64)
        ids = RowIds(columns, rows) if ids is None else ids
        return cls(ids=ids, scores=np.asarray(scores, dtype=np.float64),
                   cameras=CodedNames(np.asarray(columns.camera)[rows], columns.cameras.names),
                   times=np.asarray(columns.time)[rows], relevant=relevant, kept=kept, explanations=explanations,
                   crops=GalleryCrops(gallery))
