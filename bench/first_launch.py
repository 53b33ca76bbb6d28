"""First launch of the demo: seconds from starting ``lineup app`` (what ``make demo`` runs) in a fresh user data
folder until the window shows the demo case with the demo gallery open (docs/architecture.md, "First launch").

Each run starts a new process with ``XDG_DATA_HOME`` pointing at a new temporary folder, so nothing is cached:
the process makes the ``QApplication`` (as ``app.launch`` would), starts a 20 ms polling timer on it, then runs
the ``lineup`` console script's entry point (``lineup.cli.main``) with ``app``, exactly the README's command.
The timer notes when the splash, the window and the progress dialog first show, each new line the dialog
says, and the moment the window holds the demo gallery and the "Demo" case with the dialog gone; then it
quits the app. With ``--again`` the same folder is launched a second time (the cached path).

The platform is Qt's ``offscreen`` one unless ``--xvfb`` is given and ``xvfb-run`` is installed (then a
1366×768 virtual X screen); the line printed first says which, with the load average: times grow with other
processes' CPU use, so compare runs made under the same load. Not run by the tests.

Usage: ``.venv/bin/python bench/first_launch.py [--runs 1] [--again] [--xvfb] [--timeout 1200]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD_FLAG = "--child"


def child(timeline: Path) -> int:
    """Runs inside the launched process: poll the app and write the timeline when the demo is open."""
    sys.path.insert(0, str(ROOT))
    start = float(os.environ["FIRST_LAUNCH_START"])
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QProgressDialog, QSplashScreen

    application = QApplication([sys.argv[0]])
    events: list[tuple[float, str]] = []
    seen: set[str] = set()

    def note(key: str, text: str) -> None:
        if key not in seen:
            seen.add(key)
            events.append((time.time() - start, text))

    def poll() -> None:
        widgets = application.topLevelWidgets()
        if any(isinstance(w, QSplashScreen) and w.isVisible() for w in widgets):
            note("splash", "splash shown")
        window = next((w for w in widgets if type(w).__name__ == "MainWindow" and w.isVisible()), None)
        if window is not None:
            note("window", "window shown")
        dialogs = [w for w in application.allWidgets() if isinstance(w, QProgressDialog) and w.isVisible()]
        for dialog in dialogs:
            note("dialog", "progress dialog shown")
            label = dialog.labelText().split(" · ")[0]
            note(f"label:{label}", f"dialog: {label}")
        if window is None or dialogs:
            return
        state = window.state
        if state.gallery is not None and state.case is not None and state.case.case.title == "Demo":
            note("ready", f"demo case open on the demo gallery ({len(state.gallery):,} items)")
            timeline.write_text(json.dumps(events), encoding="utf-8")
            timer.stop()
            application.quit()

    timer = QTimer()
    timer.setInterval(20)
    timer.timeout.connect(poll)
    timer.start()
    from lineup.cli import main

    sys.argv = ["lineup", "app"]
    try:
        main()
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def launch_once(user_data: Path, xvfb: bool, timeout: float) -> list[tuple[float, str]]:
    """Start ``lineup app`` on ``user_data``; the timeline of what showed when (seconds since the start)."""
    timeline = user_data.parent / f"timeline-{time.time_ns()}.json"
    env = dict(os.environ, XDG_DATA_HOME=str(user_data), HF_HUB_OFFLINE="1")
    command = [sys.executable, str(Path(__file__).resolve()), CHILD_FLAG, str(timeline)]
    if xvfb:
        command = ["xvfb-run", "-a", "-s", "-screen 0 1366x768x24", *command]
        env.pop("QT_QPA_PLATFORM", None)
    else:
        env["QT_QPA_PLATFORM"] = "offscreen"
    env["FIRST_LAUNCH_START"] = repr(time.time())
    process = subprocess.run(command, env=env, cwd=ROOT, timeout=timeout, capture_output=True, text=True)
    if not timeline.is_file():
        tail = (process.stdout + process.stderr).strip().splitlines()[-15:]
        raise RuntimeError(f"`lineup app` exited ({process.returncode}) before the demo opened:\n" + "\n".join(tail))
    return [(float(t), text) for t, text in json.loads(timeline.read_text(encoding="utf-8"))]


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == CHILD_FLAG:
        return child(Path(sys.argv[2]))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="fresh first launches to time (default 1)")
    parser.add_argument("--again", action="store_true", help="after each, time a second launch on the same folder")
    parser.add_argument("--xvfb", action="store_true", help="run under xvfb-run when it is installed")
    parser.add_argument("--timeout", type=float, default=1200, help="give up on a launch after this many seconds")
    args = parser.parse_args()
    xvfb = args.xvfb and shutil.which("xvfb-run") is not None
    platform = "Xvfb (xvfb-run, 1366×768)" if xvfb else "Qt offscreen platform" + (
        " (xvfb-run is not installed)" if args.xvfb else "")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; {platform}")
    firsts = []
    for run in range(1, args.runs + 1):
        with tempfile.TemporaryDirectory(prefix="lineup-first-launch-") as work:
            user_data = Path(work) / "xdg"
            for label in ("first launch", "second launch")[: 2 if args.again else 1]:
                try:
                    events = launch_once(user_data, xvfb, args.timeout)
                except (RuntimeError, subprocess.TimeoutExpired) as exc:
                    print(f"run {run} {label}: {exc}", file=sys.stderr)
                    return 1
                print(f"run {run}, {label}:")
                for seconds, text in events:
                    print(f"  {seconds:6.1f} s  {text}")
                if label == "first launch":
                    firsts.append(events[-1][0])
    if firsts:
        print(f"first launch to the open demo case: {min(firsts):.1f} s best, {max(firsts):.1f} s worst "
              f"of {len(firsts)} run{'s' if len(firsts) > 1 else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
