"""Results grid (app/views/results.py) on a tiny synthetic gallery: model rows and roles, keyboard marks and
their painted frames, sorting, filters, find similar, tooltips, lazy thumbnails and a 20k-row set."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from PySide6.QtCore import QItemSelectionModel, QPoint, Qt
from PySide6.QtGui import QColor

from app.views.results import (
    CLEAR,
    CONFIRMED,
    MARK_COLORS,
    PAD,
    REJECTED,
    SORT_SCORE,
    SORT_TIME,
    THUMB,
    ResultSet,
    ResultsInputError,
    ResultsModel,
    ResultsView,
    format_time,
    parse_time,
)
from app.views.results_model import DeferredExplanations
from app.views.thumbnails import MappedCrops
from engine.index import Gallery
from engine.retrieval.search import SearchSession, StepQuery

N = 24
CAMERAS = ("c0", "c1", "c2")


def unit(x):
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


@pytest.fixture(scope="module")
def gallery(tmp_path_factory):
    """24 items, 4 identities, 3 cameras, shuffled times; item i3 has no crop."""
    rng = np.random.default_rng(5)
    root = tmp_path_factory.mktemp("results") / "g"
    g = Gallery.create(root, {"rgb": 8}, "test")
    centres = unit(rng.standard_normal((4, 8)))
    identity = np.arange(N) % 4
    times = rng.permutation(N).astype(float) * 10.0
    items = []
    for k in range(N):
        crop = np.full((32, 16, 3), (20 * k % 255, 90, 200 - 5 * k), dtype=np.uint8)
        ok, data = cv2.imencode(".png", crop)
        relative, _ = g.put_crop(data.tobytes(), ".png")
        items.append({"id": f"i{k}", "source": "s.mp4", "frame": k, "time": times[k], "camera": CAMERAS[k % 3],
                      "identity": f"p{identity[k]}", "crop": None if k == 3 else relative})
    g.add(items, {"rgb": unit(centres[identity] + 0.5 * rng.standard_normal((N, 8)))})
    return g


@pytest.fixture(scope="module")
def step(gallery):
    return SearchSession(gallery).step(StepQuery(example="i0", k=10))


@pytest.fixture
def view(qtbot, gallery, step):
    widget = ResultsView()
    qtbot.addWidget(widget)
    widget.resize(760, 560)
    widget.set_results(ResultSet.from_step(step, gallery))
    widget.show()
    qtbot.waitExposed(widget)
    yield widget
    widget.loader.shutdown()


def ids_of(view):
    return view.model.visible_ids()


def test_model_rows_and_roles_follow_the_step(view, gallery, step):
    model = view.model
    rows, scores = step.ranked()
    assert model.rowCount() == N
    assert ids_of(view) == [gallery.ids[r] for r in rows]
    kept = set(step.kept_ids)
    for position in (0, 5, N - 1):
        index = model.index(position)
        item = gallery.item(int(rows[position]))
        assert index.data(ResultsModel.IdRole) == item.id == index.data(Qt.ItemDataRole.DisplayRole)
        assert index.data(ResultsModel.ScoreRole) == pytest.approx(float(scores[position]))
        assert index.data(ResultsModel.CameraRole) == item.camera
        assert index.data(ResultsModel.TimeRole) == item.time
        assert index.data(ResultsModel.RankRole) == position + 1
        assert index.data(ResultsModel.RelevantRole) == (item.identity == "p0")
        assert index.data(ResultsModel.KeptRole) == (item.id in kept)
    assert sum(model.index(r).data(ResultsModel.KeptRole) for r in range(N)) == 10
    assert "10 kept" in view.count_label.text()


def test_a_card_reads_the_same_values_as_the_roles(qtbot, view):
    model = view.model
    view.set_marks(["i1"], ["i2"])
    for row in range(model.rowCount()):
        model.card(row)  # asks for every thumbnail, as painting every card would
    qtbot.waitUntil(lambda: view.loader.idle, timeout=5000)
    for row in range(model.rowCount()):
        index = model.index(row)
        card = model.card(row)
        assert card.item_id == index.data(ResultsModel.IdRole)
        assert card.score == index.data(ResultsModel.ScoreRole) and card.rank == index.data(ResultsModel.RankRole)
        assert card.camera == index.data(ResultsModel.CameraRole) and card.time == index.data(ResultsModel.TimeRole)
        assert card.mark == index.data(ResultsModel.MarkRole) and card.kept == index.data(ResultsModel.KeptRole)
        assert card.relevant == index.data(ResultsModel.RelevantRole)
        assert (card.thumbnail is None) == (card.item_id == "i3") == card.thumbnail_failed
    assert {model.card(model.row_of(i)).mark for i in ("i1", "i2")} == {CONFIRMED, REJECTED}


def test_new_results_reset_the_grid_once_and_a_filter_change_once_more(view, gallery, step):
    resets = []
    view.model.modelReset.connect(lambda: resets.append(1))
    view.set_results(ResultSet.from_step(step, gallery))
    assert len(resets) == 1
    view.set_filters({"c1"}, None)
    view.set_filters({"c1"}, None)  # the same filters again change nothing
    assert len(resets) == 2 and set(ids_of(view)) == {f"i{k}" for k in range(1, N, 3)}


def test_deferred_explanations_are_made_on_the_first_tooltip(view):
    calls = []

    def compute():
        calls.append(1)
        return {"i0": "sim 0.9 · top_color=red ✓"}

    lines = DeferredExplanations(compute)
    view.set_results(ResultSet(view.model.results.ids, view.model.results.scores, view.model.results.cameras,
                               view.model.results.times, explanations=lines))
    assert not lines.computed and not calls  # showing the results computes nothing
    row = view.model.row_of("i0")
    assert "top_color=red" in view.model.index(row).data(Qt.ItemDataRole.ToolTipRole)
    assert view.model.index(row).data(ResultsModel.ExplanationRole) == "sim 0.9 · top_color=red ✓"
    other = view.model.index(view.model.row_of("i1")).data(Qt.ItemDataRole.ToolTipRole)
    assert "<hr>" not in other and calls == [1]


def test_a_final_ranking_keeps_its_order_and_unscored_items(qtbot, gallery):
    session = SearchSession(gallery)
    session.reject("i2")  # never a candidate: ranked last, without a score
    session.step(StepQuery(example="i0", k=12))
    session.confirm("i5")
    session.step(StepQuery(example="i4", k=4))
    ranking = session.final_ranking()
    widget = ResultsView()
    qtbot.addWidget(widget)
    widget.set_results(ResultSet.from_ranking(ranking, gallery))
    assert widget.model.visible_ids() == ranking.ids and ranking.ids[0] == "i5"
    last = widget.model.index(N - 1)
    assert last.data(ResultsModel.IdRole) == "i2" and last.data(ResultsModel.ScoreRole) is None
    assert last.data(ResultsModel.RankRole) == N
    widget.set_sort(SORT_TIME)
    times = [gallery.item(i).time for i in widget.model.visible_ids()]
    assert times == sorted(times)


def test_thumbnails_load_lazily_and_missing_crops_are_reported(qtbot, view):
    model = view.model
    first = model.index(0)
    qtbot.waitUntil(lambda: first.data(ResultsModel.ThumbnailRole) is not None, timeout=3000)
    pixmap = first.data(ResultsModel.ThumbnailRole)
    assert pixmap.height() == THUMB.height() and pixmap.width() == THUMB.height() // 2
    missing = model.index(model.row_of("i3"))
    qtbot.waitUntil(lambda: missing.data(ResultsModel.ThumbnailFailedRole), timeout=3000)
    assert missing.data(ResultsModel.ThumbnailRole) is None


def frame_pixel(view, item_id):
    """Colour of the grid's painting on the left edge of the item's thumbnail frame."""
    index = view.model.index(view.model.row_of(item_id))
    rect = view.grid.visualRect(index)
    card = rect.adjusted(2, 2, -2, -2)
    x = card.left() + (card.width() - THUMB.width()) // 2 + 1
    y = card.top() + PAD + THUMB.height() // 2
    image = view.grid.viewport().grab().toImage()
    return QColor(image.pixel(x, y))


def test_keys_mark_the_selection_emit_and_paint_frames(qtbot, view):
    grid = view.grid
    grid.setFocus()
    first, second, third = ids_of(view)[:3]
    view.select_item(first)
    with qtbot.waitSignal(view.marks_changed) as blocker:
        qtbot.keyClick(grid, Qt.Key.Key_C)
    assert blocker.args == [[first], CONFIRMED]
    assert view.model.index(0).data(ResultsModel.MarkRole) == CONFIRMED
    qtbot.keyClick(grid, Qt.Key.Key_Right)
    qtbot.keyClick(grid, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
    assert view.selected_ids() == [second, third]
    with qtbot.waitSignal(view.marks_changed) as blocker:
        qtbot.keyClick(grid, Qt.Key.Key_R)
    assert blocker.args == [[second, third], REJECTED]
    assert view.model.marks() == {first: CONFIRMED, second: REJECTED, third: REJECTED}
    assert "1 confirmed" in view.count_label.text() and "2 rejected" in view.count_label.text()
    assert frame_pixel(view, first) == MARK_COLORS[CONFIRMED]
    assert frame_pixel(view, second) == MARK_COLORS[REJECTED]
    with qtbot.waitSignal(view.marks_changed) as blocker:
        qtbot.keyClick(grid, Qt.Key.Key_U)
    assert blocker.args == [[second, third], CLEAR]
    assert view.model.marks() == {first: CONFIRMED}
    assert frame_pixel(view, second) not in MARK_COLORS.values()


def test_set_marks_replaces_the_shown_state(view):
    a, b, c = ids_of(view)[:3]
    view.set_marks([a], [b, c])
    assert view.model.marks() == {a: CONFIRMED, b: REJECTED, c: REJECTED}
    view.set_marks([], [c])
    assert view.model.marks() == {c: REJECTED}
    view.set_mark_map({a: REJECTED, b: CONFIRMED})
    assert view.model.marks() == {a: REJECTED, b: CONFIRMED}


def test_navigation_enter_opens_and_f_finds_similar(qtbot, view):
    grid = view.grid
    grid.setFocus()
    ids = ids_of(view)
    view.select_item(ids[0])
    with qtbot.waitSignal(view.current_changed) as moved:
        qtbot.keyClick(grid, Qt.Key.Key_End)
    assert moved.args == [ids[-1]]
    qtbot.keyClick(grid, Qt.Key.Key_Home)
    qtbot.keyClick(grid, Qt.Key.Key_Right)
    assert view.current_id() == ids[1]
    with qtbot.waitSignal(view.open_requested) as opened:
        qtbot.keyClick(grid, Qt.Key.Key_Return)
    assert opened.args == [ids[1]]
    with qtbot.waitSignal(view.find_similar_requested) as similar:
        qtbot.keyClick(grid, Qt.Key.Key_F)
    assert similar.args == [ids[1]]


def test_context_menu_find_similar_and_marks(qtbot, view):
    ids = ids_of(view)
    view.select_item(ids[4])
    menu = view.context_menu()
    actions = {action.text().split("\t")[0]: action for action in menu.actions() if action.text()}
    assert {"Open in detail", "Confirm", "Reject", "Clear mark", "Find similar", "Copy id"} <= set(actions)
    with qtbot.waitSignal(view.find_similar_requested) as similar:
        actions["Find similar"].trigger()
    assert similar.args == [ids[4]]
    with qtbot.waitSignal(view.find_similar_across_outfits_requested) as across:
        actions["Find similar, clothes may have changed"].trigger()
    assert across.args == [ids[4]]
    assert "never evidence of identity" in actions["Find similar, clothes may have changed"].toolTip()
    with qtbot.waitSignal(view.marks_changed) as marked:
        actions["Reject"].trigger()
    assert marked.args == [[ids[4]], REJECTED]


def test_sort_by_time_and_back_to_score_keeps_the_selection(qtbot, view, gallery):
    by_score = ids_of(view)
    view.select_item(by_score[2])
    with qtbot.waitSignal(view.sort_changed) as changed:
        view.sort_box.setCurrentIndex(view.sort_box.findData(SORT_TIME))
    assert changed.args == [SORT_TIME]
    by_time = ids_of(view)
    times = [gallery.item(i).time for i in by_time]
    assert times == sorted(times) and sorted(by_time) == sorted(by_score)
    assert view.current_id() == by_score[2] and view.selected_ids() == [by_score[2]]
    view.set_sort(SORT_SCORE)
    assert ids_of(view) == by_score and view.sort_box.currentData() == SORT_SCORE


def test_camera_and_time_filters_emit_and_narrow(qtbot, view, gallery):
    assert view.filters() == (None, None)
    with qtbot.waitSignal(view.filters_changed) as changed:
        view._camera_actions["c1"].setChecked(True)
    assert changed.args == [frozenset({"c1"}), None]
    assert {gallery.item(i).camera for i in ids_of(view)} == {"c1"}
    assert view.camera_button.text() == "1 of 3 cameras: c1"
    with qtbot.waitSignal(view.filters_changed) as changed:
        view.time_check.setChecked(True)
    with qtbot.waitSignal(view.filters_changed) as changed:
        view.time_from.setValue(50.0)
    with qtbot.waitSignal(view.filters_changed) as changed:
        view.time_to.setValue(150.0)
    cameras, time_range = changed.args
    assert (cameras, time_range) == (frozenset({"c1"}), (50.0, 150.0))
    expected = [i for i in gallery.ids if gallery.item(i).camera == "c1" and 50 <= gallery.item(i).time <= 150]
    assert sorted(ids_of(view)) == sorted(expected)
    StepQuery(example="i0", cameras=cameras, time_range=time_range)  # the signal's form is what a step takes
    with qtbot.waitSignal(view.filters_changed) as changed:
        view.camera_menu.actions()[0].trigger()  # "All cameras"
    assert changed.args[0] is None


def test_setters_do_not_emit(qtbot, view):
    with qtbot.assertNotEmitted(view.filters_changed), qtbot.assertNotEmitted(view.sort_changed):
        view.set_filters({"c2"}, (0.0, 100.0))
        view.set_sort(SORT_TIME)
    assert view.filters() == (frozenset({"c2"}), (0.0, 100.0))
    assert all(i in {f"i{k}" for k in range(2, N, 3)} for i in ids_of(view))


def test_tooltip_shows_the_facts_and_an_explanation_when_given(view):
    index = view.model.index(0)
    tip = index.data(Qt.ItemDataRole.ToolTipRole)
    item_id = index.data(ResultsModel.IdRole)
    assert item_id in tip and "Score" in tip and "Camera" in tip and "Time" in tip and "<hr>" not in tip
    view.set_explanations({item_id: "red top <matches>"})
    assert "red top &lt;matches&gt;" in view.model.index(0).data(Qt.ItemDataRole.ToolTipRole)


def test_preview_threshold_fades_what_a_threshold_would_drop(view, step):
    cut = float(np.sort(step.scores)[::-1][5])
    view.set_preview_threshold(cut)
    kept = [view.model.index(r).data(ResultsModel.KeptRole) for r in range(N)]
    assert sum(kept) == int((step.scores >= cut).sum()) == 6
    # the header keeps the step's own count (as the timeline does) and names the preview apart
    assert "10 kept by the step" in view.count_label.text() and "would keep 6" in view.count_label.text()
    view.set_preview_threshold(None)
    assert sum(view.model.index(r).data(ResultsModel.KeptRole) for r in range(N)) == 10
    view.set_preview_threshold(cut)
    view.set_results(view.model.results)  # a new step drops the preview
    assert "10 kept" in view.count_label.text() and "would keep" not in view.count_label.text()


def test_double_click_opens(qtbot, view):
    index = view.model.index(1)
    center = view.grid.visualRect(index).center()
    qtbot.mouseClick(view.grid.viewport(), Qt.MouseButton.LeftButton, pos=center)  # Qt 6's test double
    with qtbot.waitSignal(view.open_requested) as opened:  # click is the second press only
        qtbot.mouseDClick(view.grid.viewport(), Qt.MouseButton.LeftButton, pos=center)
    assert opened.args == [index.data(ResultsModel.IdRole)]


def test_empty_state_and_clear(qtbot):
    widget = ResultsView()
    qtbot.addWidget(widget)
    assert widget.stack.currentWidget() is widget.empty_label
    assert widget.count_label.text() == ""
    widget.set_results(ResultSet(["a"], [0.5], ["c"], [1.0]))
    assert widget.stack.currentWidget() is widget.grid
    assert widget.model.index(0).data(ResultsModel.ThumbnailFailedRole)  # no crops given: "no crop", not "…"
    widget.clear()
    assert widget.model.rowCount() == 0 and widget.stack.currentWidget() is widget.empty_label


def test_result_set_checks_its_columns():
    with pytest.raises(ResultsInputError, match="scores has 1 entries for 2 ids"):
        ResultSet(["a", "b"], [0.1], ["c", "c"], [0, 1])
    with pytest.raises(ResultsInputError, match="more than once"):
        ResultSet(["a", "a"], [0.1, 0.2], ["c", "c"], [0, 1])
    with pytest.raises(ResultsInputError, match="kept has 1 entries"):
        ResultSet(["a", "b"], [0.1, 0.2], ["c", "c"], [0, 1], kept=[True])


def test_time_text_round_trips():
    for seconds in (0.0, 83.4, 3725.5):
        assert parse_time(format_time(seconds)) == pytest.approx(seconds)
    posix = 1_718_000_000.0
    assert parse_time(format_time(posix)) == pytest.approx(posix)
    assert format_time(None) == "—" and parse_time("soon") is None


def test_twenty_thousand_rows_stay_responsive(qtbot):
    n = 20_000
    rng = np.random.default_rng(1)
    asked = []

    class Counting(MappedCrops):
        def __call__(self, item_id):
            asked.append(item_id)
            return None

    results = ResultSet([f"x{k}" for k in range(n)], rng.random(n), [f"cam{k % 7}" for k in range(n)],
                        rng.random(n) * 3600, kept=rng.random(n) < 0.5, crops=Counting({}))
    widget = ResultsView()
    qtbot.addWidget(widget)
    widget.resize(900, 600)
    widget.show()
    qtbot.waitExposed(widget)
    widget.set_results(results)
    qtbot.wait(50)
    widget.set_sort(SORT_TIME)
    widget.set_filters({"cam1", "cam2"}, (600.0, 1800.0))
    qtbot.wait(20)
    widget.loader.wait()
    qtbot.wait(60)
    widget.loader.shutdown()
    assert 0 < len(asked) < 400  # only rows near the screen asked for thumbnails
    times = [results.times[int(i[1:])] for i in widget.model.visible_ids()]
    assert times == sorted(times) and all(600 <= t <= 1800 for t in times)
    grid = widget.grid
    grid.selectionModel().setCurrentIndex(widget.model.index(0), QItemSelectionModel.SelectionFlag.ClearAndSelect)
    grid.setFocus()
    qtbot.keyClick(grid, Qt.Key.Key_End)
    assert widget.current_id() == widget.model.visible_ids()[-1]
    assert grid.indexAt(QPoint(5, 5)).isValid()
    qtbot.keyClick(grid, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    with qtbot.waitSignal(widget.marks_changed) as marked:
        qtbot.keyClick(grid, Qt.Key.Key_C)
    assert marked.args == [widget.model.visible_ids(), CONFIRMED]
    assert f"{widget.model.rowCount():,} confirmed" in widget.count_label.text()


def test_a_new_step_opens_at_rank_one_while_the_same_step_keeps_the_selection(qtbot, view, gallery):
    second = SearchSession(gallery).step(StepQuery(example="i5", k=10))
    last = ids_of(view)[-1]
    assert view.select_item(last)
    qtbot.waitUntil(lambda: view.grid.verticalScrollBar().value() > 0)
    view.set_results(ResultSet.from_step(second, gallery))  # the same step shown again: the selection stays
    assert view.current_id() == last and view.selected_ids() == [last]
    with qtbot.waitSignal(view.current_changed) as moved:
        view.set_results(ResultSet.from_step(second, gallery), from_top=True)
    top = ids_of(view)[0]
    assert view.model.index(0).data(ResultsModel.RankRole) == 1
    assert moved.args == [top] and view.current_id() == top and view.selected_ids() == [top]
    assert view.grid.verticalScrollBar().value() == 0
    view.clear()
    assert view.current_id() is None and view.selected_ids() == []
