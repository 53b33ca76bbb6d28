"""The sightings timeline (app/views/sightings_timeline.py, app/views/sightings_canvas.py): a lane per camera,
marks placed by time, a click or Enter reports the sighting's items, the keys move in time and across lanes,
the wheel and +/-/0 zoom, the route line, proposed sightings drawn hollow with C/R/F and the menu; and in the
main window (app/window/sightings.py): the case's confirmed items on it, a picked sighting selected in the
results grid and the detail pane, proposals confirmed through the marks, all inside a 1366×768 screen."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import pytest
from PySide6.QtCore import QPoint, QPointF, QRect, Qt
from PySide6.QtGui import QColor, QWheelEvent
from PySide6.QtWidgets import QApplication
from report_cases import make_gallery

from app.main_window import MainWindow
from app.state import AppState
from app.state.sightings_rows import case_chart
from app.views.sightings_timeline import SightingsTimeline
from engine.index import GalleryItem

T0 = datetime(2024, 6, 10, 8, 0).timestamp()


def item(name: str, camera: str, time: float) -> GalleryItem:
    return GalleryItem(id=name, source=f"{name}.jpg", camera=camera, time=time)


@dataclass(frozen=True)
class Proposal:
    camera: str
    start: float
    end: float
    items: tuple[str, ...]
    best: str
    score: float = 0.7
    agreement: float = 0.6
    direction: str = "next"


ITEMS = [item("a1", "cam05", T0), item("a2", "cam05", T0 + 5), item("b", "cam02", T0 + 3600),
         item("c", "cam05", T0 + 3 * 3600), item("d", "cam03", T0 + 3 * 3600 + 600)]
PROPOSAL = Proposal("cam04", T0 + 5 * 3600, T0 + 5 * 3600 + 40, ("p1", "p2"), "p2")


@pytest.fixture
def timeline(qtbot):
    view = SightingsTimeline()
    qtbot.addWidget(view)
    view.resize(1000, 240)
    view.show()
    qtbot.waitExposed(view)
    view.set_chart(case_chart(ITEMS, proposals=[PROPOSAL]))
    return view


def centre(view: SightingsTimeline, place: int) -> QPoint:
    return view.canvas.mark_rect(place).center().toPoint()


def test_one_lane_per_camera_and_marks_placed_by_time(timeline):
    canvas = timeline.canvas
    assert timeline.chart.lanes == ("cam02", "cam03", "cam04", "cam05")
    rows = timeline.chart.rows
    assert [row.items for row in rows] == [("a1", "a2"), ("b",), ("c",), ("d",), ("p1", "p2")]
    middles = [canvas.mark_rect(place).center() for place in range(len(rows))]
    assert [round(p.y()) for p in middles] == [round(canvas.lane_middle(timeline.chart.lanes.index(row.camera)))
                                               for row in rows]
    xs = [p.x() for p in middles]
    assert xs == sorted(xs)
    # positions are proportional to time: b is a third of the way from a to c
    assert (xs[1] - xs[0]) / (xs[2] - xs[0]) == pytest.approx(1 / 3, abs=0.02)
    assert canvas.mark_at(centre(timeline, 3)) == 3 and canvas.mark_at(QPoint(2, 2)) is None


def test_a_click_reports_the_sightings_items_and_best(qtbot, timeline):
    with qtbot.waitSignal(timeline.sighting_selected) as blocker:
        qtbot.mouseClick(timeline.canvas, Qt.MouseButton.LeftButton, pos=centre(timeline, 0))
    assert blocker.args == [["a1", "a2"], "a1"]
    assert timeline.current_row().items == ("a1", "a2")


def test_keys_move_in_time_and_across_lanes_and_enter_selects(qtbot, timeline):
    canvas = timeline.canvas
    canvas.setFocus()
    visited = []
    for _ in range(6):
        qtbot.keyClick(canvas, Qt.Key.Key_Right)
        visited.append(timeline.current_row().items[0])
    assert visited == ["a1", "b", "c", "d", "p1", "p1"]
    qtbot.keyClick(canvas, Qt.Key.Key_Home)
    assert timeline.current_row().items[0] == "a1"  # cam05, the last lane
    qtbot.keyClick(canvas, Qt.Key.Key_Up)
    assert timeline.current_row().camera == "cam04"
    qtbot.keyClick(canvas, Qt.Key.Key_Up)
    assert timeline.current_row().items == ("d",)  # cam03's one sighting
    qtbot.keyClick(canvas, Qt.Key.Key_Down)
    qtbot.keyClick(canvas, Qt.Key.Key_Down)
    assert timeline.current_row().items == ("c",)  # nearest to d (3 h 10) in cam05
    qtbot.keyClick(canvas, Qt.Key.Key_Left)
    assert timeline.current_row().items == ("b",)
    qtbot.keyClick(canvas, Qt.Key.Key_End)
    assert timeline.current_row().items == ("p1", "p2")
    qtbot.keyClick(canvas, Qt.Key.Key_Left)
    with qtbot.waitSignal(timeline.sighting_selected) as blocker:
        qtbot.keyClick(canvas, Qt.Key.Key_Return)
    assert blocker.args == [["d"], "d"]


def wheel(canvas, x: float, notches: int) -> None:
    point = QPointF(x, 20)
    event = QWheelEvent(point, canvas.mapToGlobal(point), QPoint(), QPoint(0, 120 * notches), Qt.MouseButton.NoButton,
                        Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(canvas, event)


def test_zoom_by_wheel_keys_and_buttons_changes_the_visible_range_and_fit_all_restores_it(qtbot, timeline):
    canvas = timeline.canvas
    fitted = canvas.visible_range()
    assert fitted[0] < T0 and fitted[1] > PROPOSAL.end
    anchor_x = canvas.mark_rect(1).center().x()
    anchor = canvas.time_at(anchor_x)
    wheel(canvas, anchor_x, 2)
    start, end = canvas.visible_range()
    assert end - start == pytest.approx((fitted[1] - fitted[0]) / 1.5 ** 2)
    assert canvas.time_at(anchor_x) == pytest.approx(anchor, abs=1)  # the time under the pointer stays put
    canvas.setFocus()
    qtbot.keyClick(canvas, Qt.Key.Key_Minus)
    assert canvas.visible_range()[1] - canvas.visible_range()[0] == pytest.approx((end - start) * 1.5)
    qtbot.keyClick(canvas, Qt.Key.Key_0)
    assert canvas.visible_range() == fitted
    timeline.zoom_in_button.click()
    assert canvas.visible_range()[1] - canvas.visible_range()[0] < fitted[1] - fitted[0]
    timeline.fit_button.click()
    assert canvas.visible_range() == fitted
    # keys move the view to a sighting out of sight
    for _ in range(4):
        qtbot.keyClick(canvas, Qt.Key.Key_Plus)
    qtbot.keyClick(canvas, Qt.Key.Key_End)
    rect = canvas.mark_rect(4)
    assert canvas.gutter() <= rect.center().x() <= canvas.width()


def test_the_route_line_and_gaps(timeline):
    assert timeline.route_label.text() == "Route: cam05 → cam02 → cam05 → cam03 · 4 sightings · 1 proposed"
    gaps = [(gap.text, gap.camera_change) for gap in timeline.chart.gaps]
    assert gaps == [("59 min 55 s", True), ("2 h", True), ("10 min", True)]
    assert "59 min 55 s before cam02" in timeline.canvas.tooltip(0)
    timeline.set_chart(case_chart([]))
    assert timeline.route_label.text() == "No confirmed items yet"
    assert timeline.canvas.visible_range() is None and not timeline.fit_button.isEnabled()


def test_proposals_are_drawn_hollow_and_c_r_f_report_the_right_items(qtbot, timeline):
    canvas = timeline.canvas
    image = canvas.grab().toImage()
    ratio = image.devicePixelRatio()

    def colour(place: int) -> QColor:
        point = canvas.mark_rect(place).center() * ratio
        return image.pixelColor(point.toPoint())

    assert colour(2).blue() > 200 and colour(2).red() < 100  # a confirmed mark is filled with the accent
    assert min(colour(4).red(), colour(4).green(), colour(4).blue()) > 230  # a proposed one is hollow
    canvas.setFocus()
    qtbot.keyClick(canvas, Qt.Key.Key_End)
    with qtbot.waitSignal(timeline.confirm_requested) as confirmed:
        qtbot.keyClick(canvas, Qt.Key.Key_C)
    assert confirmed.args == [["p1", "p2"]]
    with qtbot.waitSignal(timeline.reject_requested) as rejected:
        qtbot.keyClick(canvas, Qt.Key.Key_R)
    assert rejected.args == [["p1", "p2"]]
    qtbot.keyClick(canvas, Qt.Key.Key_Left)  # d: confirmed, sighting 3 in time order
    with qtbot.assertNotEmitted(timeline.confirm_requested), qtbot.assertNotEmitted(timeline.follow_requested):
        qtbot.keyClick(canvas, Qt.Key.Key_C)
        qtbot.keyClick(canvas, Qt.Key.Key_F)  # follow is not offered yet
    timeline.set_follow_available(True)
    with qtbot.waitSignal(timeline.follow_requested) as follow:
        qtbot.keyClick(canvas, Qt.Key.Key_F)
    assert follow.args == [3]


def test_the_context_menus(qtbot, timeline):
    canvas = timeline.canvas
    proposed = [action.text() for action in canvas.context_menu_for(4).actions()]
    assert proposed == ["Show its items", "Confirm these items", "Reject these items"]
    menu = canvas.context_menu_for(4)
    with qtbot.waitSignal(timeline.reject_requested) as rejected:
        menu.actions()[2].trigger()
    assert rejected.args == [["p1", "p2"]]
    confirmed = canvas.context_menu_for(1).actions()
    assert [a.text() for a in confirmed] == ["Show its items", "Follow to the next camera"]
    assert not confirmed[1].isEnabled()
    timeline.set_follow_available(True)
    with qtbot.waitSignal(timeline.follow_requested) as follow:
        canvas.context_menu_for(1).actions()[1].trigger()
    assert follow.args == [1]
    with qtbot.waitSignal(timeline.sighting_selected) as shown:
        canvas.context_menu_for(1).actions()[0].trigger()
    assert shown.args == [["b"], "b"]


# ------------------------------------------------------------------------------------------ in the main window


class FollowingState(AppState):
    """The state with a follow-to-next-camera step's proposals given by the test (tests/test_app_follow.py
    follows for real)."""

    def __init__(self) -> None:
        super().__init__()
        self.offered: list[Proposal] = []

    def proposals(self) -> list[Proposal]:
        return list(self.offered)


@pytest.fixture
def window(qtbot, tmp_path):
    gallery = make_gallery(tmp_path / "gallery")  # 24 items on c0, c1, c2, 7.5 s apart from 60 s
    state = FollowingState()
    assert state.open_store(tmp_path / "cases.db", actor="tester")
    window = MainWindow(state, None)
    qtbot.addWidget(window)
    assert state.set_gallery(gallery, None)
    assert window.new_case("Sightings") is not None
    yield window
    window.close()


def test_the_window_shows_the_cases_sightings_and_selects_a_picked_one(qtbot, window):
    state, timeline = window.state, window.sightings
    assert timeline.route_label.text() == "No confirmed items yet"
    ids = state.gallery.ids
    assert state.mark_many([ids[0], ids[4], ids[8], ids[9]], "confirmed") == 4  # c0, c1, c2, c0
    assert timeline.chart.lanes == ("c0", "c1", "c2")
    assert timeline.route_label.text() == "Route: c0 → c1 → c2 → c0 · 4 sightings"
    assert [row.items for row in timeline.chart.rows] == [(ids[0],), (ids[4],), (ids[8],), (ids[9],)]
    timeline.select(2)
    assert window.results.selected_ids() == [ids[8]]
    assert window.results.current_id() == ids[8]
    qtbot.waitUntil(lambda: window.detail.item_id() == ids[8])
    # a sighting of several items (as the timeline's signal carries them): all selected, the best current
    window.sightings_display.select([ids[0], ids[3], ids[6]], ids[3])
    assert window.results.selected_ids() == [ids[0], ids[3], ids[6]] and window.results.current_id() == ids[3]
    qtbot.waitUntil(lambda: window.detail.item_id() == ids[3])
    window.results.set_filters({"c0"}, None)  # the grid shows camera c0 only: ids[1] (c1) is not there
    window.sightings_display.select([ids[0], ids[1]], ids[1])
    assert window.results.selected_ids() == [ids[0]] and window.results.current_id() == ids[0]
    qtbot.waitUntil(lambda: window.detail.item_id() == ids[1])  # the best item still shows in the detail pane
    assert "1 of the sighting's 2 items are not among the results shown" in window.statusBar().currentMessage()
    window.results.set_filters(None, None)
    state.mark_many([ids[4]], "rejected")
    assert len(timeline.chart.rows) == 3 and timeline.chart.route == "c0 → c2 → c0"


def test_many_new_items_are_read_in_a_worker(qtbot, window, monkeypatch):
    import app.window.sightings as sightings

    monkeypatch.setattr(sightings, "SYNC_ITEMS", 2)
    state, timeline = window.state, window.sightings
    ids = state.gallery.ids
    state.mark_many(ids[:6], "confirmed")
    assert timeline.chart.rows == ()  # not yet: read off the UI thread
    qtbot.waitUntil(lambda: len(timeline.chart.rows) == 6, timeout=10_000)
    assert [row.items[0] for row in timeline.chart.rows] == ids[:6]
    state.mark_many([ids[6]], "confirmed")  # one more: read at once
    assert len(timeline.chart.rows) == 7


def test_proposals_in_the_window_are_confirmed_through_the_marks_and_followed_through_the_state(qtbot, window):
    state, timeline = window.state, window.sightings
    ids = state.gallery.ids
    state.mark_many([ids[0]], "confirmed")
    state.offered = [Proposal("c1", 60.0 + 7.5 * 4, 60.0 + 7.5 * 7, (ids[4], ids[7]), ids[7])]
    state.session_changed.emit(None)
    assert [row.kind for row in timeline.chart.rows] == ["confirmed", "proposed"]
    followed = []
    window.sightings_display.follow_item = followed.append
    canvas = timeline.canvas
    canvas.setFocus()
    qtbot.keyClick(canvas, Qt.Key.Key_Home)
    qtbot.keyClick(canvas, Qt.Key.Key_F)
    assert followed == [ids[0]]
    qtbot.keyClick(canvas, Qt.Key.Key_End)
    qtbot.keyClick(canvas, Qt.Key.Key_C)
    assert state.marks == {ids[0]: "confirmed", ids[4]: "confirmed", ids[7]: "confirmed"}
    assert not state.busy and state.case.steps == ()  # F followed; the window's F (find similar) stayed put


def test_the_window_with_the_sightings_timeline_fits_1366_by_768(qtbot, window):
    from test_app_main_window import clipped_widgets

    state = window.state
    ids = state.gallery.ids
    state.mark_many(ids[::3], "confirmed")
    window.resize(1366 - 16, 768 - 40)  # the screen less a window frame and a task bar
    window.show()
    qtbot.waitExposed(window)
    window.reset_layout()
    QApplication.processEvents()
    timeline = window.sightings
    # on a laptop the timeline starts as its line with the route; its button opens the lanes
    assert not timeline.is_expanded() and not timeline.canvas.isVisibleTo(window)
    assert timeline.route_label.isVisibleTo(window) and timeline.height() <= 40
    assert clipped_widgets(window) == []
    timeline.toggle_button.click()
    QApplication.processEvents()
    assert timeline.is_expanded() and timeline.canvas.isVisibleTo(window)
    assert clipped_widgets(window) == []
    top_left = timeline.mapTo(window, QPoint(0, 0))
    assert window.rect().contains(QRect(top_left, timeline.size()))
    assert timeline.canvas.height() >= 90 and timeline.canvas.lane_height() >= 16
    for place in range(len(timeline.chart.rows)):
        assert timeline.canvas.rect().contains(timeline.canvas.mark_rect(place).toRect())
    assert window.distribution.plot.height() >= 150
    assert window.results.grid.height() >= 200
    timeline.toggle_button.click()
    QApplication.processEvents()
    assert not timeline.canvas.isVisibleTo(window) and timeline.height() <= 40
    focus = next(a for a in window.menuBar().actions()[3].menu().actions() if a.shortcut().toString() == "Ctrl+5")
    focus.trigger()
    QApplication.processEvents()
    assert timeline.is_expanded() and timeline.canvas.hasFocus()


def test_a_tall_window_opens_with_the_lanes_shown(qtbot, window):
    window.resize(1920 - 16, 1080 - 40)
    window.reset_layout()
    assert window.sightings.is_expanded()
