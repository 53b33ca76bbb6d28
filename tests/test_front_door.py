"""One front door: ``lineup`` (and ``python -m lineup``) is the only command. ``lineup.cli`` builds the typer app
and adds the engine's commands to it explicitly (``engine.cli.register``): importing ``engine.cli`` makes no app
and adds no command anywhere; ``python -m engine.cli`` is gone; ``lineup app``'s options are declared once, as the
command's parameters, and ``app.launch`` only launches (docs/architecture.md)."""

from __future__ import annotations

import importlib.util
import inspect
import os
import subprocess
import sys
from pathlib import Path

import typer
from typer.testing import CliRunner

REPO = Path(__file__).resolve().parents[1]
ENGINE_COMMANDS = ["parse", "demo", "eval", "train", "ablate", "ingest", "detect", "search"]
ENGINE_GROUPS = ["world", "checkpoint", "gallery"]
LINEUP_COMMANDS = [*ENGINE_COMMANDS, "app", *ENGINE_GROUPS, "report", "key", "case"]


def _python(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200", HF_HUB_OFFLINE="1")
    return subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def _commands(app: typer.Typer) -> list[str]:
    return list(typer.main.get_command(app).list_commands(None))


def test_python_m_lineup_lists_every_command():
    run = _python("-m", "lineup", "--help")
    assert run.returncode == 0, run.stderr
    listed = [line.split()[1] for line in run.stdout.splitlines()
              if line.startswith("│ ") and len(line.split()) > 1 and line.split()[1] in LINEUP_COMMANDS]
    assert listed == LINEUP_COMMANDS


def test_the_lineup_app_holds_every_command_in_help_order():
    from lineup.cli import app, build_app

    assert _commands(app) == LINEUP_COMMANDS
    assert build_app() is not app and _commands(build_app()) == LINEUP_COMMANDS  # built, not accumulated


def test_importing_engine_cli_makes_no_app_and_registers_nothing():
    """Every module of ``engine.cli`` imported in a fresh interpreter: not one typer app exists."""
    script = ("import gc, importlib, pkgutil, typer, engine.cli\n"
              "for module in pkgutil.iter_modules(engine.cli.__path__):\n"
              "    importlib.import_module(f'engine.cli.{module.name}')\n"
              "print(sum(isinstance(o, typer.Typer) for o in gc.get_objects()))\n")
    run = _python("-c", script)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "0"


def test_register_adds_the_engine_commands_to_the_app_it_is_given():
    import engine.cli

    app = typer.Typer()
    engine.cli.register(app)
    assert _commands(app) == [*ENGINE_COMMANDS, *ENGINE_GROUPS]
    assert not hasattr(engine.cli, "app") and not hasattr(engine.cli, "main")


def test_python_m_engine_cli_is_gone():
    assert importlib.util.find_spec("engine.cli.__main__") is None
    run = _python("-m", "engine.cli", "--help")
    assert run.returncode != 0
    assert "cannot be directly executed" in run.stderr


def test_app_launch_is_no_second_front_door():
    from app import launch

    assert not hasattr(launch, "main")
    source = inspect.getsource(launch)
    assert "argparse" not in source and '__name__ == "__main__"' not in source
    run = _python("-m", "app.launch", "--help")
    assert run.returncode == 0 and run.stdout == ""  # nothing parses options there


def test_lineup_app_options_are_the_one_declaration_launch_takes():
    """``lineup app``'s parameters are exactly ``app.launch.launch``'s options, and its help shows them all."""
    from app.launch import launch
    from lineup.cli import app

    command = typer.main.get_command(app).get_command(None, "app")
    declared = {param.name: param for param in command.params}
    taken = [name for name in inspect.signature(launch).parameters if name != "argv"]
    assert sorted(declared) == sorted(taken)
    result = CliRunner().invoke(app, ["app", "--help"], env={"COLUMNS": "200"}, terminal_width=200)
    assert result.exit_code == 0
    assert all(param.opts[0] in result.output for param in declared.values())
