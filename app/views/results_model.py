"""The list model behind the results grid: the entries of a ranking (``app.views.result_set.ResultSet``)
filtered and sorted with numpy, each row read only when the grid paints it, so a million rows stay smooth
(docs/architecture.md, "The window at a million items"); plus the shared mark names and score formatting."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import NamedTuple

import numpy as np
from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QPixmap, QStandardItemModel

from app.state.engine_terms import screen_time as format_time
from app.views.result_set import (  # noqa: F401 - the grid's data, importable from here
    CodedNames,
    DeferredExplanations,
    ResultSet,
    ResultsInputError,
    RowIds,
    kept_explanations,
)
from app.views.thumbnails import ThumbnailLoader

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


# ------------------------------------------------------------------------------------------------ formatting
# times: ``engine.kernel.timefmt`` (local time with its zone on screen; one rule for wall-clock vs footage clock)


def format_score(score: float | None) -> str:
    return "—" if score is None or not math.isfinite(score) else f"{score:.3f}"


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


class _ListIndex:
    """``model.index(row, column=0, parent=QModelIndex())`` for Python callers, as a list model offers it, made
    by the C++ ``QStandardItemModel.index``. Not a method, so Qt's own calls never come into Python for it
    (PySide treats only a Python function as an override of a C++ virtual)."""

    def __get__(self, model, owner=None):  # noqa: ANN001, ANN204 - descriptor protocol
        if model is None:
            return self

        def index(row: int, column: int = 0, parent: QModelIndex | QPersistentModelIndex = QModelIndex()):  # noqa: B008
            return QStandardItemModel.index(model, row, column, parent)

        return index


class ResultsModel(QStandardItemModel):
    """The visible entries of a ResultSet (filtered, sorted). Roles below; DisplayRole is the id.

    A ``QStandardItemModel`` of one column and no items only for its row count and indexes, which it keeps in
    C++: Qt's list view asks the model for an index of every row when it lays the grid out, and an index asks
    for the row count, so a count kept in Python cost a million calls into Python at a million rows; the data
    comes from the columns, row by row as the grid paints. Changes that may touch every card (the preview cut,
    a large set of marks, new tooltips) are announced by ``cards_changed`` (the grid repaints what it shows)
    rather than by a ``dataChanged`` over every row, which the view walks row by row."""

    index = _ListIndex()

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
    cards_changed = Signal()  # any card may look different now (roles of many rows changed)

    def __init__(self, loader: ThumbnailLoader, parent=None) -> None:
        super().__init__(0, 1, parent)
        self._loader = loader
        loader.ready.connect(self._thumbnails_ready)
        self._set = ResultSet.empty()
        self._order = np.zeros(0, dtype=np.int64)
        self._order_ascending = True  # entries in ranking order: a row is found by binary search
        self._position: np.ndarray | None = None  # entry -> visible row (−1: hidden), made when first needed
        self._descending: bool | None = None  # whether the scores fall along the ranking (NaN: no)
        self._keep: np.ndarray | None = None  # bool per entry under the filters (None: no filter)
        self._visible_scores: np.ndarray | None = None  # scores of the visible entries in ranking order
        self._step_kept: int | None = None
        self._marks: dict[str, str] = {}
        self._explanations: Mapping[str, str] = {}
        self._sort = SORT_SCORE
        self._cameras: frozenset[str] | None = None
        self._time_range: tuple[float | None, float | None] | None = None
        self._preview_threshold: float | None = None
        self._camera_names: list[str] = []

    # ---------------------------------------------------------------------------------------- setters

    def set_results(self, results: ResultSet) -> None:
        self.beginResetModel()
        self._set = results
        self._camera_names = results.cameras.present()
        self._descending = None
        self._explanations = kept_explanations(results.explanations)
        self._preview_threshold = None
        self._loader.set_resolver(results.crops)
        self._reorder()
        self._set_row_count(self._order.shape[0])
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
        self._explanations = kept_explanations(explanations)
        self.cards_changed.emit()

    def set_preview_threshold(self, threshold: float | None) -> None:
        """Fade the items a threshold keep rule would drop (score < threshold, not confirmed); None shows the
        step's own kept flags again."""
        self._preview_threshold = None if threshold is None else float(threshold)
        self.cards_changed.emit()
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
        self._set_row_count(self._order.shape[0])
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
        low, high = (np.fmin.reduce(times), np.fmax.reduce(times)) if times.size else (math.nan, math.nan)
        return None if math.isnan(low) else (float(low), float(high))

    def visible_ids(self) -> list[str]:
        ids = self._set.ids
        if isinstance(ids, RowIds):
            return list(ids.take(self._order))
        return [ids[int(i)] for i in self._order]

    def row_of(self, item_id: str) -> int | None:
        """Visible row of an id, or None when it is filtered out or unknown."""
        entry = self._set.entry_of(item_id)
        return None if entry is None else self._row_of_entry(entry)

    def item_id(self, row: int) -> str:
        return self._set.ids[int(self._order[row])]

    def score_of(self, item_id: str) -> float | None:
        """The score of an id in the ranking shown (None: not in it, or unscored)."""
        return self._set.score_of(item_id)

    def marks(self) -> dict[str, str]:
        return dict(self._marks)

    def kept_count(self) -> int:
        """Visible items the step keeps (or the preview threshold would keep)."""
        threshold = self._preview_threshold
        if threshold is None:
            return self.step_kept_count()
        scores = self._scores_shown()
        if self._scores_descending():  # held negated: ascending
            above = int(np.searchsorted(scores, -threshold, side="right"))
        else:
            with np.errstate(invalid="ignore"):
                above = int(np.count_nonzero(scores >= threshold))
        confirmed = [item_id for item_id, mark in self._marks.items() if mark == CONFIRMED]
        entries = self._set.entries_of(confirmed)
        entries = entries[entries >= 0]
        if entries.size:
            below = ~(self._set.scores[entries] >= threshold)
            shown = np.asarray([self._row_of_entry(int(e)) is not None for e in entries[below]], dtype=bool)
            above += int(np.count_nonzero(shown))
        return above

    def step_kept_count(self) -> int:
        """Visible items the step itself kept (whatever a dragged cut previews)."""
        if self._step_kept is None:
            kept = self._set.kept
            if kept is None:
                self._step_kept = int(self._order.shape[0])
            else:
                self._step_kept = int(np.count_nonzero(kept if self._keep is None else kept & self._keep))
        return self._step_kept

    def step_has_kept_flags(self) -> bool:
        return self._set.kept is not None

    def preview_threshold(self) -> float | None:
        return self._preview_threshold

    def has_ground_truth(self) -> bool:
        return self._set.relevant is not None and bool(np.any(self._set.relevant))

    def has_kept_flags(self) -> bool:
        return self._set.kept is not None or self._preview_threshold is not None

    # ---------------------------------------------------------------------------------------- Qt model

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
            return entry + 1
        if role == self.RelevantRole:
            return None if self._set.relevant is None else bool(self._set.relevant[entry])
        if role == self.KeptRole:
            return self._kept(entry, item_id)
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
                    self._kept(entry, item_id), entry + 1, relevant, _finite(self._set.scores[entry]),
                    self._set.cameras[entry], _finite(self._set.times[entry]))

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren

    # ---------------------------------------------------------------------------------------- internals

    def _set_row_count(self, count: int) -> None:
        """The C++ row count to ``count``, between a reset's begin and end (no row signals: the reset says it)."""
        blocked = self.blockSignals(True)
        try:
            self.setRowCount(count)
        finally:
            self.blockSignals(blocked)

    def _kept(self, entry: int, item_id: str) -> bool:
        if self._preview_threshold is not None:
            if self._marks.get(item_id) == CONFIRMED:
                return True
            score = self._set.scores[entry]
            return bool(np.isfinite(score) and score >= self._preview_threshold)
        return True if self._set.kept is None else bool(self._set.kept[entry])

    def _scores_descending(self) -> bool:
        """Whether the ranking's scores never rise (a step's ranking): counts above a cut are a binary search."""
        if self._descending is None:
            scores = self._set.scores
            self._descending = bool(scores.size < 2 or np.all(scores[1:] <= scores[:-1]))
        return self._descending

    def _scores_shown(self) -> np.ndarray:
        """The visible entries' scores in ranking order, negated when they fall along it (ascending then, for a
        binary search)."""
        if self._visible_scores is None:
            if self._keep is None:
                scores = self._set.scores
            else:
                scores = self._set.scores[self._order if self._order_ascending else np.flatnonzero(self._keep)]
            self._visible_scores = -scores if self._scores_descending() else scores
        return self._visible_scores

    def _row_of_entry(self, entry: int) -> int | None:
        if self._order_ascending:
            row = int(np.searchsorted(self._order, entry))
            return row if row < self._order.shape[0] and self._order[row] == entry else None
        if self._position is None:
            self._position = np.full(len(self._set), -1, dtype=np.int64)
            self._position[self._order] = np.arange(self._order.shape[0])
        row = int(self._position[entry])
        return row if row >= 0 else None

    def _tooltip(self, entry: int, item_id: str) -> str:
        camera = self._set.cameras[entry]
        lines = [
            f"<b>{_escape(item_id)}</b>",
            f"Score {format_score(self._set.scores[entry])} (rank {entry + 1:,})",
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

    def _visible_mask(self) -> np.ndarray | None:
        """bool per entry under the filters (None: no filter, every entry)."""
        keep = None
        if self._cameras is not None:
            keep = self._set.cameras.mask(self._cameras)
        if self._time_range is not None:
            start, end = self._time_range
            times = self._set.times
            inside = np.ones(times.shape[0], dtype=bool)
            with np.errstate(invalid="ignore"):
                if start is not None:
                    inside &= times >= start
                if end is not None:
                    inside &= times <= end
            keep = inside if keep is None else keep & inside
        return keep

    def _reorder(self) -> None:
        n = len(self._set)
        keep = self._visible_mask()
        if self._sort == SORT_SCORE:
            order = np.arange(n, dtype=np.int64) if keep is None else np.flatnonzero(keep).astype(np.int64)
        else:
            by_time = self._set.time_order()
            order = by_time if keep is None else by_time[keep[by_time]]
        self._order = np.asarray(order, dtype=np.int64)
        self._keep = keep
        self._order_ascending = self._sort == SORT_SCORE
        self._position = None
        self._visible_scores = None
        self._step_kept = None

    def _relayout(self) -> None:
        """Re-sort keeping persistent indexes (selection, current item) on their items."""
        self.layoutAboutToBeChanged.emit()
        old = self.persistentIndexList()
        entries = [int(self._order[index.row()]) for index in old]
        self._reorder()
        self.changePersistentIndexList(old, [self.index(self._row_of_entry(e)) for e in entries])
        self.layoutChanged.emit()

    def _entries_changed(self, item_ids: Iterable[str]) -> None:
        item_ids = list(item_ids)
        if len(item_ids) > 64:  # one repaint for a large selection instead of a signal per row
            self.cards_changed.emit()
            return
        roles = [self.MarkRole, self.KeptRole, Qt.ItemDataRole.ToolTipRole]
        for item_id in item_ids:
            row = self.row_of(item_id)
            if row is not None:
                index = self.index(row)
                self.dataChanged.emit(index, index, roles)

    def _thumbnails_ready(self, item_ids: list[str]) -> None:
        entries = self._set.entries_of(item_ids)
        for entry in entries[entries >= 0].tolist():
            row = self._row_of_entry(entry)
            if row is not None:
                index = self.index(row)
                self.dataChanged.emit(index, index, [self.ThumbnailRole])


def _finite(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
