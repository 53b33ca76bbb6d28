"""``Events``: how the plain parts of the app's state say what changed (docs/architecture.md: state in plain
objects that emit changes; widgets subscribe).

A part fires ``emit(name, *args)``; every callback connected with ``connect`` is called with the same
arguments, in the order they were connected. The names are those of ``AppState``'s signals
(``"case_changed"``, ``"marks_changed"``, ``"error"``, …); an ``"error"`` carries a message or the exception
that caused it. ``AppState`` connects one callback that re-emits each event as its Qt signal, so the parts
themselves import no Qt and can be driven and watched from plain Python.
"""

from __future__ import annotations

from collections.abc import Callable

Callback = Callable[..., object]


class Events:
    """See the module docstring."""

    def __init__(self) -> None:
        self._callbacks: list[Callback] = []

    def connect(self, callback: Callback) -> None:
        """Call ``callback(name, *args)`` for every event from now on."""
        self._callbacks.append(callback)

    def emit(self, name: str, *args: object) -> None:
        for callback in list(self._callbacks):
            callback(name, *args)
