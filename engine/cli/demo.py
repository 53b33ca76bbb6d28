"""``lineup demo``: the headless demo (demo world, contact sheet, a progressive query chain)."""

from __future__ import annotations

import os

import typer

from engine.kernel import jsonio


def demo(
    rebuild: bool = typer.Option(False, "--rebuild", help="Build the demo world again even when cached."),
) -> None:
    """Build (once) and show the built-in demo: synthetic world, contact sheet, progressive descriptions."""
    import random

    from engine.kernel.progress import cli_progress
    from engine.lab.demo import DEMO_IDENTITIES, DEMO_IMAGES_PER_IDENTITY, DEMO_SEED, demo_world_dir, demo_world_ready
    from engine.lab.world.build import build_world
    from engine.lab.world.sheet import contact_sheet
    from engine.retrieval.text.generator import query_chain
    from engine.retrieval.text.parser import parse as parse_text

    world = demo_world_dir()
    if rebuild or not demo_world_ready(world):
        typer.echo(f"building the demo world in {world} (once; later runs reuse it)")
        with cli_progress("rendering demo world") as report:
            build_world(world, identities=DEMO_IDENTITIES, images_per_identity=DEMO_IMAGES_PER_IDENTITY,
                        seed=DEMO_SEED, workers=os.cpu_count() or 1, progress=report)
    sheet = contact_sheet(world / "contact_sheet.png", identities=6, seed=DEMO_SEED)
    typer.echo(f"demo world: {world}\ncontact sheet: {sheet}")
    with (world / "manifest.jsonl").open(encoding="utf-8") as manifest:
        first = jsonio.loads(manifest.readline(), f"{manifest.name} line 1", expect=dict)
    typer.echo(f"\nA progressive query chain for identity {first['identity']} and what the parser reads:")
    for step in query_chain(first["attributes"], random.Random(DEMO_SEED)):
        parsed = parse_text(step["text"])
        typer.echo(f"  [{parsed.level}] {step['text']}")
        typer.echo(f"        {parsed.count} attributes; add next: {', '.join(parsed.missing[:4]) or '-'}")


def add_to(app: typer.Typer) -> None:
    app.command("demo")(demo)
