"""Start the app: what ``lineup app [--db PATH] [--gallery DIR] [--checkpoint C]`` runs (``launch``; the command
and its options are declared once, in ``lineup.cli``).

A splash screen says what is loading from the moment Qt is up until the window shows. Without ``--gallery`` the
window opens on the built-in demo (``app.demo_gallery``): the first launch unpacks and verifies the demo gallery
shipped for the shipped checkpoint, or, for another checkpoint, renders the demo world and ingests it; either
way behind one cancellable progress dialog that stays up, with its step and (when counted) time left, until
the gallery is open in the window. The gallery and the case database are cached in the user data folder
(``engine.lab.demo.data_dir``). A case titled "Demo" is opened (created the first time). Without a usable
checkpoint the window still opens and says how to give one (docs/architecture.md, "First launch").
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def resolve_checkpoint(checkpoint: str | Path | None) -> tuple[Path | None, str]:
    """(checkpoint folder or None, why none): the given one, else the shipped default."""
    from engine.retrieval.models.discovery import NoCheckpointError, default_checkpoint

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


def is_demo_gallery(folder: Path) -> bool:
    """Whether ``folder`` is a demo gallery in the user data folder (launch prepares and opens those)."""
    from app.demo_gallery import demo_gallery_dir

    demos = demo_gallery_dir("0").parent
    try:
        return Path(folder).resolve().parent == demos.resolve()
    except OSError:
        return False


def window_settings(folder: Path):
    """The window's remembered layout and last case (an INI file in ``folder``)."""
    from PySide6.QtCore import QSettings

    return QSettings(str(folder / "window.ini"), QSettings.Format.IniFormat)


class Splash:
    """The start-up splash: a plain card with the app's name and one line saying what is loading."""

    def __init__(self, application) -> None:
        from PySide6.QtCore import Qt
        from PySide6.QtGui import QColor, QFont, QPainter, QPixmap
        from PySide6.QtWidgets import QSplashScreen

        self._application = application
        self._align = Qt.AlignmentFlag.AlignBottom | Qt.AlignmentFlag.AlignHCenter
        self._colour = QColor("#e8edf2")
        pixmap = QPixmap(460, 180)
        pixmap.fill(QColor("#24313f"))
        painter = QPainter(pixmap)
        font = QFont(painter.font())
        font.setPointSize(26)
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(self._colour)
        painter.drawText(pixmap.rect().adjusted(0, 0, 0, -50), Qt.AlignmentFlag.AlignCenter, "Lineup")
        painter.end()
        self.screen = QSplashScreen(pixmap)
        self.screen.show()
        self.say("Starting…")

    def say(self, message: str) -> None:
        """Show ``message`` and let Qt paint it now (the caller is about to block the UI thread)."""
        self.screen.showMessage(message, self._align, self._colour)
        self._application.processEvents()

    def finish(self, window) -> None:
        self.screen.finish(window)


def _time_left(started: float, done: int, total: int, now: float) -> str:
    """ " · about 40 s left" from the rate so far (empty before a few seconds or a few percent of the work)."""
    elapsed = now - started
    if total <= 0 or done <= 0 or done >= total or elapsed < 3 or done < total * 0.02:
        return ""
    left = elapsed * (total - done) / done
    return f" · about {left:.0f} s left" if left < 90 else f" · about {left / 60:.0f} min left"


def start_demo(window, models):
    """Open the demo gallery (``PrepareDemoJob`` on the window's job runner: the cached one, the shipped one
    unpacked, or one built here), then open it in the window (``open_gallery``), behind one cancellable
    progress dialog that closes when the gallery is open (or the preparation failed or was cancelled).
    Returns the preparation's handle, or None when another job runs."""
    import time

    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QProgressDialog

    from app.jobs import PrepareDemoJob

    job = PrepareDemoJob(models)
    stage = {"message": None, "started": time.monotonic(), "running": None}
    dialog = QProgressDialog("Preparing the demo gallery…", "Cancel", 0, 0, window)
    dialog.setWindowTitle("Lineup demo")
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.setAutoClose(False)
    dialog.setAutoReset(False)
    dialog.setMinimumWidth(440)

    def progress(done: int, total: int, message: str) -> None:
        now = time.monotonic()
        if message and message != stage["message"]:
            stage["message"], stage["started"] = message, now
        dialog.setMaximum(max(total, 0))
        if total > 0:
            dialog.setValue(min(done, total))
        if stage["message"]:
            dialog.setLabelText(stage["message"] + _time_left(stage["started"], done, total, now))

    def close() -> None:
        dialog.reset()
        dialog.hide()
        dialog.deleteLater()

    def open_prepared(gallery) -> None:
        """The preparation delivered the gallery: open it under the same dialog."""
        progress(0, 0, "Opening the demo gallery")
        opening = window.open_gallery(gallery)
        if opening is None:
            close()
            return
        stage["running"] = opening
        opening.progress.connect(progress)
        opening.finished.connect(close)

    handle = window.state.jobs.start(job, then=open_prepared)
    if handle is None:
        dialog.deleteLater()
        return None
    stage["running"] = handle
    delivered = []
    handle.result.connect(delivered.append)
    handle.progress.connect(progress)
    handle.cancelled.connect(lambda: window.show_notice(job.cancelled_message))
    handle.finished.connect(lambda: None if delivered else close())
    dialog.canceled.connect(lambda: stage["running"].cancel())  # the preparation, then the opening
    dialog.setMinimumDuration(0)
    dialog.show()
    return handle


def launch(db: str | Path | None = None, gallery: str | Path | None = None,
           checkpoint: str | Path | None = None, argv: list[str] | None = None, *,
           play: str | Path | None = None, export_report: str | Path | None = None,
           screenshot: str | Path | None = None, quit_after: bool = False, fast: bool = False,
           blur_faces: bool = False) -> int:
    """Build the window and run the event loop; returns the exit status. With ``play`` a demo script is
    replayed in a new case once the gallery is open (then the report, the screenshot, and quit, as asked)."""
    if play is None and (export_report is not None or quit_after):
        print("lineup app: --export-report and --quit go with --play SCRIPT", file=sys.stderr)
        return 2
    from PySide6.QtWidgets import QApplication

    application = QApplication.instance() or QApplication(argv or [sys.argv[0]])
    application.setApplicationName("Lineup")
    splash = Splash(application)  # up within a second of Qt: the imports below take seconds on a busy machine
    splash.say("Loading the interface…")
    from app.demo_gallery import DEMO_CASE_TITLE, demo_case_db
    from app.state.play_script import PlayScriptError, load_script

    script = None
    if play is not None:
        try:
            script = load_script(play)
        except PlayScriptError as exc:
            splash.screen.close()
            print(f"lineup app --play: {exc}", file=sys.stderr)
            return 2
    from app.checkpoint_models import CheckpointModels
    from app.main_window import MainWindow
    from app.state import AppState

    state = AppState()
    path, why_not = resolve_checkpoint(checkpoint)
    models = None if path is None else CheckpointModels(path, device=None)
    from engine.lab.demo import data_dir

    settings = window_settings(data_dir())
    splash.say("Building the window…")
    window = MainWindow(state, models, settings=settings)
    window.show()
    splash.finish(window)
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
        own = None if director is not None else window.open_case_gallery(skip=is_demo_gallery)
        if own is not None:
            pass  # the last case's own gallery is opening (or the banner says it is missing)
        elif models is None:
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

