"""``lineup parse``: what the parser reads in a description."""

from __future__ import annotations

import json

import typer


def parse(
    text: str = typer.Argument(..., help="A free-text description of a person."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Read the attributes a description states (18-attribute ontology), its granularity level, and its
    rewrite in the generator's words (what a checkpoint with a text rewrite weight also encodes)."""
    from engine.retrieval.text.parser import parse as parse_text
    from engine.retrieval.text.rewrite import canonical_text

    result = {**parse_text(text).to_dict(), "rewrite": canonical_text(text)}
    if as_json:
        typer.echo(json.dumps(result, ensure_ascii=False))
        return
    typer.echo(f"level: {result['level'] or '-'}  ({result['count']} attributes)")
    for key, value in result["attributes"].items():
        typer.echo(f"  {key:<15} {value}")
    if result["missing"]:
        typer.echo("add next: " + ", ".join(result["missing"][:6]))
    if result["rewrite"]:
        typer.echo(f"rewrite: {result['rewrite']}")


def add_to(app: typer.Typer) -> None:
    app.command("parse")(parse)
