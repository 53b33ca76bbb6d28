"""The ``lineup`` command (typer). Each subcommand is a thin shell over an engine function."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import typer

os.environ.setdefault("HF_HUB_OFFLINE", "1")

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Lineup: progressive person search.")
world_app = typer.Typer(no_args_is_help=True, help="The synthetic pedestrian world: build, look, benchmark.")
app.add_typer(world_app, name="world")


def _fail(message: str) -> None:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code=2)


@app.command()
def parse(
    text: str = typer.Argument(..., help="A free-text description of a person."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Read the attributes a description states (18-attribute ontology) and its granularity level."""
    from engine.text.parser import parse as parse_text

    result = parse_text(text).to_dict()
    if as_json:
        typer.echo(json.dumps(result, ensure_ascii=False))
        return
    typer.echo(f"level: {result['level'] or '-'}  ({result['count']} attributes)")
    for key, value in result["attributes"].items():
        typer.echo(f"  {key:<15} {value}")
    if result["missing"]:
        typer.echo("add next: " + ", ".join(result["missing"][:6]))


@world_app.command("build")
def world_build(
    out: Path = typer.Option(..., "--out", help="Output folder (created)."),
    identities: int = typer.Option(100, "--identities", min=1),
    images_per_identity: int = typer.Option(10, "--images-per-identity", min=1),
    seed: int = typer.Option(0, "--seed"),
    workers: int = typer.Option(0, "--workers", help="Processes; 0 = all cores. Output does not depend on it."),
) -> None:
    """Render a synthetic world: images plus manifest.jsonl (one record per image)."""
    from engine.progress import cli_progress
    from engine.world.build import build_world

    try:
        with cli_progress("rendering") as report:
            manifest = build_world(out, identities=identities, images_per_identity=images_per_identity,
                                   seed=seed, workers=workers or (os.cpu_count() or 1), progress=report)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    typer.echo(f"wrote {manifest}")


@world_app.command("sheet")
def world_sheet(
    out: Path = typer.Option(..., "--out", help="PNG file to write."),
    identities: int = typer.Option(6, "--identities", min=1, max=32),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """Draw a contact sheet: identities × modalities × resolutions."""
    from engine.world.sheet import contact_sheet

    typer.echo(f"wrote {contact_sheet(out, identities=identities, seed=seed)}")


@world_app.command("benchmarks")
def world_benchmarks(
    world: Path = typer.Argument(..., help="A built world folder."),
    out: Path = typer.Option(None, "--out", help="Folder for the split files (default WORLD/benchmarks)."),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """Build the benchmark splits (granularity, modalities, cross-res, any-time) from a world."""
    from engine.world.benchmarks import build_benchmarks

    try:
        summary = build_benchmarks(world, out, seed=seed)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    typer.echo(json.dumps(summary, indent=2))


@world_app.command("export")
def world_export(
    world: Path = typer.Argument(..., help="A built world folder."),
    out: Path = typer.Option(..., "--out", help="JSON file in the CUHK-PEDES layout."),
) -> None:
    """Export a world's RGB images and descriptions in the CUHK-PEDES json layout."""
    from engine.data.export import export_cuhk_pedes

    try:
        n = export_cuhk_pedes(world, out)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    typer.echo(f"wrote {n} records to {out}")


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
