"""Data behind the results grid: a ranking as columns (``ResultSet``, built from a ``StepResult``, a
``FinalRanking`` or ids over a gallery) and the list model that filters and sorts it with numpy, so 100k rows
stay smooth; plus the shared mark names and time/score formatting."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QPixmap

from app.state.engine_terms import screen_time as format_time
from app.views.thumbnails import CropResolver, GalleryCrops, ThumbnailLoader

CONFIRMED = "confirmed"
REJECTED = "rejected"
CLEAR = "cleared"  # the same words as app.store.models.MARK_STATES
MARKS = (CONFIRMED, REJECTED, CLEAR)

SORT_SCORE = "score"
SORT_TIME = "time"

MARK_COLORS = {CONFIRMED: QColor("#2e9d4f"), REJECTED: QColor("#d0393e")}
#: What "find similar, clothes may have changed" does and how far to trust it (engine.retrieval.search.outfit_change).
OUTFIT_CHANGE_TIP = ("Adds to the likeness what a change of clothes leaves as it was (gender, age, height, build, "
                     "skin, hair) as the model's attribute heads read it. On the unseen synthetic world it puts a "
                     "sighting in other clothes among the first ten twice as often as Find similar (45 % of daytime "
                     "queries against 22 %) and keeps the same-clothes sightings near the top; on real footage the "
                     "heads read gender somewhat above chance and hair below it: a lead, never evidence of "
                     "identity.")


class ResultsInputError(ValueError):
    """A ResultSet or a setter received inconsistent data."""


# ------------------------------------------------------------------------------------------------ formatting
# times: ``engine.kernel.timefmt`` (local time with its zone on screen; one rule for wall-clock vs footage clock)


def format_score(score: float | None) -> str:
    return "—" if score is None or not math.isfinite(score) else f"{score:.3f}"


# ------------------------------------------------------------------------------------------------ data


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


def _kept_explanations(explanations: Mapping[str, str] | None) -> Mapping[str, str]:
    """A private copy of ``explanations`` (a deferred one is kept as it is, still unresolved)."""
    if explanations is None:
        return {}
    return explanations if isinstance(explanations, DeferredExplanations) else dict(explanations)


@dataclass(frozen=True, eq=False)
class ResultSet:
    """One ranking to show, as columns: entry i is the i-th item of the ranking, best first (the "score"
    sort shows this order, so a ``FinalRanking`` keeps its docs/methods.md §1.3 order).

    ``scores``/``times``: float, NaN when unknown; ``cameras``: name or None; ``relevant``: ground truth or
    None; ``kept``: whether the step kept the item (items not kept are drawn faded) or None;
    ``explanations``: optional text per id shown in the tooltip; ``crops``: item id -> crop path."""

    ids: Sequence[str]
    scores: np.ndarray
    cameras: Sequence[str | None]
    times: np.ndarray
    relevant: np.ndarray | None = None
    kept: np.ndarray | None = None
    explanations: Mapping[str, str] = field(default_factory=dict)
    crops: CropResolver | None = None

    def __post_init__(self) -> None:
        n = len(self.ids)
        scores = np.asarray(self.scores, dtype=np.float64).reshape(-1)
        times = np.asarray(self.times, dtype=np.float64).reshape(-1)
        cameras = np.asarray(list(self.cameras), dtype=object).reshape(-1)
        for name, column in (("scores", scores), ("times", times), ("cameras", cameras)):
            if column.shape[0] != n:
                raise ResultsInputError(f"ResultSet.{name} has {column.shape[0]} entries for {n} ids")
        for name in ("relevant", "kept"):
            value = getattr(self, name)
            if value is not None:
                value = np.asarray(value, dtype=bool).reshape(-1)
                if value.shape[0] != n:
                    raise ResultsInputError(f"ResultSet.{name} has {value.shape[0]} entries for {n} ids")
                object.__setattr__(self, name, value)
        ids = list(self.ids)
        if len(set(ids)) != n:
            raise ResultsInputError("ResultSet.ids holds an item id more than once")
        object.__setattr__(self, "ids", ids)
        object.__setattr__(self, "scores", scores)
        object.__setattr__(self, "times", times)
        object.__setattr__(self, "cameras", cameras)
        object.__setattr__(self, "explanations", _kept_explanations(self.explanations))

    def __len__(self) -> int:
        return len(self.ids)

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
    def from_step(cls, step, gallery, explanations: Mapping[str, str] | None = None) -> ResultSet:
        """A ``StepResult``'s candidates, best first, with its kept flags and ground truth."""
        rows, scores = step.ranked()
        relevant = None if step.relevant is None else step.relevant[step.order]
        kept = np.isin(rows, step.kept, assume_unique=True)
        ids = [step.item_ids[int(r)] for r in rows]
        return cls._from_rows(gallery, rows, ids, scores, relevant, kept, explanations)

    @classmethod
    def from_ranking(cls, ranking, gallery, explanations: Mapping[str, str] | None = None) -> ResultSet:
        """A ``FinalRanking`` (every gallery item; unranked ones have no score)."""
        return cls._from_rows(gallery, ranking.rows, ranking.ids, ranking.scores, None, None, explanations)

    @classmethod
    def _from_rows(cls, gallery, rows, ids, scores, relevant, kept, explanations) -> ResultSet:
        columns = gallery.columns
        rows = np.asarray(rows, dtype=np.int64)
        names = np.asarray([*columns.cameras.names, None], dtype=object)  # code −1 → None
        return cls(ids=ids, scores=np.asarray(scores, dtype=np.float64), cameras=names[columns.camera[rows]],
                   times=columns.time[rows], relevant=relevant, kept=kept, explanations=explanations,
                   crops=GalleryCrops(gallery))


# ------------------------------------------------------------------------------------------------ model


class Card(NamedTuple):
    """Everything one result card paints, read in one call (``ResultsModel.card``)."""

    item_id: str
    thumbnail: QPixmap | None
    thumbnail_failed: bool
    mark: str | None
    kept: bool
    rank: int
    relevant: bool | None
    score: float | None
    camera: str | None
    time: float | None


class ResultsModel(QAbstractListModel):
    """The visible entries of a ResultSet (filtered, sorted). Roles below; DisplayRole is the id."""

    IdRole = Qt.ItemDataRole.UserRole + 1
    ScoreRole = Qt.ItemDataRole.UserRole + 2
    CameraRole = Qt.ItemDataRole.UserRole + 3
    TimeRole = Qt.ItemDataRole.UserRole + 4
    MarkRole = Qt.ItemDataRole.UserRole + 5  # CONFIRMED, REJECTED or None
    RankRole = Qt.ItemDataRole.UserRole + 6  # 1-based position in the ranking (the whole set)
    RelevantRole = Qt.ItemDataRole.UserRole + 7  # bool or None
    KeptRole = Qt.ItemDataRole.UserRole + 8  # bool (True without kept flags)
    ExplanationRole = Qt.ItemDataRole.UserRole + 9  # str or None
    ThumbnailRole = Qt.ItemDataRole.DecorationRole  # QPixmap, or None while loading / without a crop
    ThumbnailFailedRole = Qt.ItemDataRole.UserRole + 10

    counts_changed = Signal()  # marks, kept flags or the visible set changed

    def __init__(self, loader: ThumbnailLoader, parent=None) -> None:
        super().__init__(parent)
        self._loader = loader
        loader.ready.connect(self._thumbnails_ready)
        self._set = ResultSet.empty()
        self._entry_of: dict[str, int] = {}
        self._rank = np.zeros(0, dtype=np.int64)
        self._camera_code = np.zeros(0, dtype=np.int32)
        self._camera_names: list[str] = []
        self._order = np.zeros(0, dtype=np.int64)
        self._position = np.zeros(0, dtype=np.int64)
        self._marks: dict[str, str] = {}
        self._explanations: Mapping[str, str] = {}
        self._sort = SORT_SCORE
        self._cameras: frozenset[str] | None = None
        self._time_range: tuple[float | None, float | None] | None = None
        self._preview_threshold: float | None = None

    # ---------------------------------------------------------------------------------------- setters

    def set_results(self, results: ResultSet) -> None:
        self.beginResetModel()
        self._set = results
        self._entry_of = {item_id: i for i, item_id in enumerate(results.ids)}
        self._rank = np.arange(1, len(results) + 1, dtype=np.int64)  # entries come in ranking order
        self._camera_names = sorted({c for c in results.cameras if c is not None})
        lookup = {name: code for code, name in enumerate(self._camera_names)}
        self._camera_code = np.fromiter((lookup.get(c, -1) for c in results.cameras), np.int32, len(results))
        self._explanations = _kept_explanations(results.explanations)
        self._preview_threshold = None
        self._loader.set_resolver(results.crops)
        self._reorder()
        self.endResetModel()

    def set_marks(self, confirmed: Iterable[str], rejected: Iterable[str]) -> None:
        marks = {item_id: CONFIRMED for item_id in confirmed}
        marks.update({item_id: REJECTED for item_id in rejected})
        changed = set(marks.items()) ^ set(self._marks.items())
        self._marks = marks
        self._entries_changed({item_id for item_id, _ in changed})
        self.counts_changed.emit()

    def mark(self, item_ids: Iterable[str], mark: str) -> None:
        if mark not in MARKS:
            raise ResultsInputError(f"mark must be one of {MARKS}, got {mark!r}")
        item_ids = list(item_ids)
        for item_id in item_ids:
            if mark == CLEAR:
                self._marks.pop(item_id, None)
            else:
                self._marks[item_id] = mark
        self._entries_changed(item_ids)
        self.counts_changed.emit()

    def set_explanations(self, explanations: Mapping[str, str]) -> None:
        self._explanations = _kept_explanations(explanations)
        if self.rowCount():
            self.dataChanged.emit(self.index(0), self.index(self.rowCount() - 1), [Qt.ItemDataRole.ToolTipRole])

    def set_preview_threshold(self, threshold: float | None) -> None:
        """Fade the items a threshold keep rule would drop (score < threshold, not confirmed); None shows the
        step's own kept flags again."""
        self._preview_threshold = None if threshold is None else float(threshold)
        if self.rowCount():
            self.dataChanged.emit(self.index(0), self.index(self.rowCount() - 1), [self.KeptRole])
        self.counts_changed.emit()

    def set_sort(self, key: str) -> None:
        if key not in (SORT_SCORE, SORT_TIME):
            raise ResultsInputError(f"sort key must be {SORT_SCORE!r} or {SORT_TIME!r}, got {key!r}")
        if key != self._sort:
            self._sort = key
            self._relayout()

    def set_filters(self, cameras: Iterable[str] | None, time_range: tuple[float | None, float | None] | None) -> None:
        """Show only ``cameras`` (None: all) within ``time_range`` (inclusive; None bounds are open). Items
        without a camera or time fail an active camera or time filter, as in the engine's step filters."""
        cameras = None if cameras is None else frozenset(cameras)
        time_range = None if time_range is None else (time_range[0], time_range[1])
        if (cameras, time_range) == (self._cameras, self._time_range):
            return  # the rows already follow these filters: no second reset (and relayout) of the grid
        self._cameras, self._time_range = cameras, time_range
        self.beginResetModel()
        self._reorder()
        self.endResetModel()

    # ---------------------------------------------------------------------------------------- queries

    @property
    def results(self) -> ResultSet:
        return self._set

    @property
    def sort_key(self) -> str:
        return self._sort

    @property
    def camera_names(self) -> list[str]:
        """Cameras present in the whole set (sorted)."""
        return list(self._camera_names)

    def time_bounds(self) -> tuple[float, float] | None:
        times = self._set.times
        known = times[np.isfinite(times)]
        return None if known.size == 0 else (float(known.min()), float(known.max()))

    def visible_ids(self) -> list[str]:
        ids = self._set.ids
        return [ids[int(i)] for i in self._order]

    def row_of(self, item_id: str) -> int | None:
        """Visible row of an id, or None when it is filtered out or unknown."""
        entry = self._entry_of.get(item_id)
        if entry is None:
            return None
        row = int(self._position[entry])
        return row if row >= 0 else None

    def item_id(self, row: int) -> str:
        return self._set.ids[int(self._order[row])]

    def marks(self) -> dict[str, str]:
        return dict(self._marks)

    def kept_count(self) -> int:
        """Visible items the step keeps (or the preview threshold would keep)."""
        return int(np.count_nonzero(self._kept_mask()[self._order]))

    def step_kept_count(self) -> int:
        """Visible items the step itself kept (whatever a dragged cut previews)."""
        kept = self._set.kept
        return int(self._order.shape[0]) if kept is None else int(np.count_nonzero(kept[self._order]))

    def step_has_kept_flags(self) -> bool:
        return self._set.kept is not None

    def preview_threshold(self) -> float | None:
        return self._preview_threshold

    def has_ground_truth(self) -> bool:
        return self._set.relevant is not None and bool(np.any(self._set.relevant))

    def has_kept_flags(self) -> bool:
        return self._set.kept is not None or self._preview_threshold is not None

    # ---------------------------------------------------------------------------------------- Qt model

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else int(self._order.shape[0])

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < self._order.shape[0]:
            return None
        entry = int(self._order[index.row()])
        item_id = self._set.ids[entry]
        if role in (Qt.ItemDataRole.DisplayRole, self.IdRole):
            return item_id
        if role == self.ScoreRole:
            return _finite(self._set.scores[entry])
        if role == self.CameraRole:
            return self._set.cameras[entry]
        if role == self.TimeRole:
            return _finite(self._set.times[entry])
        if role == self.MarkRole:
            return self._marks.get(item_id)
        if role == self.RankRole:
            return int(self._rank[entry])
        if role == self.RelevantRole:
            return None if self._set.relevant is None else bool(self._set.relevant[entry])
        if role == self.KeptRole:
            return self._kept(entry)
        if role == self.ExplanationRole:
            return self._explanations.get(item_id)
        if role == self.ThumbnailRole:
            return self._loader.thumbnail(item_id)
        if role == self.ThumbnailFailedRole:
            return self._loader.failed(item_id)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(entry, item_id)
        return None

    def card(self, row: int) -> Card:
        """The roles a result card paints for visible ``row``, in one call (painting a card through ``data``
        crossed into Qt and back a dozen times per card)."""
        entry = int(self._order[row])
        item_id = self._set.ids[entry]
        pixmap = self._loader.thumbnail(item_id)
        relevant = None if self._set.relevant is None else bool(self._set.relevant[entry])
        return Card(item_id, pixmap, pixmap is None and self._loader.failed(item_id), self._marks.get(item_id),
                    self._kept(entry), int(self._rank[entry]), relevant, _finite(self._set.scores[entry]),
                    self._set.cameras[entry], _finite(self._set.times[entry]))

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren

    # ---------------------------------------------------------------------------------------- internals

    def _kept(self, entry: int) -> bool:
        if self._preview_threshold is not None:
            if self._marks.get(self._set.ids[entry]) == CONFIRMED:
                return True
            score = self._set.scores[entry]
            return bool(np.isfinite(score) and score >= self._preview_threshold)
        return True if self._set.kept is None else bool(self._set.kept[entry])

    def _kept_mask(self) -> np.ndarray:
        """``_kept`` for every entry at once."""
        n = len(self._set)
        if self._preview_threshold is None:
            return np.ones(n, dtype=bool) if self._set.kept is None else self._set.kept
        with np.errstate(invalid="ignore"):
            mask = self._set.scores >= self._preview_threshold
        confirmed = [self._entry_of[i] for i, m in self._marks.items() if m == CONFIRMED and i in self._entry_of]
        mask[np.asarray(confirmed, dtype=np.int64)] = True
        return mask

    def _tooltip(self, entry: int, item_id: str) -> str:
        camera = self._set.cameras[entry]
        lines = [
            f"<b>{_escape(item_id)}</b>",
            f"Score {format_score(self._set.scores[entry])} (rank {int(self._rank[entry]):,})",
            f"Camera {_escape(camera) if camera is not None else '—'}",
            f"Time {format_time(_finite(self._set.times[entry]))}",
        ]
        mark = self._marks.get(item_id)
        if mark is not None:
            lines.append(f"Marked {mark}")
        if self._set.relevant is not None:
            lines.append("Ground truth: the person" if self._set.relevant[entry] else "Ground truth: someone else")
        explanation = self._explanations.get(item_id)
        if explanation:
            lines.append(f"<hr>{_escape(explanation)}")
        return "<br>".join(lines)

    def _reorder(self) -> None:
        n = len(self._set)
        keep = np.ones(n, dtype=bool)
        if self._cameras is not None:
            wanted = [code for code, name in enumerate(self._camera_names) if name in self._cameras]
            keep &= np.isin(self._camera_code, np.asarray(wanted, dtype=np.int32))
        if self._time_range is not None:
            start, end = self._time_range
            times = self._set.times
            if start is not None:
                keep &= times >= start
            if end is not None:
                keep &= times <= end
        entries = np.flatnonzero(keep)
        if self._sort == SORT_SCORE:
            order = entries  # ranking order
        else:
            times = self._set.times[entries]
            order = entries[np.lexsort((self._rank[entries], np.where(np.isfinite(times), times, np.inf)))]
        self._order = order.astype(np.int64)
        self._position = np.full(n, -1, dtype=np.int64)
        self._position[self._order] = np.arange(self._order.shape[0])

    def _relayout(self) -> None:
        """Re-sort keeping persistent indexes (selection, current item) on their items."""
        self.layoutAboutToBeChanged.emit()
        old = self.persistentIndexList()
        entries = [int(self._order[index.row()]) for index in old]
        self._reorder()
        self.changePersistentIndexList(old, [self.index(int(self._position[e])) for e in entries])
        self.layoutChanged.emit()

    def _entries_changed(self, item_ids: Iterable[str]) -> None:
        item_ids = list(item_ids)
        roles = [self.MarkRole, self.KeptRole, Qt.ItemDataRole.ToolTipRole]
        if len(item_ids) > 64:  # one signal for a large selection instead of one per row
            if self.rowCount():
                self.dataChanged.emit(self.index(0), self.index(self.rowCount() - 1), roles)
            return
        for item_id in item_ids:
            row = self.row_of(item_id)
            if row is not None:
                index = self.index(row)
                self.dataChanged.emit(index, index, roles)

    def _thumbnails_ready(self, item_ids: list[str]) -> None:
        for item_id in item_ids:
            row = self.row_of(item_id)
            if row is not None:
                index = self.index(row)
                self.dataChanged.emit(index, index, [self.ThumbnailRole])


def _finite(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
