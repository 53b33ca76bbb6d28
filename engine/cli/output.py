"""How the engine's commands end on bad input: the message in red on stderr, exit code 2 (one line, never a
traceback).

``typer.Exit`` is a ``RuntimeError``: a command that catches ``RuntimeError`` around code that may already
have failed puts ``except Failed: raise`` first, so the first message is the only one."""

from __future__ import annotations

import typer


class Failed(typer.Exit):
    """The exit ``fail`` raises: its message is already on stderr."""


def fail(message: str) -> None:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    raise Failed(code=2)
