"""Results grid: the current ranking as thumbnails with score, camera and time; confirm/reject marks; sort by
score or time; camera and time filters; find similar (docs/architecture.md).

Data comes in as a ``ResultSet`` (``app.views.results_model``); everything the analyst does goes out as
signals. The list view asks only for the rows on screen (``app.views.result_card`` paints them) and
thumbnails load off the UI thread (``app.views.thumbnails``); the camera filter is ``app.views.camera_filter``
and the lines above the grid ``app.views.results_caption``."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from PySide6.QtCore import QItemSelection, QItemSelectionModel, QModelIndex, QPoint, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QMenu,
    QSizePolicy,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.state.engine_terms import read_screen_time as parse_time
from app.state.engine_terms import screen_time_short as format_time_short
from app.state.working_state import Filters
from app.views.camera_filter import CameraFilterButton
from app.views.flow_layout import FlowLayout
from app.views.result_card import CELL, PAD, THUMB
from app.views.results_caption import GT_LEGEND, grid_caption, ground_truth_legend, step_caption
from app.views.results_grid import ResultsGrid, TimeSpinBox
from app.views.results_model import (
    CLEAR,
    CONFIRMED,
    MARK_COLORS,
    MARKS,
    OUTFIT_CHANGE_TIP,
    REJECTED,
    SORT_SCORE,
    SORT_TIME,
    ResultSet,
    ResultsInputError,
    ResultsModel,
    format_score,
    format_time,
)
from app.views.thumbnails import ThumbnailLoader

__all__ = [  # the grid's vocabulary, importable from here
    "CELL", "CLEAR", "CONFIRMED", "MARKS", "MARK_COLORS", "PAD", "REJECTED", "SORT_SCORE", "SORT_TIME", "THUMB",
    "GT_LEGEND", "ResultSet", "ResultsGrid", "ResultsInputError", "ResultsModel", "ResultsView", "TimeSpinBox",
    "format_score", "format_time", "format_time_short", "ground_truth_legend", "parse_time",
]


def _group(parent: QWidget, *widgets: QWidget) -> QWidget:
    """Widgets kept together on one line of the wrapping toolbar."""
    group = QWidget(parent)
    row = QHBoxLayout(group)
    row.setContentsMargins(0, 0, 0, 0)
    row.setSpacing(6)
    for widget in widgets:
        row.addWidget(widget)
    return group


class ResultsView(QWidget):
    """Toolbar (sort, camera filter, time filter, counts) above the grid; an empty-state note when there is
    nothing to show.

    Setters: ``set_results`` (``from_top`` for a newly shown step), ``show_top``, ``set_marks``,
    ``set_mark_map``, ``set_explanations``, ``set_ground_truth``, ``set_preview_threshold``, ``set_sort``,
    ``set_filters`` (these never emit ``sort_changed``/``filters_changed``), ``select_item``, ``clear``.
    Signals carry item ids (str); marks are CONFIRMED, REJECTED or CLEAR."""

    marks_changed = Signal(list, str)  # ids, mark — already shown in the grid
    open_requested = Signal(str)  # Enter or double click: show in the detail pane
    current_changed = Signal(str)  # the focused item ("" when none)
    selection_changed = Signal(list)  # selected ids, in grid order
    find_similar_requested = Signal(str)
    find_similar_across_outfits_requested = Signal(str)
    sort_changed = Signal(str)  # SORT_SCORE or SORT_TIME
    filters_changed = Signal(object, object)  # cameras: frozenset[str] | None, time_range: (start, end) | None

    def __init__(self, parent: QWidget | None = None, loader: ThumbnailLoader | None = None) -> None:
        super().__init__(parent)
        self.loader = loader or ThumbnailLoader(size=THUMB, parent=self)
        self.model = ResultsModel(self.loader, self)
        self.grid = ResultsGrid(self)
        self.grid.setModel(self.model)
        self._updating = False
        self._known_cameras: list[str] = []  # cameras the filter offers besides the shown ones (the gallery's)
        self._step_text = ""  # what the step on view did (``set_step_summary``), above the grid's own counts

        self.sort_box = QComboBox(self)
        self.sort_box.addItem("Ranking (best first)", SORT_SCORE)
        self.sort_box.addItem("Earliest first", SORT_TIME)
        self.sort_box.setToolTip("Order of the grid")
        self.camera_button = CameraFilterButton(self)
        self.camera_menu = self.camera_button.camera_menu
        self.time_check = QCheckBox("Time", self)
        self.time_from = TimeSpinBox(self)
        self.time_to = TimeSpinBox(self)
        self.time_from.setToolTip("Earliest time shown (inclusive)")
        self.time_to.setToolTip("Latest time shown (inclusive)")
        self.count_label = QLabel(self)
        self.count_label.setTextFormat(Qt.TextFormat.RichText)

        # the toolbar wraps instead of widening the window: its minimum is its widest group, never the sum
        self.toolbar = QWidget(self)
        bar = FlowLayout(self.toolbar, spacing=8)
        bar.setContentsMargins(6, 4, 6, 2)
        sort_group = _group(self, QLabel("Sort", self), self.sort_box)
        time_group = _group(self, self.time_check, self.time_from, QLabel("–", self), self.time_to)
        for widget in (sort_group, self.camera_button, time_group):
            bar.addWidget(widget)
        self.count_label.setWordWrap(True)
        self.count_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.count_label.setContentsMargins(8, 0, 8, 4)
        self.legend_label = QLabel(self)
        self.legend_label.setWordWrap(True)
        self.legend_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.legend_label.setContentsMargins(8, 0, 8, 4)
        self.legend_label.setTextFormat(Qt.TextFormat.RichText)
        self.legend_label.setText(GT_LEGEND)
        self.legend_label.hide()

        self.empty_label = QLabel("No results yet.\nRun a search step to see the ranking here.", self)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setEnabled(False)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.empty_label)
        self.stack.addWidget(self.grid)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.toolbar)
        layout.addWidget(self.count_label)
        layout.addWidget(self.legend_label)
        layout.addWidget(self.stack, 1)

        self.sort_box.currentIndexChanged.connect(self._sort_picked)
        self.camera_button.edited.connect(self._camera_edited)
        self.time_check.toggled.connect(self._time_toggled)
        self.time_from.valueChanged.connect(self._filters_edited)
        self.time_to.valueChanged.connect(self._filters_edited)
        self.grid.mark_requested.connect(self._mark_selection)
        self.grid.open_requested.connect(self._open_current)
        self.grid.find_similar_requested.connect(self._find_similar_current)
        self.grid.copy_requested.connect(self._copy_selection)
        self.grid.doubleClicked.connect(lambda index: self.open_requested.emit(index.data(ResultsModel.IdRole)))
        self.grid.customContextMenuRequested.connect(self._context_menu)
        self.grid.selectionModel().currentChanged.connect(self._current_moved)
        self.grid.selectionModel().selectionChanged.connect(self._selection_moved)
        self.model.modelReset.connect(self._refresh_counts)
        self.model.counts_changed.connect(self._refresh_counts)
        self.model.cards_changed.connect(self.grid.viewport().update)
        self._rebuild_filters()
        self._refresh_counts()

    # ---------------------------------------------------------------------------------------- setters

    def set_results(self, results: ResultSet, *, from_top: bool = False) -> None:
        """Show a new ranking; marks, sort and filters stay (filters on cameras it lacks are dropped).

        ``from_top`` (a step shown for the first time): the grid scrolls to its top and the first item shown
        (rank #1 in the ranking order) becomes the current, only selected item; otherwise the selection and
        the current item stay where they still exist."""
        keep = self.selected_ids()
        current = self.current_id()
        self.model.set_results(results)
        self._rebuild_filters()
        self.model.set_filters(*self.filters())
        self.stack.setCurrentWidget(self.grid if len(results) else self.empty_label)
        if from_top:
            self.show_top()
        else:
            self._restore_selection(keep, current)
        self._refresh_counts()

    def show_top(self) -> None:
        """Scroll to the top and make the first item shown the current, only selected item (none: no
        selection)."""
        chooser = self.grid.selectionModel()
        if self.model.rowCount():
            chooser.setCurrentIndex(self.model.index(0), QItemSelectionModel.SelectionFlag.ClearAndSelect)
        else:
            chooser.clearSelection()
            chooser.setCurrentIndex(QModelIndex(), QItemSelectionModel.SelectionFlag.NoUpdate)
        self.grid.scrollToTop()

    def clear(self) -> None:
        self.set_results(ResultSet.empty())

    def set_marks(self, confirmed: Iterable[str], rejected: Iterable[str]) -> None:
        self.model.set_marks(confirmed, rejected)

    def set_mark_map(self, marks: Mapping[str, str]) -> None:
        """``set_marks`` from an ``{item id: CONFIRMED | REJECTED}`` mapping (as ``AppState.marks_changed``)."""
        self.model.set_marks([i for i, m in marks.items() if m == CONFIRMED],
                             [i for i, m in marks.items() if m == REJECTED])

    def set_explanations(self, explanations: Mapping[str, str]) -> None:
        self.model.set_explanations(explanations)

    def set_ground_truth(self, identity: str | None, chosen: bool = False) -> None:
        """Say whose identity the GT tags show (``ground_truth_legend``); the legend shows only while the
        ranking has relevant items."""
        self.legend_label.setText(ground_truth_legend(identity, chosen))

    def set_preview_threshold(self, threshold: float | None) -> None:
        """Fade what a threshold keep rule at ``threshold`` would drop (wire ``DistributionPanel.
        threshold_changed`` here for a live preview); None returns to the step's kept flags."""
        self.model.set_preview_threshold(threshold)

    def set_sort(self, key: str) -> None:
        self.model.set_sort(key)
        with _Quiet(self):
            self.sort_box.setCurrentIndex(self.sort_box.findData(key))

    def set_camera_names(self, names: Iterable[str]) -> None:
        """Every camera the filter offers (the gallery's), also those the ranking shown lacks."""
        self._known_cameras = sorted(set(names))
        self._rebuild_filters()
        self._refresh_counts()

    def set_step_summary(self, text: str) -> None:
        """What the step on view did ("Step 3 · kept 41 of 210 candidates · filters: …"), shown above the
        grid's own counts so the two are never mixed; "" shows none."""
        self._step_text = text
        self._refresh_counts()

    def set_filters(self, cameras: Iterable[str] | None, time_range: tuple[float | None, float | None] | None) -> None:
        with _Quiet(self):
            wanted = None if cameras is None else frozenset(cameras)
            if wanted is not None and not wanted <= self._camera_actions.keys():
                self._known_cameras = sorted(set(self._known_cameras) | wanted)
                self._rebuild_filters()
            self.camera_button.set_checked(wanted)
            self.camera_button.refresh_label()
            self.time_check.setChecked(time_range is not None)
            if time_range is not None:
                start, end = time_range
                if start is not None:
                    self.time_from.setValue(start)
                if end is not None:
                    self.time_to.setValue(end)
            self._time_enabled()
        self._apply_filters()

    def select_item(self, item_id: str) -> bool:
        """Make ``item_id`` the current, only selected item and scroll to it; False when it is not shown."""
        row = self.model.row_of(item_id)
        if row is None:
            return False
        index = self.model.index(row)
        self.grid.selectionModel().setCurrentIndex(index, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        self.grid.scrollTo(index)
        return True

    # ---------------------------------------------------------------------------------------- queries

    def current_id(self) -> str | None:
        index = self.grid.currentIndex()
        return index.data(ResultsModel.IdRole) if index.isValid() else None

    def selected_ids(self) -> list[str]:
        """Selected ids in grid order."""
        rows = sorted(row for part in self.grid.selectionModel().selection() for row in range(part.top(),
                                                                                             part.bottom() + 1))
        return [self.model.item_id(row) for row in rows]

    def filters(self) -> tuple[frozenset[str] | None, tuple[float | None, float | None] | None]:
        """(cameras, time_range) as the controls stand, in the form ``StepQuery`` takes (None = no filter)."""
        cameras = self.camera_button.choice()
        time_range = None
        if self.time_check.isChecked() and self.time_check.isEnabled():
            time_range = (self.time_from.value(), self.time_to.value())
        return cameras, time_range

    def sort_key(self) -> str:
        return self.model.sort_key

    # ---------------------------------------------------------------------------------------- actions

    def _targets(self) -> list[str]:
        ids = self.selected_ids()
        if not ids and self.current_id() is not None:
            ids = [self.current_id()]
        return ids

    def _mark_selection(self, mark: str) -> None:
        ids = self._targets()
        if ids:
            self.model.mark(ids, mark)
            self.marks_changed.emit(ids, mark)

    def _open_current(self) -> None:
        item_id = self.current_id()
        if item_id is not None:
            self.open_requested.emit(item_id)

    def _find_similar_current(self) -> None:
        item_id = self.current_id()
        if item_id is not None:
            self.find_similar_requested.emit(item_id)

    def _find_similar_across_outfits(self) -> None:
        item_id = self.current_id()
        if item_id is not None:
            self.find_similar_across_outfits_requested.emit(item_id)

    def _copy_selection(self) -> None:
        ids = self._targets()
        if ids:
            QGuiApplication.clipboard().setText("\n".join(ids))

    def _context_menu(self, pos: QPoint) -> None:
        index = self.grid.indexAt(pos)
        if not index.isValid():
            return
        if not self.grid.selectionModel().isSelected(index):
            self.grid.selectionModel().setCurrentIndex(index, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        else:
            self.grid.selectionModel().setCurrentIndex(index, QItemSelectionModel.SelectionFlag.NoUpdate)
        menu = self.context_menu()
        menu.exec(self.grid.viewport().mapToGlobal(pos))

    def context_menu(self) -> QMenu:
        """The menu for the current selection (built fresh; also used by tests)."""
        ids = self._targets()
        many = len(ids) > 1
        menu = QMenu(self)
        open_action = menu.addAction("Open in detail\tEnter", self._open_current)
        menu.addSeparator()
        suffix = f" {len(ids)} items" if many else ""
        menu.addAction(f"Confirm{suffix}\tC", lambda: self._mark_selection(CONFIRMED))
        menu.addAction(f"Reject{suffix}\tR", lambda: self._mark_selection(REJECTED))
        menu.addAction(f"Clear mark{suffix}\tU", lambda: self._mark_selection(CLEAR))
        menu.addSeparator()
        similar = menu.addAction("Find similar\tF", self._find_similar_current)
        across = menu.addAction("Find similar, clothes may have changed\tShift+F", self._find_similar_across_outfits)
        across.setToolTip(OUTFIT_CHANGE_TIP)
        menu.addAction("Copy id" + ("s" if many else "") + "\tCtrl+C", self._copy_selection)
        open_action.setEnabled(self.current_id() is not None)
        similar.setEnabled(self.current_id() is not None)
        across.setEnabled(self.current_id() is not None)
        return menu

    # ---------------------------------------------------------------------------------------- internals

    def _current_moved(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self.current_changed.emit(current.data(ResultsModel.IdRole) if current.isValid() else "")

    def _selection_moved(self, *_args) -> None:
        self.selection_changed.emit(self.selected_ids())
        self._refresh_counts()

    def _sort_picked(self, _index: int) -> None:
        key = self.sort_box.currentData()
        self.model.set_sort(key)
        current = self.grid.currentIndex()
        if current.isValid():
            self.grid.scrollTo(current)
        if not self._updating:
            self.sort_changed.emit(key)

    def _rebuild_filters(self) -> None:
        """Camera menu from the cameras present (checked state kept by name); time range from the data."""
        with _Quiet(self):
            self.camera_button.rebuild(set(self.model.camera_names) | set(self._known_cameras))
            bounds = self.model.time_bounds()
            self.time_check.setEnabled(bounds is not None)
            if bounds is not None:
                low, high = math.floor(bounds[0]), math.ceil(bounds[1])
                start, end = self.time_from.value(), self.time_to.value()
                fresh = self.time_from.minimum() != low or self.time_to.maximum() != high
                for box in (self.time_from, self.time_to):
                    box.setRange(low, high)
                    box.fit_text((low, high))
                if fresh and not self.time_check.isChecked():
                    start, end = low, high
                self.time_from.setValue(start)
                self.time_to.setValue(end)
            self._time_enabled()

    def _camera_edited(self) -> None:
        if not self._updating:
            self._filters_edited()

    def _time_toggled(self, _checked: bool) -> None:
        self._time_enabled()
        self._filters_edited()

    def _time_enabled(self) -> None:
        active = self.time_check.isChecked() and self.time_check.isEnabled()
        self.time_from.setEnabled(active)
        self.time_to.setEnabled(active)

    def _filters_edited(self, *_args) -> None:
        if self._updating:
            return
        if self.time_from.value() > self.time_to.value():
            with _Quiet(self):
                if self.sender() is self.time_from:
                    self.time_to.setValue(self.time_from.value())
                else:
                    self.time_from.setValue(self.time_to.value())
        self.camera_button.refresh_label()
        cameras, time_range = self._apply_filters()
        self.filters_changed.emit(cameras, time_range)

    def _apply_filters(self):
        cameras, time_range = self.filters()
        keep, current = self.selected_ids(), self.current_id()
        self.model.set_filters(cameras, time_range)
        self._restore_selection(keep, current)
        self._refresh_counts()
        return cameras, time_range

    def _restore_selection(self, ids: list[str], current: str | None) -> None:
        selection = QItemSelection()
        for item_id in ids:
            row = self.model.row_of(item_id)
            if row is not None:
                index = self.model.index(row)
                selection.select(index, index)
        chooser = self.grid.selectionModel()
        chooser.select(selection, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        row = None if current is None else self.model.row_of(current)
        if row is not None:
            chooser.setCurrentIndex(self.model.index(row), QItemSelectionModel.SelectionFlag.NoUpdate)

    def _refresh_counts(self, *_args) -> None:
        total, shown = len(self.model.results), self.model.rowCount()
        self.legend_label.setVisible(self.model.has_ground_truth())
        step_line = step_caption(self._step_text)
        if total == 0:
            self.count_label.setText(step_line.removesuffix("<br>"))
            return
        # the step's counts (above) and the grid's (this line) are never mixed in one phrase
        step_kept = None
        if self.model.step_has_kept_flags() and not self._step_text:
            step_kept = self.model.step_kept_count()
        threshold = self.model.preview_threshold()
        marks = self.model.marks()
        confirmed = sum(1 for m in marks.values() if m == CONFIRMED)
        rejected = sum(1 for m in marks.values() if m == REJECTED)
        self.count_label.setText(step_line + grid_caption(
            shown, total, step_kept=step_kept, filters=Filters(*self.filters()).describe(),
            preview=None if threshold is None else (threshold, self.model.kept_count()),
            confirmed=(confirmed, MARK_COLORS[CONFIRMED].name()), rejected=(rejected, MARK_COLORS[REJECTED].name()),
            selected=sum(part.height() for part in self.grid.selectionModel().selection())))

    @property
    def _camera_actions(self) -> dict:
        """The camera filter's actions by camera name (``CameraFilterButton.actions_by_name``)."""
        return self.camera_button.actions_by_name


class _Quiet:
    """Within the block the view's controls change without emitting the view's signals."""

    def __init__(self, view: ResultsView) -> None:
        self.view = view

    def __enter__(self) -> None:
        self._was = self.view._updating
        self.view._updating = True

    def __exit__(self, *_exc) -> None:
        self.view._updating = self._was
