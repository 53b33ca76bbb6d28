"""The results grid's data and the distribution's figures on a million rows: nothing per item up front (ids are
decoded from the gallery's id column only when read, cameras stay codes), sorting, filtering and counting with
numpy, the grid laid out and scrolled to its last row, cut previews that repaint the cards instead of signalling
every row, and a histogram of bins rather than points (docs/architecture.md, "The window at a million items")."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint

from app.state.distribution import MAX_BINS, ScoreDistribution, members
from app.store.from_engine import ids_of_rows
from app.views.distribution import DistributionPanel
from app.views.result_set import CodedNames, ResultSet, RowIds, member_flags
from app.views.results import ResultsView
from app.views.results_model import SORT_TIME, ResultsModel
from app.views.thumbnails import ThumbnailLoader
from engine.retrieval.search.selection import keep_mask

N = 1_000_000
CAMERAS = [f"cam{k:02d}" for k in range(8)]


class Columns:
    """The three members of a gallery's ``ItemColumns`` that ``RowIds`` reads, over ids ``x0000000``…"""

    def __init__(self, n: int) -> None:
        width = 8
        self.ids_blob = np.frombuffer("".join(f"x{k:07d}" for k in range(n)).encode(), dtype=np.uint8)
        self._ends = np.arange(1, n + 1, dtype=np.int64) * width

    def array(self, name: str) -> np.ndarray:
        assert name == "ids_end.i64"
        return self._ends

    def rows_of(self, item_ids):
        return np.asarray([int(i[1:]) if len(i) == 8 and i[0] == "x" and int(i[1:]) < len(self._ends) else -1
                           for i in item_ids], dtype=np.int64)


@pytest.fixture(scope="module")
def million():
    """A step-like ranking of a million gallery rows: scores falling along the ranking, kept flags for the best
    half, eight cameras (some rows without one) and times (some unknown)."""
    rng = np.random.default_rng(5)
    rows = rng.permutation(N).astype(np.int64)
    scores = np.sort(rng.random(N))[::-1].copy()
    codes = (rows % 9 - 1).astype(np.int32)  # −1: no camera
    times = (rows // 8) * 0.2
    times[rows % 97 == 0] = np.nan
    kept = np.zeros(N, dtype=bool)
    kept[: N // 2] = True
    results = ResultSet(RowIds(Columns(N), rows), scores, CodedNames(codes, CAMERAS), times, kept=kept)
    return results, rows, scores, codes, times


@pytest.fixture
def model(qapp):
    loader = ThumbnailLoader()
    model = ResultsModel(loader)
    yield model
    loader.shutdown()


def test_a_million_row_result_set_keeps_columns_and_decodes_ids_on_demand(million):
    results, rows, scores, codes, _ = million
    assert isinstance(results.ids, RowIds) and len(results) == N
    assert results.ids[0] == f"x{rows[0]:07d}" and results.ids[N - 1] == f"x{rows[-1]:07d}"
    assert results.ids[10:13] == [f"x{r:07d}" for r in rows[10:13]]
    assert isinstance(results.cameras, CodedNames) and results.cameras[5] == (
        None if codes[5] < 0 else CAMERAS[codes[5]])
    assert results.entry_of(f"x{rows[777_777]:07d}") == 777_777 and results.entry_of("nobody") is None
    assert results.score_of(f"x{rows[3]:07d}") == pytest.approx(scores[3])
    assert results.cameras.present() == CAMERAS
    with pytest.raises(ValueError, match="more than once"):
        ResultSet(RowIds(Columns(10), np.asarray([1, 2, 1])), np.zeros(3), CodedNames(np.zeros(3), ["c"]),
                  np.zeros(3))
    with pytest.raises(ValueError, match="outside"):
        RowIds(Columns(10), np.asarray([3, 10]))


def test_the_model_filters_sorts_and_counts_a_million_rows_as_numpy_does(model, million):
    results, rows, scores, codes, times = million
    model.set_results(results)
    assert model.rowCount() == N and model.index(N - 1).data(ResultsModel.IdRole) == results.ids[N - 1]
    assert model.row_of(results.ids[123_456]) == 123_456
    assert model.step_kept_count() == N // 2

    model.set_filters({"cam01", "cam05"}, (1000.0, 20_000.0))
    wanted = np.isin(codes, [1, 5]) & (times >= 1000.0) & (times <= 20_000.0)
    assert model.rowCount() == int(wanted.sum())
    first = int(np.flatnonzero(wanted)[0])
    assert model.item_id(0) == results.ids[first] and model.row_of(results.ids[first]) == 0
    assert model.row_of(results.ids[int(np.flatnonzero(~wanted)[0])]) is None
    assert model.step_kept_count() == int((wanted & results.kept).sum())

    model.set_sort(SORT_TIME)
    shown = np.flatnonzero(wanted)
    expected = shown[np.lexsort((shown, times[shown]))]
    assert [model.item_id(r) for r in (0, 1, model.rowCount() - 1)] == [results.ids[int(e)] for e in
                                                                         (expected[0], expected[1], expected[-1])]
    assert model.row_of(results.ids[int(expected[500])]) == 500

    for threshold in (0.9, 0.5, 0.123):
        model.set_preview_threshold(threshold)
        assert model.kept_count() == int((wanted & (scores >= threshold)).sum())
    confirmed = results.ids[int(shown[-1])]  # visible and below every threshold above
    model.set_marks([confirmed], [])
    assert model.kept_count() == int((wanted & (scores >= 0.123)).sum()) + 1
    model.set_filters(None, None)
    assert model.rowCount() == N


def test_a_cut_preview_repaints_the_cards_instead_of_signalling_every_row(model, million):
    results = million[0]
    model.set_results(results)
    ranges, repaints = [], []
    model.dataChanged.connect(lambda top, bottom, _roles=(): ranges.append(bottom.row() - top.row() + 1))
    model.cards_changed.connect(lambda: repaints.append(True))
    model.set_preview_threshold(0.5)
    model.mark([results.ids[k] for k in range(100)], "confirmed")  # a large selection: one repaint
    assert repaints == [True, True] and not ranges
    assert model.index(0).data(ResultsModel.KeptRole) is True
    assert model.index(N - 1).data(ResultsModel.KeptRole) is False
    model.mark([results.ids[N - 1]], "confirmed")  # a single item: its own row
    assert ranges == [1] and model.index(N - 1).data(ResultsModel.KeptRole) is True


def test_the_grid_lays_out_a_million_rows_and_scrolls_to_the_last(qtbot, million):
    view = ResultsView()
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    view.set_results(million[0], from_top=True)
    grid = view.grid
    last = view.model.index(N - 1)

    def at_the_end() -> bool:
        grid.scrollTo(last)
        return grid.visualRect(last).isValid() and grid.viewport().rect().intersects(grid.visualRect(last))

    qtbot.waitUntil(at_the_end, timeout=60_000)
    assert grid.indexAt(grid.visualRect(last).center()).row() == N - 1
    grid.scrollToTop()
    assert grid.indexAt(QPoint(grid.gridSize().width() // 2, grid.gridSize().height() // 2)).row() == 0
    view.loader.shutdown()


def test_a_million_scores_are_plotted_as_bins_and_counted_by_binary_search(qtbot):
    rng = np.random.default_rng(3)
    scores = rng.normal(0.4, 0.1, N).astype(np.float32)
    pinned = np.zeros(N, dtype=bool)
    pinned[rng.choice(N, 50, replace=False)] = True
    dist = ScoreDistribution.of(scores, 5000, pinned=pinned, keep_rule="k").prepare()
    bins = dist.histograms()
    assert len(bins.edges) - 1 <= MAX_BINS and int(bins.counts["candidates"].sum()) == N
    for threshold in (float(dist.cut), 0.3, 0.55, float(scores.min()), float(scores.max()) + 1):
        assert dist.kept_at(threshold) == keep_mask(scores, pinned, threshold=threshold)[1]
    panel = DistributionPanel()
    qtbot.addWidget(panel)
    panel.set_distribution(dist)
    x, y = panel.curves["candidates"].getData()
    assert len(y) == len(bins.edges) - 1 and len(x) == len(bins.edges)  # bars, not a million points


def test_column_helpers_match_their_plain_python_meaning():
    codes = CodedNames.of(["b", None, "a", "b"])
    assert codes.names == ["a", "b"] and list(codes) == ["b", None, "a", "b"]
    assert codes.mask({"b"}).tolist() == [True, False, False, True] and codes.present() == ["a", "b"]
    rows, subset = np.asarray([5, 0, 9, 3]), np.asarray([3, 9, 11])
    assert member_flags(rows, subset, 12).tolist() == members(rows, subset).tolist() == [False, False, True, True]
    ids = [f"i{k}" for k in range(1000)]
    picked = np.asarray([900, 3, 512] + list(range(100, 400)))
    assert ids_of_rows(ids, picked) == tuple(ids[r] for r in picked)
    assert ids_of_rows(ids, np.asarray([7, 2])) == ("i7", "i2")
