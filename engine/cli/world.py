"""``lineup world``: build, look at, benchmark and export the synthetic pedestrian world."""

from __future__ import annotations

import json
import os
from pathlib import Path

import typer

from engine.cli.output import fail as _fail


def world_build(
    out: Path = typer.Option(..., "--out", help="Output folder (created)."),
    identities: int = typer.Option(100, "--identities", min=1),
    images_per_identity: int = typer.Option(10, "--images-per-identity", min=2),
    seed: int = typer.Option(0, "--seed"),
    workers: int = typer.Option(0, "--workers", help="Processes; 0 = all cores. Output does not depend on it."),
    palette: str = typer.Option("reference", "--palette",
                                help="How colour names become shades: reference (one colour a name) or wide "
                                     "(any shade the pixel reader gives the name)."),
) -> None:
    """Render a synthetic world: images plus manifest.jsonl (one record per image)."""
    from engine.kernel.progress import cli_progress
    from engine.lab.world.build import build_world

    try:
        with cli_progress("rendering") as report:
            manifest = build_world(out, identities=identities, images_per_identity=images_per_identity,
                                   seed=seed, workers=workers or (os.cpu_count() or 1), progress=report,
                                   palette=palette)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    typer.echo(f"wrote {manifest}")


def world_sheet(
    out: Path = typer.Option(..., "--out", help="PNG file to write."),
    identities: int = typer.Option(6, "--identities", min=1, max=32),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """Draw a contact sheet: identities × modalities × resolutions."""
    from engine.lab.world.sheet import contact_sheet

    try:
        sheet = contact_sheet(out, identities=identities, seed=seed)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    typer.echo(f"wrote {sheet}")


def world_benchmarks(
    world: Path = typer.Argument(..., help="A built world folder."),
    out: Path = typer.Option(None, "--out", help="Folder for the split files (default WORLD/benchmarks)."),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """Build the benchmark splits (granularity, modalities, cross-res, any-time) from a world."""
    from engine.lab.world.benchmarks import build_benchmarks

    try:
        summary = build_benchmarks(world, out, seed=seed)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    typer.echo(json.dumps(summary, indent=2))


def world_export(
    world: Path = typer.Argument(..., help="A built world folder."),
    out: Path = typer.Option(..., "--out", help="JSON file in the CUHK-PEDES layout."),
) -> None:
    """Export a world's RGB images and descriptions in the CUHK-PEDES json layout."""
    from engine.lab.data.export import export_cuhk_pedes

    try:
        n = export_cuhk_pedes(world, out)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    typer.echo(f"wrote {n} records to {out}")


def add_to(app: typer.Typer) -> None:
    group = typer.Typer(no_args_is_help=True, help="The synthetic pedestrian world: build, look, benchmark.")
    group.command("build")(world_build)
    group.command("sheet")(world_sheet)
    group.command("benchmarks")(world_benchmarks)
    group.command("export")(world_export)
    app.add_typer(group, name="world")
