"""The window on galleries of 2,100, 100k and 1M synthetic items (``engine.index.synthetic``), in one run: for
each size the time to open the gallery, to run a find-similar step and a step with camera and time filters, and
the worst UI-thread stall (a 10 ms heartbeat timer, as ``tests/test_app_heartbeat.py`` measures it) in each
phase: opening, the two steps, scrolling the results grid from top to bottom, dragging the distribution's cut,
and changing the grid's camera and time filters.

Galleries are built once under ``--data`` (``synthetic-N``, grown or reused on later runs; 1M items take a few
minutes). ``--profile`` adds the UI thread's busiest functions per phase (cProfile runs on the UI thread only,
so worker threads are left out). The machine's load average is printed first: compare runs under the same load.

Usage: ``.venv/bin/python bench/window_scale.py --data DIR [--sizes 2100 100000 1000000] [--profile]``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

BEAT_MS = 10
SIZES = (2_100, 100_000, 1_000_000)
SCROLL_STEPS = 60
DRAG_STEPS = 30


def gallery_at(data: Path, items: int) -> Path:
    """A synthetic gallery of ``items`` under ``data`` (built on first use)."""
    from engine.index.synthetic import make_synthetic_gallery

    folder = data / f"synthetic-{items}"
    if not (folder / "gallery.json").exists():
        started = time.perf_counter()
        make_synthetic_gallery(folder, items, dim=192, views=("rgb",))
        print(f"built {folder} in {time.perf_counter() - started:.0f} s", flush=True)
    return folder


class Phases:
    """Heartbeat ticks on the UI thread, each one filed under the phase running when it came."""

    def __init__(self, profile: bool) -> None:
        from PySide6.QtCore import QElapsedTimer, QTimer

        self.clock = QElapsedTimer()
        self.ticks: list[tuple[int, str]] = []
        self.phase = ""
        self.timer = QTimer()
        self.timer.setInterval(BEAT_MS)
        self.timer.timeout.connect(lambda: self.ticks.append((self.clock.elapsed(), self.phase)))
        self.profile = profile
        self.profiler: cProfile.Profile | None = None
        self.reports: dict[str, str] = {}

    def start(self) -> None:
        self.clock.start()
        self.ticks = [(0, "")]
        self.timer.start()

    def enter(self, phase: str) -> None:
        self._close_profile()
        self.phase = phase
        if self.profile:
            self.profiler = cProfile.Profile()
            self.profiler.enable()

    def _close_profile(self) -> None:
        if self.profiler is not None:
            self.profiler.disable()
            out = io.StringIO()
            pstats.Stats(self.profiler, stream=out).sort_stats("cumulative").print_stats(18)
            self.reports[self.phase] = out.getvalue()
            self.profiler = None

    def stop(self) -> None:
        self._close_profile()
        self.timer.stop()

    def worst(self) -> dict[str, int]:
        """The longest gap per phase (a gap belongs to the phase of the tick that ends it)."""
        out: dict[str, int] = {}
        for (a, _), (b, phase) in zip(self.ticks, self.ticks[1:], strict=False):
            out[phase] = max(out.get(phase, 0), b - a)
        return out


def run_size(folder: Path, items: int, profile: bool) -> dict[str, float]:
    from PySide6.QtCore import QEventLoop, QTimer

    from app.launch import open_or_create_case
    from app.main_window import MainWindow
    from app.state import AppState
    from app.state.query_spec import KeepRule

    def wait_until(condition, timeout: float = 900.0) -> None:
        start = time.monotonic()
        while not condition():
            loop = QEventLoop()
            QTimer.singleShot(BEAT_MS, loop.quit)
            loop.exec()
            if time.monotonic() - start > timeout:
                raise TimeoutError("the scenario did not finish in time")

    def settle(ms: int = 60) -> None:
        loop = QEventLoop()
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as work:
        state = AppState()
        if not state.open_store(Path(work) / "cases.db"):
            raise RuntimeError("the case store did not open")
        window = MainWindow(state, None)
        window.resize(1600, 1000)
        window.show()
        open_or_create_case(state, "Window at scale")
        settle()
        heart = Phases(profile)
        heart.start()

        heart.enter("open")
        opened: list = []
        state.gallery_changed.connect(opened.append)
        started = time.perf_counter()
        window.open_gallery(folder)
        wait_until(lambda: opened and not state.busy and not window.busy and not window.step_display.preparing)
        settle()
        figures["open s"] = time.perf_counter() - started
        assert len(state.gallery) == items, (len(state.gallery), items)

        def step(phase: str, run) -> float:
            heart.enter(phase)
            recorded: list = []
            state.step_recorded.connect(recorded.append)
            started = time.perf_counter()
            run()
            wait_until(lambda: recorded and not state.busy and not window.step_display.preparing)
            settle()
            state.step_recorded.disconnect(recorded.append)
            return time.perf_counter() - started

        example = state.gallery.ids[items // 3]
        names = state.gallery.columns.cameras.names
        times = np.asarray(state.gallery.columns.time)
        window_of_time = (float(np.nanquantile(times, 0.1)), float(np.nanquantile(times, 0.6)))
        figures["similar s"] = step("find similar", lambda: state.find_similar(example, KeepRule("rho", 0.5)))
        heart.enter("scroll")
        bar = window.results.grid.verticalScrollBar()
        started = time.perf_counter()
        for k in range(SCROLL_STEPS + 1):
            bar.setValue(round(bar.maximum() * k / SCROLL_STEPS))
            settle(30)
        figures["scroll s"] = time.perf_counter() - started
        figures["rows"] = window.results.model.rowCount()

        heart.enter("drag cut")
        plot = window.panes.distribution
        edges = plot.bin_edges()
        for k in range(DRAG_STEPS + 1):
            plot.cut_line.setValue(float(edges[0] + (edges[-1] - edges[0]) * k / DRAG_STEPS))
            settle(20)
        plot.cut_line.sigPositionChangeFinished.emit(plot.cut_line)
        plot.reset_cut()
        window.results.set_preview_threshold(None)
        settle()

        heart.enter("filters")
        button = window.results.camera_button
        for name in list(button.actions_by_name)[:3]:
            button.actions_by_name[name].setChecked(True)
            settle(40)
        window.results.time_check.setChecked(True)
        settle(40)
        low, high = window.results.time_from.minimum(), window.results.time_to.maximum()
        for k in range(1, 4):
            window.results.time_from.setValue(low + (high - low) * k / 10)
            settle(40)
        state.set_filters(frozenset(names[: max(1, len(names) // 2)]), window_of_time)
        figures["filtered s"] = step("filtered step", lambda: state.find_similar(example, KeepRule("rho", 0.5)))

        heart.stop()

        worst = heart.worst()
        for phase in ("open", "find similar", "scroll", "drag cut", "filters", "filtered step"):
            figures[f"{phase} stall ms"] = worst.get(phase, 0)
        if profile:
            for phase, report in heart.reports.items():
                print(f"---- UI thread, {items:,} items, phase {phase}\n{report}")
        window.close()
        state.close()
        window.deleteLater()
        settle()
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="folder for the synthetic galleries (kept)")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--profile", action="store_true", help="print the UI thread's busiest calls per phase")
    args = parser.parse_args(argv)

    from PySide6.QtWidgets import QApplication

    import app.main_window  # noqa: F401 - imported before the freeze, as the app's launch does
    from app.gc_freeze import freeze_startup_objects

    application = QApplication.instance() or QApplication([])
    application.setApplicationName("Lineup window scale bench")
    freeze_startup_objects()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs", flush=True)
    args.data.mkdir(parents=True, exist_ok=True)
    rows = []
    for items in args.sizes:
        folder = gallery_at(args.data, items)
        figures = run_size(folder, items, args.profile)
        rows.append((items, figures))
        print(f"{items:>9,} items: " + ", ".join(f"{k} {v:.2f}" if k.endswith(" s") else f"{k} {v:,.0f}"
                                                  for k, v in figures.items()), flush=True)
    print("\n    items  open s  similar s  filtered s | worst stall ms: open  similar  scroll  drag  filters  "
          "filtered  (all)")
    for items, f in rows:
        stalls = [f[f"{phase} stall ms"] for phase in ("open", "find similar", "scroll", "drag cut", "filters",
                                                       "filtered step")]
        print(f"{items:>9,}  {f['open s']:6.2f}  {f['similar s']:9.2f}  {f['filtered s']:10.2f} | "
              f"{stalls[0]:20.0f}  {stalls[1]:7.0f}  {stalls[2]:6.0f}  {stalls[3]:4.0f}  {stalls[4]:7.0f}  "
              f"{stalls[5]:8.0f}  {max(stalls):5.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
