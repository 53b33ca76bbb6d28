"""The window on a gallery of a million synthetic items: it opens, the results grid scrolls from its first row
to its last and a find-similar step over every item runs and is shown, while a heartbeat timer on the UI thread
(``test_app_heartbeat.Heartbeat``, the same method) records the longest stall. The gallery is built once and
kept between sessions (``synthetic_cache``). Run with ``pytest -s`` for the gaps."""

from __future__ import annotations

import os
import time

import pytest
from synthetic_cache import cached_synthetic_gallery
from test_app_heartbeat import Heartbeat

from app.launch import open_or_create_case
from app.main_window import MainWindow
from app.state import AppState
from app.state.query_spec import KeepRule

ITEMS = 1_000_000
WAIT = 600_000
SCROLL_STEPS = 40
#: The UI-stall bound (the same at 2,100 items as at a million). On the 2-core machine the tests run on, idle, this
#: scenario measured worst gaps of 43, 51 and 61 ms (99th percentile 26–34 ms); before a step's ids were joined,
#: split and checked in chunks and the gallery fingerprint hashed blocks of ids, it measured 116 ms idle and
#: 200–530 ms under load: worker calls into C holding the interpreter lock for 30–50 ms while the UI thread waited
#: for it (docs/scaling.md). Before the grid's data became columns it stalled the UI thread for 75 to 100 seconds.
MAX_STALL_MS = 100
#: What is asserted when the machine is oversubscribed (load average over its cores, from other work): the
#: heartbeat then measures the scheduler as much as the window, and this still catches any stall of the window's own.
LOADED_MAX_STALL_MS = 400


@pytest.fixture(scope="session")
def million_gallery():
    started = time.perf_counter()
    folder = cached_synthetic_gallery(ITEMS, dim=192, views=("rgb",))
    print(f"synthetic gallery of {ITEMS:,} items ready in {time.perf_counter() - started:.0f} s: {folder}")
    return folder


def pause(qtbot, ms: int) -> None:
    qtbot.wait(ms)


@pytest.mark.slow
def test_a_million_item_gallery_scrolls_end_to_end_and_runs_a_step_without_stalling(qtbot, million_gallery,
                                                                                      tmp_path):
    state = AppState()
    assert state.open_store(tmp_path / "cases.db")
    window = MainWindow(state, None)
    qtbot.addWidget(window)
    window.resize(1366, 768)
    window.show()
    open_or_create_case(state, "A million items")
    with qtbot.waitSignal(state.gallery_changed, timeout=WAIT):
        window.open_gallery(million_gallery)
    qtbot.waitUntil(lambda: not state.busy and not window.busy and not window.step_display.preparing, timeout=WAIT)
    grid, model = window.results.grid, window.results.model
    assert len(state.gallery) == ITEMS and model.rowCount() == ITEMS  # the whole gallery, unscored

    heart = Heartbeat()
    heart.start()
    bar = grid.verticalScrollBar()
    last = model.index(ITEMS - 1)

    def last_row_shown() -> bool:
        return grid.viewport().rect().intersects(grid.visualRect(last))

    qtbot.waitUntil(lambda: grid.visualRect(last).isValid(), timeout=WAIT)  # laid out (in batches)
    for k in range(SCROLL_STEPS + 1):
        bar.setValue(round(bar.maximum() * k / SCROLL_STEPS))
        pause(qtbot, 30)
    qtbot.waitUntil(lambda: (bar.setValue(bar.maximum()), last_row_shown())[1], timeout=WAIT)

    example = state.gallery.ids[ITEMS // 3]
    with qtbot.waitSignal(state.step_recorded, timeout=WAIT):
        state.find_similar(example, KeepRule("rho", 0.5))
    qtbot.waitUntil(lambda: not state.busy and not window.step_display.preparing, timeout=WAIT)
    pause(qtbot, 100)
    heart.stop()

    assert model.rowCount() == ITEMS and model.item_id(0) == example  # its own best match, over every item
    assert model.step_kept_count() == ITEMS // 2
    assert sum(int(bins.sum()) for bins in window.panes.distribution.counts().values()) == ITEMS  # binned
    load = os.getloadavg()[0] / (os.cpu_count() or 1)
    bound = MAX_STALL_MS if load <= 1.0 else LOADED_MAX_STALL_MS
    print(f"heartbeat: {heart.summary()} (bound {bound} ms at a load of {load:.1f} per core)")
    assert heart.longest_gap() <= bound, f"the UI thread stalled: {heart.summary()} at a load of {load:.1f} per core"
    window.close()
