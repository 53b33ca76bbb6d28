"""Progress reporting: engine functions take ``progress(done, total)``; the CLI renders it with rich."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

ProgressFn = Callable[[int, int], None]


def no_progress(done: int, total: int) -> None:
    """A progress callback that ignores its input."""


@contextmanager
def cli_progress(label: str) -> Iterator[ProgressFn]:
    """A rich progress bar with ETA on stderr, driven by ``progress(done, total)`` calls."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("eta"), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=False) as bar:
        task = bar.add_task(label, total=None)

        def report(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield report
