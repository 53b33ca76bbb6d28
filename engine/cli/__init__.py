"""The engine's commands of ``lineup`` (typer), one module per command or command group; each command is a thin
shell over an engine function. Importing this package makes no app and adds no command anywhere: ``register``
adds them to the app that ``lineup.cli`` builds (with the commands that need the desktop app's code, which sit
above both layers; docs/architecture.md)."""

from __future__ import annotations

import os

import typer

from engine.cli import ablate, checkpoint, demo, detect, evaluate, gallery, ingest, parse, search, train, world

os.environ.setdefault("HF_HUB_OFFLINE", "1")

COMMANDS = (parse, demo, evaluate, train, ablate, ingest, detect, search)
"""The modules of the single commands, in the order ``lineup --help`` lists them."""

GROUPS = (world, checkpoint, gallery)
"""The modules of the command groups, in the order ``lineup --help`` lists them (after the single commands)."""


def register(app: typer.Typer) -> None:
    """Add every engine command and command group to ``app``."""
    for module in (*COMMANDS, *GROUPS):
        module.add_to(app)
