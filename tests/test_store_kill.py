"""Kill safety: a process running store actions is SIGKILLed at arbitrary points (and once inside an action's
transaction); the reopened case holds every acknowledged action, at most one more, and an intact chain."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
from contextlib import closing
from pathlib import Path

import pytest

from app.store import CaseStore

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")

CHILD = textwrap.dedent("""
    import os, signal, sys
    import numpy as np
    import app.store.service as service
    from app.store import CaseStore, StepInput

    db, die_inside, run = sys.argv[1], sys.argv[2] == "inside", sys.argv[3]
    store = CaseStore.open(db, actor="child")
    cases = store.list_cases()
    if cases:
        case = cases[0].id
        gallery = store.load_case(case).galleries[0].id
    else:
        case = store.create_case("Kill me")
        gallery = store.add_gallery(case, "/g", "k" * 64, "m", 2000)
    start = len(store.audit_trail(case))
    print("ready", start, flush=True)
    if die_inside:
        original = service.append_entry

        def append_then_die(session, case_id, at, actor, action, payload):
            entry = original(session, case_id, at, actor, action, payload)
            if action == "mark":
                print("dying", payload["item"], flush=True)
                os.kill(os.getpid(), signal.SIGKILL)
            return entry

        service.append_entry = append_then_die
    scores = np.linspace(0.0, 1.0, 2000, dtype=np.float32)
    n = 0
    while True:
        n += 1
        if n % 4 == 0:
            keep = tuple(f"item{i}" for i in range(1999, 999, -1))
            step = StepInput(gallery_id=gallery, query_kind="text", query_text=f"query {n}", view="text",
                             keep_rule="rho", keep_value=0.5, k=1000, candidates_before=2000, kept_ids=keep,
                             kept_scores=tuple(scores[1999:999:-1].tolist()), scores=scores)
            store.record_step(case, step)
        elif n % 4 == 1:
            store.mark(case, gallery, f"item{run}-{n}", "confirmed" if n % 3 else "rejected", f"mark {n}")
        elif n % 4 == 2:
            store.add_note(case, f"note {run}-{n}")
        elif store.load_case(case).case.head_step_id is not None and n % 8 == 3:
            store.undo_step(case)
        else:
            store.rename(case, f"Kill me {run}-{n}")
        print("ack", n, flush=True)
""")


def run_child(db: Path, acks_before_kill: int, mode: str = "loop") -> tuple[int, int, list[str]]:
    """Start the child, SIGKILL it after ``acks_before_kill`` acknowledged actions (or let it kill itself);
    return (audit entries when it started, acknowledged actions, every line it printed). Every action the
    child acknowledges changes the case (fresh item ids, note texts and titles per run)."""
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(db), mode, str(acks_before_kill)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    try:
        for line in child.stdout:
            lines.append(line.strip())
            if sum(x.startswith("ack") for x in lines) >= acks_before_kill:
                child.send_signal(signal.SIGKILL)
                break
        rest, errors = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    lines += rest.splitlines()
    assert child.returncode == -signal.SIGKILL, errors
    start = int(lines[0].split()[1])
    return start, sum(line.startswith("ack") for line in lines), lines


def check_intact(db: Path) -> int:
    with closing(sqlite3.connect(db)) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert raw.execute("PRAGMA foreign_key_check").fetchall() == []
    with CaseStore.open(db) as store:
        [case] = store.list_cases()
        report = store.verify_chain(case.id)
        assert report.ok, report.problems
        store.load_case(case.id)
        return report.entries


def test_killed_mid_run_the_case_keeps_every_acknowledged_action(tmp_path):
    db = tmp_path / "killed.sqlite"
    for acks in (3, 11, 23):
        start, acknowledged, _ = run_child(db, acks)
        entries = check_intact(db)
        assert entries - start - acknowledged in (0, 1), (entries, start, acknowledged)


def test_killed_inside_a_transaction_the_action_is_absent(tmp_path):
    db = tmp_path / "inside.sqlite"
    start, acknowledged, lines = run_child(db, acks_before_kill=10**6, mode="inside")
    dying = [line for line in lines if line.startswith("dying")]
    assert len(dying) == 1 and acknowledged == 0
    item = dying[0].split()[1]
    assert check_intact(db) == 2  # case and gallery: the mark was written, then the process died before commit
    with CaseStore.open(db) as store:
        state = store.load_case(store.list_cases()[0].id)
        assert all(m.item_id != item for m in state.marks)
        assert [e.action for e in store.audit_trail(state.case.id)] == ["case.create", "gallery.add"]


def test_opening_a_store_keeps_the_locks_of_connections_already_open(tmp_path):
    """Regression: reading the file's header with a plain open()/close() cancelled the POSIX locks of this
    process's open SQLite connection; after another process wrote and was killed, the database read as
    malformed here."""
    db = tmp_path / "locks.sqlite"
    run_child(db, 3)
    with closing(sqlite3.connect(db)) as held:
        held.execute("PRAGMA integrity_check").fetchone()
        with CaseStore.open(db) as store:
            store.load_case(1)
        start, acks, _ = run_child(db, 60)
        assert check_intact(db) - start - acks in (0, 1)
