"""The PDF drawn in a child process, so that a window exporting it never waits for it.

Laying out and painting a long report (a case of fifty steps: some thirty pages) are single calls into Qt's text
engine of 100–600 ms each, during which the calling thread holds Python's interpreter lock: run on a worker
thread of the app, they would stall the window's event loop for as long. ``render_pdf_apart`` runs
``app.report.pdf.render_pdf`` in a fresh ("spawn") process instead, on Qt's ``offscreen`` platform, and waits for
it on a pipe (which lets the lock go). The child relays each progress report; the parent passes it on to
``progress``, which may raise to stop: the child is then ended before the exception goes on, so the caller can
remove the partial file.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from pathlib import Path

from app.report.content import ReportContent
from app.report.errors import ReportError

POLL_SECONDS = 0.05
STOP_SECONDS = 5.0


def _child(content: ReportContent, path: str, conn) -> None:
    """In the child: draw the PDF, sending ("progress", done, total, message)…, then ("done", pages) or
    ("error", kind, message)."""
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    try:
        from app.report.pdf import render_pdf

        pages = render_pdf(content, path, progress=lambda done, total, message: conn.send(
            ("progress", done, total, message)))
        conn.send(("done", pages))
    except Exception as exc:  # every failure goes back to the parent, which raises it there
        conn.send(("error", "os" if isinstance(exc, OSError) else "report", str(exc) or type(exc).__name__))
    finally:
        conn.close()


def render_pdf_apart(content: ReportContent, path: str | Path, *,
                     progress: Callable[[int, int, str], None] | None = None) -> int:
    """``render_pdf(content, path, progress=progress)`` in a child process; returns the number of pages.
    A failure in the child is raised here (``OSError`` for a file that cannot be written, else
    ``ReportError``)."""
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(content, str(path), sender), name="lineup-report-pdf",
                            daemon=True)
    child.start()
    sender.close()
    finished = False
    try:
        while True:
            if not receiver.poll(POLL_SECONDS):
                if not child.is_alive() and not receiver.poll(0):
                    raise ReportError(f"the PDF writer stopped unexpectedly (exit code {child.exitcode}) while "
                                      f"writing {path}")
                continue
            try:
                kind, *values = receiver.recv()
            except EOFError:
                raise ReportError(f"the PDF writer stopped unexpectedly while writing {path}") from None
            if kind == "progress":
                if progress is not None:
                    progress(*values)
            elif kind == "done":
                finished = True
                return int(values[0])
            else:
                error, message = values
                raise (OSError if error == "os" else ReportError)(message)
    finally:
        if finished:
            child.join(STOP_SECONDS)  # it is closing its end of the pipe
        if child.is_alive():
            child.terminate()
            child.join(STOP_SECONDS)
        receiver.close()
