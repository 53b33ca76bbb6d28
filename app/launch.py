"""Start the app: ``lineup app [--db PATH] [--gallery DIR] [--checkpoint C]`` (or ``python -m app.launch``).

Without ``--gallery`` the window opens on the built-in demo: the first launch renders the demo world and
ingests it with the checkpoint (default: the shipped one) behind a cancellable progress dialog; the gallery
and the case database are cached in the user data folder (``engine.demo.data_dir``), so later launches
open in seconds. A case titled "Demo" is opened (created the first time). Without a usable checkpoint the
window still opens and says how to give one.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def resolve_checkpoint(checkpoint: str | Path | None) -> tuple[Path | None, str]:
    """(checkpoint folder or None, why none): the given one, else the shipped default."""
    from engine.models.discovery import NoCheckpointError, default_checkpoint

    if checkpoint is not None:
        path = Path(checkpoint)
        if not path.is_dir():
            return None, f"The checkpoint {path} is not a folder: pass a checkpoint folder with --checkpoint PATH"
        return path, ""
    try:
        return default_checkpoint(), ""
    except NoCheckpointError as exc:
        return None, (f"No default checkpoint is shipped ({exc}). Text, sketch and IR search need one: "
                      f"train with `lineup train` and start with `lineup app --checkpoint PATH`.")


def open_or_create_case(state, title: str) -> int | None:
    """Open the newest case called ``title`` (created when there is none)."""
    matching = [case for case in state.cases() if case.title == title]
    if matching:
        newest = max(matching, key=lambda case: case.updated_at)
        return newest.id if state.open_case(newest.id) else None
    return state.new_case(title, "The built-in demo: a synthetic world searched step by step.")


def open_latest_case(state, fallback_title: str) -> int | None:
    cases = state.cases()
    if cases:
        newest = max(cases, key=lambda case: case.updated_at)
        return newest.id if state.open_case(newest.id) else None
    return state.new_case(fallback_title)


def open_remembered_case(state, settings, fallback) -> int | None:
    """Open the case remembered in ``settings`` ("case/last") when the store still has it, else ``fallback()``."""
    remembered = None if settings is None else settings.value("case/last")
    try:
        wanted = None if remembered is None else int(remembered)
    except (TypeError, ValueError):
        wanted = None
    if wanted is not None and any(case.id == wanted for case in state.cases()) and state.open_case(wanted):
        return wanted
    return fallback()


def window_settings(folder: Path):
    """The window's remembered layout and last case (an INI file in ``folder``)."""
    from PySide6.QtCore import QSettings

    return QSettings(str(folder / "window.ini"), QSettings.Format.IniFormat)


def start_demo(window, models):
    """Open the cached demo gallery, or prepare it (``PrepareDemoJob`` on the window's job runner) behind a
    cancellable progress dialog; returns the job's handle, or None when another job runs."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QProgressDialog

    from app.jobs import PrepareDemoJob

    job = PrepareDemoJob(models)
    handle = window.state.jobs.start(job, then=window.open_gallery)
    if handle is None:
        return None
    dialog = QProgressDialog("Preparing the demo gallery (first launch only)…", "Cancel", 0, 0, window)
    dialog.setWindowTitle("Lineup demo")
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.setMinimumDuration(300)
    dialog.setMinimumWidth(440)

    def progress(done: int, total: int, message: str) -> None:
        dialog.setMaximum(max(total, 0))
        if total > 0:
            dialog.setValue(min(done, total))
        if message:
            dialog.setLabelText(message)

    def finished() -> None:
        dialog.reset()
        dialog.hide()

    handle.progress.connect(progress)
    handle.cancelled.connect(lambda: window.show_notice(job.cancelled_message))
    handle.finished.connect(finished)
    dialog.canceled.connect(handle.cancel)
    return handle


def launch(db: str | Path | None = None, gallery: str | Path | None = None,
           checkpoint: str | Path | None = None, argv: list[str] | None = None, *,
           play: str | Path | None = None, export_report: str | Path | None = None,
           screenshot: str | Path | None = None, quit_after: bool = False, fast: bool = False,
           blur_faces: bool = False) -> int:
    """Build the window and run the event loop; returns the exit status. With ``play`` a demo script is
    replayed in a new case once the gallery is open (then the report, the screenshot, and quit, as asked)."""
    from PySide6.QtWidgets import QApplication

    from app.checkpoint_models import CheckpointModels
    from app.demo_gallery import DEMO_CASE_TITLE, demo_case_db
    from app.main_window import MainWindow
    from app.state import AppState
    from app.state.play_script import PlayScriptError, load_script

    script = None
    if play is not None:
        try:
            script = load_script(play)
        except PlayScriptError as exc:
            print(f"lineup app --play: {exc}", file=sys.stderr)
            return 2
    elif export_report is not None or quit_after:
        print("lineup app: --export-report and --quit go with --play SCRIPT", file=sys.stderr)
        return 2

    application = QApplication.instance() or QApplication(argv or [sys.argv[0]])
    application.setApplicationName("Lineup")
    state = AppState()
    path, why_not = resolve_checkpoint(checkpoint)
    models = None if path is None else CheckpointModels(path, device=None)
    from engine.demo import data_dir

    settings = window_settings(data_dir())
    window = MainWindow(state, models, settings=settings)
    window.show()
    director = None
    if script is not None:
        from app.play import PlayDirector

        director = PlayDirector(window, script, report=None if export_report is None else Path(export_report),
                                screenshot=None if screenshot is None else Path(screenshot),
                                quit_after=quit_after, fast=fast, blur_faces=blur_faces)
    if not state.open_store(db or demo_case_db()):
        if quit_after:
            return 1
        return application.exec()
    if director is not None:
        director.start()
    if gallery is not None:
        open_remembered_case(state, settings, lambda: open_latest_case(state, "Investigation"))
        window.open_gallery(gallery)
    else:
        open_remembered_case(state, settings, lambda: open_or_create_case(state, DEMO_CASE_TITLE))
        if models is None:
            window.show_notice(why_not)
        else:
            start_demo(window, models)
    if why_not and gallery is not None:
        window.show_notice(why_not)
    if director is not None and models is None and quit_after:
        print(f"lineup app --play: {why_not}", file=sys.stderr)
        return 1
    status = application.exec()
    return status if director is None or director.exit_code is None else director.exit_code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lineup app", description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, help="Case database (default: cases.db in the user data folder)")
    parser.add_argument("--gallery", type=Path, help="Gallery folder (default: the built-in demo gallery)")
    parser.add_argument("--checkpoint", type=Path, help="Checkpoint folder (default: the shipped one)")
    parser.add_argument("--play", help="Replay a demo script (a path, or a name in resources/demos)")
    parser.add_argument("--export-report", type=Path, help="After --play, export the case report (.pdf or .html)")
    parser.add_argument("--screenshot", type=Path, help="After --play, save a PNG of the window")
    parser.add_argument("--quit", action="store_true", help="After --play, quit (exit status 0 when it all worked)")
    parser.add_argument("--fast", action="store_true", help="Play without the watchable pauses")
    parser.add_argument("--blur-faces", action="store_true", help="Blur faces in the exported report's thumbnails")
    args = parser.parse_args(argv)
    return launch(args.db, args.gallery, args.checkpoint, play=args.play, export_report=args.export_report,
                  screenshot=args.screenshot, quit_after=args.quit, fast=args.fast, blur_faces=args.blur_faces)


if __name__ == "__main__":
    sys.exit(main())
