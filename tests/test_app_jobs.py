"""The job runner holds the app's one busy state: a second job is refused with the running one's name, a cancel
ends a job without its result, an error arrives as one readable message named for its job, and ``then`` runs
once the runner is free (so a job may start the next). The state and the main window share that busy state."""

from __future__ import annotations

import threading

import pytest

from app.jobs import BackgroundJob, JobRunner
from app.main_window import MainWindow
from app.state import AppState
from app.workers import Job

WAIT = 10_000


class GatedJob(BackgroundJob):
    """Waits for ``gate`` (checking for a cancel meanwhile), then returns ``value``."""

    name = "Gated"

    def __init__(self, value=None) -> None:
        self.value = value
        self.gate = threading.Event()
        self.entered = threading.Event()

    def run(self, job: Job):
        self.entered.set()
        while not self.gate.wait(0.01):
            job.check()
        job.progress(1, 1, "gate open")
        return self.value


class FailingJob(BackgroundJob):
    name = "Opening gallery"

    def run(self, job: Job):
        raise ValueError("gallery folder /nowhere does not exist")


@pytest.fixture
def runner(qtbot):
    runner = JobRunner()
    seen = {"busy": [], "error": [], "failed": [], "message": [], "progress": []}
    runner.busy_changed.connect(seen["busy"].append)
    runner.error.connect(seen["error"].append)
    runner.failed.connect(lambda name, text: seen["failed"].append((name, text)))
    runner.message.connect(seen["message"].append)
    runner.progress.connect(lambda *report: seen["progress"].append(report))
    runner.seen = seen
    yield runner
    runner.close()


def test_one_job_at_a_time_and_a_second_is_refused_by_name(qtbot, runner):
    first = GatedJob("first")
    results = []
    handle = runner.start(first, results.append)
    assert handle is not None and first.entered.wait(5)
    assert runner.busy and runner.job_name == "Gated" and runner.seen["busy"] == [True]
    assert runner.start(GatedJob("second"), results.append) is None
    assert runner.seen["error"] == ["Gated is still running: wait for it or cancel it"]
    first.gate.set()
    with qtbot.waitSignal(handle.finished, timeout=WAIT):
        pass
    assert results == ["first"] and runner.seen["busy"] == [True, False]
    assert not runner.busy and runner.job_name == "" and runner.refusal() is None
    assert runner.seen["progress"][-1] == (1, 1, "gate open")


def test_a_cancelled_job_delivers_no_result_and_says_so(qtbot, runner):
    job = GatedJob("never")
    results, followed = [], []
    handle = runner.start(job, results.append, then=followed.append)
    assert job.entered.wait(5)
    runner.cancel()
    with qtbot.waitSignal(handle.finished, timeout=WAIT):
        pass
    assert results == [] and followed == []
    assert runner.seen["message"] == ["Gated: cancelled"] and runner.seen["error"] == []
    assert runner.seen["busy"] == [True, False]


def test_an_error_is_one_readable_message_named_for_its_job(qtbot, runner):
    handle = runner.start(FailingJob(), lambda value: pytest.fail("no result expected"))
    with qtbot.waitSignal(handle.finished, timeout=WAIT):
        pass
    assert runner.seen["failed"] == [("Opening gallery", "Gallery folder /nowhere does not exist")]
    assert runner.seen["error"] == ["Gallery folder /nowhere does not exist"]
    assert "Traceback" not in runner.seen["error"][0]
    assert isinstance(handle.exception, ValueError) and not runner.busy


def test_then_runs_once_the_runner_is_free_and_may_start_the_next_job(qtbot, runner):
    first, second = GatedJob(1), GatedJob(2)
    order = []

    def chain(value):
        order.append(("then", value, runner.busy))
        assert runner.start(second, lambda v: order.append(("result", v))) is not None

    runner.start(first, lambda v: order.append(("result", v, runner.busy)), then=chain)
    first.gate.set()
    second.gate.set()
    qtbot.waitUntil(lambda: len(order) == 3 and not runner.busy, timeout=WAIT)
    assert order == [("result", 1, True), ("then", 1, False), ("result", 2)]
    assert runner.seen["busy"] == [True, False, True, False]


def test_the_state_refuses_case_changes_while_any_job_runs(qtbot, tmp_path):
    state = AppState()
    assert state.open_store(tmp_path / "cases.db")
    errors, busy = [], []
    state.error.connect(errors.append)
    state.busy_changed.connect(busy.append)
    job = GatedJob()
    handle = state.jobs.start(job)
    assert job.entered.wait(5)
    assert state.busy and state.job_name == "Gated" and busy == [True]
    assert state.new_case("Waits") is None
    assert errors == ["Gated is still running: wait for it or cancel it"]
    assert state.load_gallery(tmp_path / "gallery") is None
    state.cancel()
    with qtbot.waitSignal(handle.finished, timeout=WAIT):
        pass
    assert busy == [True, False] and state.new_case("Now") is not None
    state.close()


def test_the_window_shows_and_cancels_the_states_job(qtbot, tmp_path):
    state = AppState()
    assert state.open_store(tmp_path / "cases.db")
    window = MainWindow(state, None)
    qtbot.addWidget(window)
    job = GatedJob()
    handle = state.jobs.start(job)
    assert job.entered.wait(5)
    assert window.busy and window.cancel_button.isVisibleTo(window)
    assert not window.ingest_action.isEnabled() and not window.open_gallery_action.isEnabled()
    assert window.cancel_action.isEnabled()
    window.cancel_button.click()
    with qtbot.waitSignal(handle.finished, timeout=WAIT):
        pass
    assert not window.busy and not window.cancel_button.isVisibleTo(window)
    assert window.statusBar().currentMessage() == "Gated: cancelled"
    window.close()
