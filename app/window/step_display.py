"""``StepDisplay``: a step shown in the window: its ranking in the results grid, its scores on the distribution
panel, the selected item (with why it ranks where it does) in the detail pane, and the marks on all three.

A step of more than ``SYNC_ROWS`` candidates has its grid columns and plotted figures made in a worker (a
million candidates take the UI thread's whole budget in sorting and gathering alone); the grid and the plot
keep what they showed until they arrive, and a newer step shown first cancels them. The whole gallery shown
unscored, and a stored step's kept items shown before its result is re-run, are made in a worker past the same
size, with the grid empty meanwhile (docs/architecture.md, "The window at a million items")."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Mapping

import numpy as np

from app.provenance import SOURCE_LABELS, similarity_line, view_network
from app.state import AppState
from app.state.distribution import ScoreDistribution, step_distribution
from app.state.timeline_rows import step_label
from app.state.working_state import step_header
from app.views.detail import DetailPane
from app.views.distribution import DistributionPanel
from app.views.results import ResultsView
from app.views.results_model import DeferredExplanations, ResultSet
from app.views.timeline import StepTimeline
from app.window.messages import Messages
from app.workers import WorkerHandle, run_in_worker
from engine.retrieval.evidence.ranking import explanation_line
from engine.retrieval.search import QueryInputError
from engine.retrieval.search.trust import step_trust

#: Results whose tooltip explains their score (the best ones; the detail pane explains any selected item).
EXPLAINED_ITEMS = 200
#: Candidates up to which a step's grid and plot are made on the UI thread (a few milliseconds); beyond, in a worker.
SYNC_ROWS = 50_000


class ShownScores(Mapping[str, float]):
    """Item id → score (NaN: unscored) of the ranking in the grid, read from its columns when asked."""

    def __init__(self, results: ResultSet) -> None:
        self._results = results

    def __getitem__(self, item_id: str) -> float:
        entry = self._results.entry_of(item_id)
        if entry is None:
            raise KeyError(item_id)
        return float(self._results.scores[entry])

    def __iter__(self) -> Iterator[str]:
        return iter(self._results.ids)

    def __len__(self) -> int:
        return len(self._results)


class StepDisplay:
    """Follows ``state``'s selected step and marks into the ``results`` grid, the ``distribution`` panel, the
    ``detail`` pane and the ``timeline``'s selection."""

    def __init__(self, state: AppState, messages: Messages, *, results: ResultsView, detail: DetailPane,
                 distribution: DistributionPanel, timeline: StepTimeline) -> None:
        self.state = state
        self.messages = messages
        self.results = results
        self.detail = detail
        self.distribution = distribution
        self.timeline = timeline
        #: Item id → score of the results in the grid (NaN: unscored).
        self.scores: Mapping[str, float] = {}
        self._step_result = None
        self._preparing: WorkerHandle | None = None  # a large step's grid and plot being made
        self._pending: tuple | None = None  # what it was asked: (result, gallery, explanations, label, grid)
        self._from_top = False  # whether _set_results opens the grid at rank #1 (a newly shown step)
        self._shown_step: tuple[int | None, object] | None = None  # (step id, its result) last put in the grid

    def show_step(self, step_id: int | None) -> None:
        """Results grid and distribution for a step (None: the whole gallery, unscored). A step (or a step's
        result) not shown just before opens at the top of its ranking with rank #1 current; showing the same
        one again keeps the grid's selection and scroll."""
        self.timeline.set_selected(step_id)
        gallery = self.state.gallery
        self.detail.clear()
        self._step_result = None
        self._cancel_preparing()
        if gallery is None:
            self._shown_step = None
            self.results.set_step_summary("")
            self._set_results(ResultSet.empty())
            self.distribution.clear()
            return
        result = self.state.step_result(step_id)
        self._step_result = result
        shown = self._shown_step
        self._from_top = shown is None or shown[0] != step_id or shown[1] is not result
        self._shown_step = (step_id, result)
        stored = None if step_id is None else self.state.step_state(step_id)
        label = step_label(self.state.case, step_id)
        header = step_header(stored, label, len(gallery))
        trust = None if result is None else step_trust(result, gallery)
        if trust is not None and trust.warning:
            header = f"{header}\n⚠ {trust.warning}"
        self.results.set_step_summary(header)
        self.distribution.set_can_apply(result is not None and stored is not None and not stored.undone)
        if result is not None:
            lines = DeferredExplanations(lambda: {item: explanation_line(e, labels=SOURCE_LABELS) for item, e in
                                                  result.explanations(EXPLAINED_ITEMS).items()})
            plot_label = None if stored is None else label
            if result.rows.shape[0] > SYNC_ROWS:
                self._prepare(result, gallery, lines, plot_label)
                return
            self._set_results(ResultSet.from_step(result, gallery, lines))
            self.results.set_ground_truth(*self._truth_identity(result))
            self.distribution.set_step(result, self._confirmed(), label=plot_label)
            self.results.set_preview_threshold(None)
        elif stored is not None and stored.gallery_id == self.state.gallery_id:
            kept = stored.kept_ids
            scores = np.asarray(stored.kept_scores, dtype=np.float64)
            if kept:
                self.distribution.set_scores(scores, len(kept), keep_rule=stored.keep_rule,
                                             keep_value=stored.keep_value,
                                             title=f"Step {label} · kept items as stored "
                                                   f"(re-run the case for every candidate's score)")
            else:
                self.distribution.clear()

            def stored_results() -> ResultSet:
                return ResultSet.from_ids(gallery, list(kept), scores, kept=np.ones(len(kept), bool))

            if len(kept) > SYNC_ROWS:  # every kept id is looked up in the gallery
                self._prepare_set(stored_results, "the step's kept items")
                return
            self._set_results(stored_results())
            self.results.set_preview_threshold(None)
        elif stored is not None:
            self._set_results(ResultSet.empty())
            self.distribution.clear()
            self.messages.message(f"Step {label} was searched on another gallery: open it to see its items")
        else:
            self.distribution.clear()
            if len(gallery) > SYNC_ROWS:
                self._prepare_set(lambda: ResultSet.from_gallery(gallery), "the gallery's items")
                return
            self._set_results(ResultSet.from_gallery(gallery))
        self.results.set_mark_map(self.state.marks)

    @property
    def preparing(self) -> bool:
        """A large step's grid and plot are being made in a worker."""
        return self._preparing is not None

    def _cancel_preparing(self) -> None:
        if self._preparing is not None:
            self._preparing.cancel()
            self._preparing = None

    def _prepare(self, result, gallery, lines, label: str | None, grid: bool = True) -> None:
        """Make the grid's columns (``grid``) and the plot's figures of ``result`` in a worker, then show them."""
        self._cancel_preparing()
        self._pending = (result, gallery, lines, label, grid)
        confirmed = self._confirmed()
        time_sorted = self.results.sort_key() == "time"

        def make(job) -> tuple[ResultSet | None, ScoreDistribution]:
            results = None
            if grid:
                results = ResultSet.from_step(result, gallery, lines)
                job.check()
                results.prepare(time_sorted=time_sorted)
                job.check()
            return results, step_distribution(result, confirmed, label=label).prepare()

        def arrived(made: tuple[ResultSet | None, ScoreDistribution]) -> None:
            if handle is not self._preparing:
                return
            self._preparing = None
            results, distribution = made
            if results is not None:
                self._set_results(results)
                self.results.set_ground_truth(*self._truth_identity(result))
            self.distribution.set_distribution(distribution)
            self.results.set_preview_threshold(None)
            if results is not None:
                self.results.set_mark_map(self.state.marks)

        def failed(message: str) -> None:
            if handle is self._preparing:
                self._preparing = None
                self.messages.error(f"The step's results could not be shown: {message}")

        handle = self._preparing = run_in_worker(make, on_result=arrived, on_error=failed,
                                                 name="Preparing the step's results")

    def _prepare_set(self, make: Callable[[], ResultSet], what: str) -> None:
        """Make a result set that passes over every row (``make``: the whole gallery unscored, or a stored step's
        kept items) in a worker, then show it; the grid is empty meanwhile (what it showed may belong to another
        gallery or step). ``what`` names it in the job's name and in an error."""
        self._pending = None
        self._set_results(ResultSet.empty())
        time_sorted = self.results.sort_key() == "time"

        def arrived(results: ResultSet) -> None:
            if handle is self._preparing:
                self._preparing = None
                self._set_results(results)
                self.results.set_preview_threshold(None)
                self.results.set_mark_map(self.state.marks)

        def failed(message: str) -> None:
            if handle is self._preparing:
                self._preparing = None
                self.messages.error(f"{what[0].upper()}{what[1:]} could not be shown: {message}")

        handle = self._preparing = run_in_worker(lambda job: make().prepare(time_sorted=time_sorted),
                                                 on_result=arrived, on_error=failed, name=f"Preparing {what}")

    def show_item(self, item_id: str) -> None:
        """The item in the detail pane, with its score and mark and (for a step searched in this session) why it
        ranks where it does."""
        gallery = self.state.gallery
        if not item_id or gallery is None:
            self.detail.clear()
            return
        score = self.scores.get(item_id)
        self.detail.set_gallery_item(gallery, item_id, score=None if score is None or math.isnan(score) else score,
                                     mark=self.state.marks.get(item_id))
        result = self._step_result
        if result is not None:
            with contextlib.suppress(QueryInputError):  # the item was not a candidate of the step
                explanation = result.explain(item_id)
                view = explanation.get("view")
                self.detail.set_explanation(explanation, similarity_line(view_network(gallery, view), view))

    def marks_changed(self, marks: dict) -> None:
        self.results.set_mark_map(marks)
        item_id = self.detail.item_id()
        if item_id is not None:
            self.detail.set_mark(marks.get(item_id))
        step_id = self.state.selected_step_id
        result = self.state.step_result(step_id)
        if result is not None:
            stored = None if step_id is None else self.state.step_state(step_id)
            label = None if stored is None else step_label(self.state.case, step_id)
            if result.rows.shape[0] > SYNC_ROWS:  # made again with the new marks (and the grid, when it was due)
                pending = self._pending
                if self._preparing is not None and pending is not None and pending[0] is result:
                    self._prepare(*pending)
                else:
                    self._prepare(result, self.state.gallery, None, label, grid=False)
                return
            self.distribution.set_step(result, self._confirmed(), label=label)
            self.results.set_preview_threshold(None)  # a re-plot moves the cut line; the grid keeps the step's

    def _confirmed(self) -> list[str]:
        return [item for item, mark in self.state.marks.items() if mark == "confirmed"]

    def _truth_identity(self, result) -> tuple[str | None, bool]:
        """(the gallery identity a step's relevant candidates share, or None; whether it is the ground-truth
        identity chosen now): without a chosen one a find-similar step's ground truth is its example's own."""
        gallery = self.state.gallery
        if result.relevant is None or not result.relevant.any() or gallery is None:
            return None, False
        columns = gallery.columns
        codes = np.unique(columns.identity[np.asarray(result.rows)[np.asarray(result.relevant, bool)]])
        if codes.shape[0] != 1 or codes[0] < 0:
            return None, False
        identity = columns.identities.names[int(codes[0])]
        return identity, identity == self.state.target_identity

    def _set_results(self, results: ResultSet) -> None:
        self.scores = ShownScores(results)
        self.results.set_results(results, from_top=self._from_top)
