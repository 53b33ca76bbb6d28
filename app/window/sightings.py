"""``SightingsDisplay``: the open case's sightings in the sightings timeline (``app.views.sightings_timeline``).

It follows the case's confirmed items on the open gallery (rebuilt when the case, its marks or the gallery
change) and, when the state offers them, the sightings a follow-to-next-camera step proposes. A sighting picked
on the timeline has its items selected in the results grid (those the grid shows) and its best item shown in
the detail pane; confirming or rejecting a proposed sighting marks its items as the grid's C and R do.

Items already read stay cached for the open gallery; when more than ``SYNC_ITEMS`` are new (a case with many
confirmed items opened) they are read in a worker, and a newer read cancels an older one."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QItemSelection, QItemSelectionModel

from app.state import AppState
from app.state.sightings_rows import EMPTY, case_chart, confirmed_marks
from app.views.results import ResultsView
from app.views.sightings_timeline import SightingsTimeline
from app.window.messages import Messages
from app.workers import WorkerHandle, run_in_worker
from engine.index.items import GalleryItem

#: New items read on the UI thread at most (about a quarter of a millisecond each); more go to a worker.
SYNC_ITEMS = 48


class SightingsDisplay:
    """Feeds ``view`` from ``state``; a picked sighting goes to ``results`` and to ``show_item`` (the detail
    pane); following a confirmed sighting calls ``follow_item`` with its best item (``StepActions.follow_item``), within
    the window the view's box sets through ``set_follow_window`` (``follow_window`` at first)."""

    def __init__(self, state: AppState, view: SightingsTimeline, messages: Messages, *, results: ResultsView,
                 show_item: Callable[[str], None], follow_item: Callable[[str], object],
                 follow_window: float, set_follow_window: Callable[[float], None]) -> None:
        self.state, self.view, self.messages = state, view, messages
        self.results, self.show_item, self.follow_item = results, show_item, follow_item
        self._gallery = None
        self._items: dict[str, GalleryItem] = {}
        self._reading: WorkerHandle | None = None
        view.sighting_selected.connect(self.select)
        view.confirm_requested.connect(lambda ids: state.mark_many(list(ids), "confirmed"))
        view.reject_requested.connect(lambda ids: state.mark_many(list(ids), "rejected"))
        # the head step's proposals change with the session (a follow step recorded, undone, replayed)
        for signal in (state.case_changed, state.marks_changed, state.gallery_changed, state.session_changed):
            signal.connect(self.refresh)
        view.set_follow_available(True)
        view.follow_requested.connect(self.follow)
        view.set_follow_window(follow_window)
        view.follow_window_changed.connect(set_follow_window)
        self.refresh()

    def follow(self, index: int) -> None:
        """Follow confirmed sighting ``index`` (its place in time order on the timeline) to the next camera."""
        rows = [row for row in self.view.chart.rows if not row.proposed and row.index == index]
        if rows:
            self.follow_item(rows[0].best)

    def refresh(self, *_args: object) -> None:
        """Rebuild the timeline from the case's confirmed items (reading new ones in a worker when many)."""
        gallery = self.state.gallery
        if gallery is not self._gallery:
            self._gallery, self._items = gallery, {}
        if self._reading is not None:
            self._reading.cancel()
            self._reading = None
        marks = confirmed_marks(self.state.case, self.state.gallery_id)
        ids = [item_id for item_id in marks if gallery is not None and item_id in gallery]
        missing = [item_id for item_id in ids if item_id not in self._items]
        if len(missing) > SYNC_ITEMS:
            self._read_in_worker(gallery, missing)
            return
        self._items.update((item_id, gallery.item(item_id)) for item_id in missing)
        scores = {item_id: score for item_id, score in marks.items() if score is not None}
        try:
            chart = case_chart([self._items[item_id] for item_id in ids], scores, self.state.proposals())
        except ValueError as exc:
            self.messages.error(f"The sightings timeline cannot show the case's sightings: {exc}")
            chart = EMPTY
        self.view.set_chart(chart)

    def _read_in_worker(self, gallery, missing: list[str]) -> None:
        def read(job) -> dict[str, GalleryItem]:
            out = {}
            for done, item_id in enumerate(missing):
                if done % 64 == 0:
                    job.check()
                out[item_id] = gallery.item(item_id)
            return out

        def arrived(items: dict[str, GalleryItem]) -> None:
            if handle is self._reading and gallery is self.state.gallery:
                self._reading = None
                self._items.update(items)
                self.refresh()

        handle = self._reading = run_in_worker(read, on_result=arrived, on_error=self.messages.error,
                                               name="Reading the sightings' items")

    def select(self, item_ids: list, best: str) -> None:
        """Select the sighting's items in the grid (those it shows, only them; ``best`` current when shown) and
        show ``best`` in the detail pane."""
        model, chooser = self.results.model, self.results.grid.selectionModel()
        shown = [item_id for item_id in item_ids if model.row_of(item_id) is not None]
        chooser.clearSelection()
        current = best if best in shown else next(iter(shown), None)
        if current is not None:
            self.results.select_item(current)  # current, selected and scrolled to
        selection = QItemSelection()
        for item_id in shown:
            index = model.index(model.row_of(item_id))
            selection.select(index, index)
        chooser.select(selection, QItemSelectionModel.SelectionFlag.Select)
        self.show_item(best)
        if len(shown) < len(item_ids):
            self.messages.message(f"{len(item_ids) - len(shown)} of the sighting's {len(item_ids)} items are not "
                                  f"among the results shown")
