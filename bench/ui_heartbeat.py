"""UI-thread stalls during an ingest and a three-step search on the demo gallery, measured in one run (the same
scenario as ``tests/test_app_heartbeat.py`` on the full 2,100-item demo gallery).

A 10 ms heartbeat timer runs on the UI thread of a real ``MainWindow`` (offscreen) while a short synthetic
video (two rendered people walking) is ingested into a copy of the demo gallery and three progressive text
steps run. Prints the gap distribution (worst, 99th and 95th percentile, median, counts over 50 and 100 ms),
the phase of the worst gaps and every full garbage collection (generation 2) in the timed part. The machine's
load average is printed first: gaps grow with other processes' CPU use, so compare runs made under the same
load (run before and after a change in turn). Not run by the tests.

Usage: ``.venv/bin/python bench/ui_heartbeat.py [--gallery DIR] [--checkpoint DIR] [--frames 12]``; the
gallery defaults to the demo gallery in the user data folder (``make demo`` prepares it), and is copied first.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

BEAT_MS = 10
STEPS = (("a person", ("rho", 0.5)), ("a person in a red top", ("rho", 0.5)),
         ("a person in a red top and black shoes", ("k", 3)))


def walking_video(path: Path, frames: int) -> Path:
    """Two rendered people walking right over a plain background (MJPG AVI, 10 fps, 640×300)."""
    from engine.lab.world.identities import make_identity
    from engine.lab.world.render import render_sample

    rng = np.random.default_rng(7)
    people = [cv2.cvtColor(render_sample(make_identity(0, i, 1).outfits[0], "rgb", "HR", "front", "cam02", rng),
                           cv2.COLOR_RGB2BGR) for i in (1, 2)]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (640, 300))
    for t in range(frames):
        image = np.full((300, 640, 3), 110, np.uint8)
        for k, person in enumerate(people):
            x, y = 10 + 10 * t + 320 * k, 20 + 12 * k
            if x + person.shape[1] <= 640:
                image[y:y + person.shape[0], x:x + person.shape[1]] = person
        writer.write(image)
    writer.release()
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gallery", type=Path, help="gallery to copy (default: the cached demo gallery)")
    parser.add_argument("--checkpoint", type=Path, default=ROOT / "resources" / "checkpoints" / "default")
    parser.add_argument("--frames", type=int, default=12, help="frames of the ingested video")
    args = parser.parse_args()

    import torch
    from PySide6.QtCore import QElapsedTimer, QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    torch.set_num_threads(1)
    application = QApplication.instance() or QApplication([])
    application.setApplicationName("Lineup heartbeat bench")
    from app.demo_gallery import demo_gallery_dir, demo_gallery_ready
    from app.launch import open_or_create_case
    from app.main_window import CheckpointModels, MainWindow
    from app.state import AppState
    from app.state.query_spec import KeepRule, QuerySpec

    models = CheckpointModels(args.checkpoint)
    source = args.gallery
    if source is None:
        source = demo_gallery_dir(models.ingest_encoder().fingerprint)
        if not demo_gallery_ready(source):
            print(f"no demo gallery at {source}: run `make demo` once, or pass --gallery DIR", file=sys.stderr)
            return 2
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; gallery {source}")

    def wait_until(condition, timeout: float = 600.0) -> None:
        start = time.monotonic()
        while not condition():
            loop = QEventLoop()
            QTimer.singleShot(BEAT_MS, loop.quit)
            loop.exec()
            if time.monotonic() - start > timeout:
                raise TimeoutError("the scenario did not finish in time")

    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        gallery = work / "gallery"
        shutil.copytree(source, gallery)
        video = walking_video(work / "cam09_20240506T101530.avi", args.frames)
        state = AppState()
        if not state.open_store(work / "cases.db"):
            return 1
        window = MainWindow(state, models)
        window.show()
        open_or_create_case(state, "Heartbeat bench")
        opened = []
        state.gallery_changed.connect(opened.append)
        window.open_gallery(gallery)
        wait_until(lambda: opened and not state.busy and not window.busy)
        before = len(state.gallery)

        clock, ticks, phases = QElapsedTimer(), [], []
        timer = QTimer()
        timer.setInterval(BEAT_MS)
        timer.timeout.connect(lambda: ticks.append(clock.elapsed()))
        collections: list[float] = []

        def on_collection(phase: str, info: dict) -> None:
            if phase == "start":
                on_collection.started = time.perf_counter()
            elif info["generation"] == 2:
                collections.append((time.perf_counter() - on_collection.started) * 1000)

        gc.callbacks.append(on_collection)
        clock.start()
        ticks.append(0)
        timer.start()
        phases.append((0, "ingest"))
        if window.ingest_footage(video) is None:
            return 1
        wait_until(lambda: not window.busy and not state.busy and len(state.gallery) > before)
        for number, (text, (rule, value)) in enumerate(STEPS, start=1):
            phases.append((clock.elapsed(), f"step {number}"))
            recorded = []
            state.step_recorded.connect(recorded.append)
            state.search(QuerySpec(text=text, keep=KeepRule(rule, value)))
            wait_until(lambda recorded=recorded: recorded and not state.busy)
        wait_until(lambda: window.results.loader.idle)
        timer.stop()
        gc.callbacks.remove(on_collection)
        after = len(state.gallery)
        window.close()

    gaps = np.diff(np.asarray(ticks))

    def phase_at(at: int) -> str:
        return [name for start, name in phases if start <= at][-1]

    worst = np.argsort(gaps)[::-1][:6]
    print(f"items {before:,} → {after:,}; {len(gaps)} beats over {ticks[-1] / 1000:.1f} s")
    print(f"gap ms: worst {gaps.max()}, p99 {np.percentile(gaps, 99):.0f}, p95 {np.percentile(gaps, 95):.0f}, "
          f"median {np.median(gaps):.0f}; over 50 ms: {int((gaps > 50).sum())}, over 100 ms: {int((gaps > 100).sum())}")
    print("worst gaps:", ", ".join(f"{int(gaps[i])} ms ({phase_at(ticks[i])})" for i in worst))
    print(f"full garbage collections: {len(collections)}"
          + (f", longest {max(collections):.0f} ms" if collections else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
