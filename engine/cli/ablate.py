"""``lineup ablate``: train and evaluate every row of an ablation plan."""

from __future__ import annotations

from pathlib import Path

import typer

from engine.cli.output import Failed
from engine.cli.output import fail as _fail


def _seed_list(text: str) -> list[int]:
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        _fail(f"--seeds: expected comma-separated integers, got {text!r}")
    if not seeds:
        _fail("--seeds: give at least one seed")
    return seeds


def ablate_command(
    plan: str = typer.Option(..., "--plan", help="Plan name (resources/ablations) or a plan JSON path."),
    data: str = typer.Option(..., "--data", help="Training data as READER:PATH (world:/tmp/trainworld)."),
    world: Path = typer.Option(..., "--world", help="The unseen world every row is evaluated on."),
    out: Path = typer.Option(..., "--out", help="Folder: one run per row, table.json and table.md."),
    only: list[str] = typer.Option(None, "--row", help="Run only this row (repeatable)."),
    init: Path = typer.Option(None, "--init", help="The checkpoint every row starts from (plans with init)."),
    seed: int = typer.Option(0, "--seed"),
    seeds: str = typer.Option(None, "--seeds", help="Comma-separated seeds: every row once per seed; the table "
                              "gives means and 95 % intervals (replaces --seed)."),
    device: str = typer.Option(None, "--device", help="cpu, cuda or cuda:N (default: CUDA when available)."),
    threads: int = typer.Option(None, "--threads", help="CPU threads per run (default: every core); with "
                                "several processes sharing one plan, cores ÷ processes."),
) -> None:
    """Train and evaluate every row of an ablation plan at one budget; resumable; writes a table. Several
    processes can share one --out: each skips the row and seed another is training."""
    from engine.kernel.progress import cli_progress
    from engine.lab.train.ablation import load_plan, render_markdown, run_ablation

    try:
        loaded = load_plan(plan)
        seed_list = _seed_list(seeds) if seeds is not None else None
        with cli_progress(f"ablation {loaded.name}") as report:
            table = run_ablation(loaded, data, world, out, seed=seed, init=init, device=device, only=only or None,
                                 seeds=seed_list, threads=threads, echo=typer.echo, progress=report)
    except Failed:
        raise
    except (ValueError, OSError, RuntimeError) as exc:
        _fail(str(exc))
    typer.echo(render_markdown(table))


def add_to(app: typer.Typer) -> None:
    app.command("ablate")(ablate_command)
