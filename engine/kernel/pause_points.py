"""Named points in the writing code where a process can be told to stop, so that crash tests can kill it
there with SIGKILL (a real kill of a real process, not a simulated exception).

``LINEUP_PAUSE_AT=NAME`` (or ``NAME@N``: its N-th passage, counting from 1) makes the process stop for good
when it reaches that point: it writes ``NAME <pid>`` to the file named by ``LINEUP_PAUSE_NOTICE`` (if set) and
to stderr, then sleeps until it is killed. Unset, a pause point costs one dictionary look-up.

Points: ``ingest:evidence-written`` (a batch's attribute evidence is committed, its items not yet),
``gallery:batch-committed`` (an add's batch is committed, the indexes not yet saved) and
``ingest:batch-added`` (a batch is committed and its indexes saved).
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter

ENV_POINT = "LINEUP_PAUSE_AT"
ENV_NOTICE = "LINEUP_PAUSE_NOTICE"
_passed: Counter[str] = Counter()


def pause_point(name: str) -> None:
    """Stop here for good when ``LINEUP_PAUSE_AT`` names this point (and this passage of it)."""
    wanted = os.environ.get(ENV_POINT)
    if not wanted:
        return
    point, _, nth = wanted.partition("@")
    if point != name:
        return
    _passed[name] += 1
    if _passed[name] != (int(nth) if nth.isdigit() else 1):
        return
    line = f"{name} {os.getpid()}\n"
    notice = os.environ.get(ENV_NOTICE)
    if notice:
        with open(notice, "w", encoding="utf-8") as fh:
            fh.write(line)
    sys.stderr.write(f"paused at {line}")
    sys.stderr.flush()
    while True:
        time.sleep(3600)
