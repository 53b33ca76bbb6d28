"""Exporting a report from the window runs as a background job (app/jobs/export_report.py): the runner is busy
and names it, the window keeps handling events and refuses a second job, progress reaches the status bar per
thumbnail and per PDF page, and a cancel leaves neither a report, nor a manifest, nor a temporary file."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QTimer
from report_cases import many_steps_case, report_case

from app.jobs import ExportReportJob
from app.jobs.job import BackgroundJob
from app.main_window import MainWindow
from app.report import content as content_module
from app.report import verify_report
from app.state import AppState

WAIT = 30_000


@pytest.fixture
def window(qtbot, tmp_path):
    built = report_case(tmp_path / "case")
    state = AppState()
    assert state.open_store(built.db, actor="tester")
    assert state.open_case(built.case_id)
    window = MainWindow(state)
    qtbot.addWidget(window)
    window.built = built
    yield window
    window.close()


@pytest.fixture
def gate(monkeypatch):
    """Holds the exporter at its first image (on the worker) until ``gate.open`` is set."""
    original = content_module.report_image
    entered, release = threading.Event(), threading.Event()

    def held(*args, **kwargs):
        entered.set()
        assert release.wait(WAIT / 1000), "the test never opened the gate"
        return original(*args, **kwargs)

    monkeypatch.setattr(content_module, "report_image", held)
    gate = type("Gate", (), {})()
    gate.entered, gate.open = entered, release
    yield gate
    release.set()


def progress_log(window):
    seen = []
    window.state.progress.connect(lambda done, total, message: seen.append((done, total, message)))
    return seen


def test_export_runs_as_a_job_and_the_window_stays_responsive(qtbot, window, gate, tmp_path):
    seen = progress_log(window)
    out = tmp_path / "report.pdf"
    handle = window.export_report(out, blur_faces=False)
    assert handle is not None and isinstance(window.state.jobs._job, ExportReportJob)
    assert window.state.busy and window.state.job_name == "Exporting the report"
    assert window.job_status.cancel_button.isVisibleTo(window) and window.cancel_action.isEnabled()
    qtbot.waitUntil(gate.entered.is_set, timeout=WAIT)

    ticks = []  # the UI thread runs its timers while the export is held on the worker
    timer = QTimer(window)
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(10)
    qtbot.waitUntil(lambda: len(ticks) >= 5, timeout=2000)
    timer.stop()
    assert handle.is_running and window.state.busy and not out.exists()
    assert window.export_report(tmp_path / "second.pdf", blur_faces=False) is None  # one job at a time
    assert window.banner.text() == "Exporting the report is still running: wait for it or cancel it"

    results = []
    handle.result.connect(results.append)
    with qtbot.waitSignal(handle.finished, timeout=WAIT):
        gate.open.set()
    assert not window.state.busy and not window.job_status.cancel_button.isVisibleTo(window)
    result = results[0]
    assert result.report_path == out and out.read_bytes().startswith(b"%PDF") and result.manifest_path.is_file()
    assert verify_report(out, window.built.db).ok
    assert "Report written" in window.banner.text()
    messages = [message for _, _, message in seen]
    assert "Copying thumbnail 1 of 2" in messages and "Copying thumbnail 2 of 2" in messages
    assert any(message.startswith("Writing PDF page 1 of ") for message in messages)
    assert (1, 2, "Copying thumbnail 2 of 2") in seen


def test_a_cancelled_export_leaves_no_file(qtbot, window, gate, tmp_path):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    handle = window.export_report(out_dir / "report.pdf", blur_faces=True)
    assert handle is not None
    qtbot.waitUntil(gate.entered.is_set, timeout=WAIT)
    cancelled = []
    handle.cancelled.connect(lambda: cancelled.append(True))
    with qtbot.waitSignal(handle.finished, timeout=WAIT):
        window.job_status.cancel_button.click()
        gate.open.set()
    assert cancelled and not window.state.busy
    assert list(out_dir.iterdir()) == []  # no report, no manifest, no temporary file
    assert window.statusBar().currentMessage() == "Report export cancelled: nothing was written"
    assert window.banner.text() == ""


def test_a_cancel_while_the_pdf_is_painted_keeps_the_previous_report(qtbot, window, tmp_path, monkeypatch):
    out = tmp_path / "report.pdf"
    first = []
    handle = window.export_report(out, blur_faces=False)
    handle.result.connect(first.append)
    with qtbot.waitSignal(handle.finished, timeout=WAIT):
        pass
    before = out.read_bytes(), first[0].manifest_path.read_bytes()

    from app.report import export as export_module

    painting = threading.Event()
    original = export_module.render_pdf_apart  # the window's export draws the PDF in a child process

    def slow_pages(content, path, *, progress=None):
        def held(done, total, message):
            if message.startswith("Writing PDF page"):
                painting.set()
                while not handle.is_cancelled:
                    threading.Event().wait(0.01)
            progress(done, total, message)

        return original(content, path, progress=held)

    monkeypatch.setattr(export_module, "render_pdf_apart", slow_pages)
    handle = window.export_report(out, blur_faces=False)
    qtbot.waitUntil(painting.is_set, timeout=WAIT)
    with qtbot.waitSignal(handle.finished, timeout=WAIT):
        window.cancel_job()
    assert (out.read_bytes(), first[0].manifest_path.read_bytes()) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".report")) == []


#: The UI thread's longest allowed gap while a report is exported (the export does all its work on the worker, a
#: PDF's layout and painting in a child process)
EXPORT_STALL_MS = 100


class FirstJob(BackgroundJob):
    """A job that does nothing: the window's first job shows the status bar's job display for the first time,
    which alone took 160–190 ms of the UI thread here (measured with a job that only sleeps), whatever the job."""

    name = "Warming up"

    def run(self, job):
        job.progress(0, 0, "Warming up")
        return None


def test_exporting_a_fifty_step_report_never_stalls_the_window(qtbot, tmp_path):
    from test_app_heartbeat import Heartbeat

    built = many_steps_case(tmp_path / "case", steps=50)
    state = AppState()
    assert state.open_store(built.db, actor="tester")
    assert state.open_case(built.case_id)
    window = MainWindow(state)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    assert state.jobs.start(FirstJob()) is not None
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    seen = progress_log(window)
    heart = Heartbeat()
    stages = []  # (ms since the heartbeat started, progress message): where a stall happened
    window.state.progress.connect(lambda _done, _total, message: stages.append((heart.clock.elapsed(), message)))
    out = tmp_path / "report.pdf"
    heart.start()
    handle = window.export_report(out, blur_faces=False)
    assert handle is not None
    results = []
    handle.result.connect(results.append)
    handle.result.connect(lambda _value: stages.append((heart.clock.elapsed(), "the result reached the window")))
    qtbot.waitUntil(lambda: not state.busy, timeout=120_000)
    heart.stop()
    worst = max(zip(heart.ticks, heart.ticks[1:], strict=False), key=lambda pair: pair[1] - pair[0])
    during = next((message for at, message in reversed(stages) if at <= worst[0]), "the start")
    print(f"export heartbeat: {heart.summary()}; the worst after {worst[0]} ms, during “{during}”")
    assert results and verify_report(out, built.db).ok
    messages = [message for _, _, message in seen]
    assert "Laying out 50 steps" in messages and "Writing PDF page 1 of " + str(results[0].pages) in messages
    drawn = [m for m in messages if m.startswith("Drawing the scores of step ")]
    assert len(drawn) == len(state.case.active_path) > 30  # one per step of the current branch
    assert len(heart.ticks) > 20
    assert heart.longest_gap() <= EXPORT_STALL_MS, f"the UI thread stalled: {heart.summary()} during “{during}”"
    window.close()


def test_the_export_dialog_says_where_progress_and_cancel_show(qtbot, tmp_path):
    from app.views.export_dialog import ExportDialog

    dialog = ExportDialog(tmp_path / "case")
    qtbot.addWidget(dialog)
    assert "every search step" in dialog.how.text() and "undone ones included" in dialog.how.text()
    assert "progress and a Cancel button show in the status bar" in dialog.how.text()
    assert dialog.path() == tmp_path / "case.pdf" and dialog.problem_with(tmp_path / "case.html") == ""
    assert dialog.problem_with(tmp_path / "case.txt").startswith("The report file must end in .pdf or .html")
