"""A user's mistake (a missing file, a bad argument, a folder that is no gallery) ends in one readable line and a
non-zero exit, never in a Python traceback on stderr: the ``lineup`` commands (``engine.cli.output.fail``) and
the app's background jobs (``app.workers``), run as real processes so nothing but their own output is read."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap

import pytest

ENV = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HF_HUB_OFFLINE": "1"}


def lineup(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lineup", *map(str, args)], cwd=cwd, env=ENV, text=True,
                          capture_output=True, timeout=240)


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


@pytest.mark.parametrize("args, says", [
    (("gallery", "info", "{missing}"), "does not exist"),
    (("gallery", "rebuild", "{empty}"), "is not a gallery"),  # failed inside a RuntimeError guard: once only
    (("ablate", "--plan", "cmam", "--data", "a:b", "--world", "{empty}", "--out", "{tmp}/ab", "--seeds", "abc"),
     "--seeds: expected comma-separated integers"),
    (("search", "--gallery", "{empty}", "--text", "a man"), "is not a gallery"),
    (("report", "export", "--db", "{missing}.db", "--case", "1", "--out", "{tmp}/r.pdf"), "does not exist"),
])
def test_a_command_given_a_mistake_says_so_in_one_line(tmp_path, args, says):
    """In-process (the commands' own code paths); the real process is checked once below."""
    from typer.testing import CliRunner

    from lineup.cli import app

    empty = tmp_path / "empty"
    empty.mkdir()
    names = {"missing": tmp_path / "nowhere", "empty": empty, "tmp": tmp_path}
    done = CliRunner().invoke(app, [arg.format(**names) for arg in args])
    assert done.exit_code == 2, done.output
    assert done.exception is None or isinstance(done.exception, SystemExit)
    assert "Traceback" not in done.output
    lines = error_lines(done.stderr)
    assert len(lines) == 1 and says in lines[0], done.stderr


def test_a_real_process_prints_one_error_line_and_no_traceback(tmp_path):
    done = lineup("gallery", "info", tmp_path / "nowhere", cwd=tmp_path)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr + done.stdout
    lines = error_lines(done.stderr)
    assert len(lines) == 1 and "does not exist" in lines[0], done.stderr


def test_opening_a_folder_that_is_no_gallery_in_the_app_prints_no_traceback(tmp_path):
    """The app's job fails with the state's one sentence; stderr stays free of tracebacks (the log's default
    handler would print one for an error logged with its traceback)."""
    script = textwrap.dedent(f"""
        import sys
        from PySide6.QtCore import QEventLoop, QTimer
        from PySide6.QtWidgets import QApplication
        from app.state import AppState

        application = QApplication([])
        state = AppState()
        errors = []
        state.error.connect(errors.append)
        loop = QEventLoop()
        state.busy_changed.connect(lambda busy: busy or loop.quit())
        QTimer.singleShot(60_000, loop.quit)
        assert state.load_gallery({str(tmp_path)!r}) is not None
        loop.exec()
        print("ERRORS", errors)
        sys.exit(0 if errors else 3)
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=ENV, text=True, capture_output=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr
    assert "is not a gallery" in done.stdout
    assert "Traceback" not in done.stderr, done.stderr


def test_a_user_error_is_logged_in_one_line_and_a_fault_with_its_traceback(qtbot, caplog):
    from app.workers import run_in_worker

    def mistake(_job):
        raise FileNotFoundError(2, "No such file or directory", "/nowhere/clip.mp4")

    def fault(_job):
        return {}["missing"]

    caplog.set_level(logging.DEBUG, logger="lineup.app")
    for work in (mistake, fault):
        handle = run_in_worker(work, name=work.__name__)
        with qtbot.waitSignal(handle.finished, timeout=5000):
            pass
    mistakes = [r for r in caplog.records if "'mistake'" in r.getMessage()]
    faults = [r for r in caplog.records if "'fault'" in r.getMessage()]
    assert [r.levelno for r in mistakes if r.levelno >= logging.WARNING] == []
    assert any("No such file or directory: /nowhere/clip.mp4" in r.getMessage() for r in mistakes)
    assert [r.levelno for r in faults] == [logging.ERROR] and faults[0].exc_info is not None
