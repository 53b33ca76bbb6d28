"""How the engine's commands end on bad input: the message in red on stderr, exit code 2."""

from __future__ import annotations

import typer


def fail(message: str) -> None:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code=2)
