"""Background jobs: results, progress and errors arrive on the UI thread; cancel stops between batches."""

from __future__ import annotations

import sys
import threading
import time

import pytest
from PySide6.QtCore import QObject, QThread, QThreadPool, Signal

from app.workers import PROGRESS_INTERVAL, Cancelled, Job, describe_error, run_in_worker, running_jobs
from engine.retrieval.search import QueryInputError


@pytest.fixture
def pool():
    pool = QThreadPool()
    pool.setMaxThreadCount(2)
    yield pool
    pool.waitForDone(5000)


def test_result_arrives_on_the_ui_thread(qtbot, pool):
    ui_thread = QThread.currentThread()
    seen = {}

    def work(job: Job):
        seen["worker_thread"] = QThread.currentThread()
        return 6 * 7

    def on_result(value):
        seen["result"] = value
        seen["callback_thread"] = QThread.currentThread()

    handle = run_in_worker(work, on_result=on_result, name="answer", pool=pool)
    with qtbot.waitSignal(handle.finished, timeout=5000):
        pass
    assert seen["result"] == 42
    assert seen["callback_thread"] is ui_thread
    assert seen["worker_thread"] is not ui_thread
    assert not handle.is_running
    assert handle not in running_jobs()


def test_progress_reports_in_order_with_the_final_one(qtbot, pool):
    reports = []

    def work(job: Job):
        report = job.engine_progress("Encoding crops")
        for done in range(0, 101, 10):
            report(done, 100)
        return "ok"

    handle = run_in_worker(work, on_progress=lambda *r: reports.append(r), pool=pool)
    with qtbot.waitSignal(handle.result, timeout=5000) as blocker:
        pass
    assert blocker.args == ["ok"]
    assert reports[0] == (0, 100, "Encoding crops")
    assert reports[-1] == (100, 100, "Encoding crops")
    assert [r[0] for r in reports] == sorted(r[0] for r in reports)


def test_progress_reaches_the_ui_at_most_ten_times_a_second(qtbot, pool):
    reports = []

    def work(job: Job):
        start = time.monotonic()
        for done in range(601):  # a report every millisecond or so, as a fast ingest makes them
            job.progress(done, 600, "Ingesting cam01.mp4")
            time.sleep(0.001)
        return time.monotonic() - start

    handle = run_in_worker(work, on_progress=lambda *r: reports.append(r), pool=pool)
    with qtbot.waitSignal(handle.result, timeout=10_000) as blocker:
        pass
    seconds = blocker.args[0]
    assert reports[0] == (0, 600, "Ingesting cam01.mp4") and reports[-1] == (600, 600, "Ingesting cam01.mp4")
    assert PROGRESS_INTERVAL >= 0.1 and 2 <= len(reports) <= seconds / PROGRESS_INTERVAL + 2


def test_a_result_waits_for_the_event_loops_timers(qtbot, pool):
    """Queued calls (repaints, other results) are all handled before any timer; a result is handed over from a
    timer so the UI thread's timers run between one result's repaints and the next result."""
    from PySide6.QtCore import QCoreApplication

    results = []
    handle = run_in_worker(lambda job: "done", on_result=results.append, pool=pool)
    assert handle.wait(5)
    time.sleep(0.2)  # the worker posts its "done" just after its function returns
    QCoreApplication.sendPostedEvents()  # every queued call, the worker's "done" included, but no timer
    assert results == [] and handle.is_running
    with qtbot.waitSignal(handle.finished, timeout=5000):
        pass
    assert results == ["done"] and not handle.is_running


def test_cancel_stops_between_batches(qtbot, pool):
    started, release = threading.Event(), threading.Event()
    batches = []

    def work(job: Job):
        for batch in range(1000):
            if batch == 3:
                started.set()
                release.wait(5)
            job.progress(batch, 1000, "batch")
            batches.append(batch)
        return "finished every batch"

    results, errors = [], []
    handle = run_in_worker(work, on_result=results.append, on_error=errors.append, pool=pool)
    assert started.wait(5)
    handle.cancel()
    release.set()
    with qtbot.waitSignal(handle.cancelled, timeout=5000):
        pass
    assert handle.is_cancelled
    assert batches == [0, 1, 2]
    assert results == [] and errors == []


def test_a_job_past_its_last_check_still_delivers(qtbot, pool):
    release = threading.Event()

    def work(job: Job):
        release.wait(5)
        return "committed"

    results, cancelled = [], []
    handle = run_in_worker(work, on_result=results.append, on_cancelled=lambda: cancelled.append(1),
                           pool=pool)
    handle.cancel()
    release.set()
    with qtbot.waitSignal(handle.finished, timeout=5000):
        pass
    assert results == ["committed"] and cancelled == []
    assert handle.is_cancelled


def test_errors_arrive_as_readable_messages(qtbot, pool):
    def work(job: Job):
        raise QueryInputError("sketch file /nowhere.png does not exist")

    handle = run_in_worker(work, pool=pool)
    with qtbot.waitSignal(handle.error, timeout=5000) as blocker:
        pass
    assert blocker.args == ["Sketch file /nowhere.png does not exist"]
    assert isinstance(handle.exception, QueryInputError)


def test_unexpected_errors_name_their_type(qtbot, pool, caplog):
    def work(job: Job):
        return 1 / 0

    handle = run_in_worker(work, name="divide", pool=pool)
    with qtbot.waitSignal(handle.error, timeout=5000) as blocker:
        pass
    assert blocker.args[0].startswith("Unexpected error (ZeroDivisionError)")
    assert "Traceback" not in blocker.args[0]
    assert any("divide" in record.getMessage() for record in caplog.records)


def test_describe_error_messages():
    assert describe_error(FileNotFoundError(2, "No such file or directory", "/x.png")) == \
        "No such file or directory: /x.png"
    assert describe_error(ValueError("rho must lie in (0, 1]")) == "Rho must lie in (0, 1]"
    assert describe_error(Cancelled()) == "Cancelled."
    assert describe_error(MemoryError()).startswith("Out of memory")


def test_cancelled_job_raises_on_check():
    flag = threading.Event()
    job = Job(flag, lambda *args: None)
    job.check()
    flag.set()
    assert job.cancelled
    with pytest.raises(Cancelled):
        job.progress(1, 2)


def test_installed_pyside_does_not_steal_references_from_none_and_true():
    """PySide6 6.12.0 on CPython 3.11 returned None/True from void methods and emits without a reference, so
    the app aborted after a few thousand calls ("none_dealloc"); pyproject pins a version without that bug."""

    class Probe(QObject):
        fired = Signal()

    probe = Probe()
    before_none, before_true = sys.getrefcount(None), sys.getrefcount(True)
    for _ in range(2_000):
        probe.setObjectName("probe")
        probe.fired.emit()
    assert before_none - sys.getrefcount(None) < 100
    assert before_true - sys.getrefcount(True) < 100
