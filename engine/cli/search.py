"""``lineup search``: progressive search of a gallery folder, planned or at a prompt (``search_console``)."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path

import typer

from engine.cli.output import Failed
from engine.cli.output import fail as _fail
from engine.kernel.keep_rules import DEFAULT_RHO
from engine.kernel.witness_prior import ORDINARY, load_prior

#: ``--witness-saw``'s choices: the witness prior's viewing conditions, read from its data
WitnessSaw = Enum("WitnessSaw", {name: name for name in load_prior().choices}, type=str)


def search_command(
    gallery: Path = typer.Option(..., "--gallery", help="Gallery folder (made by `lineup ingest`)."),
    text: str = typer.Option(None, "--text", help="First step: a description (fused with --sketch / --ir)."),
    then: list[str] = typer.Option(None, "--then", help="A further text step on the survivors (repeatable)."),
    sketch: Path = typer.Option(None, "--sketch", help="Sketch image for the first step."),
    ir: Path = typer.Option(None, "--ir", help="Infrared image for the first step."),
    similar: str = typer.Option(None, "--similar", help="First step: find items similar to this gallery item."),
    outfit_changed: bool = typer.Option(False, "--outfit-changed",
                                        help="With --similar: the person may have changed clothes (adds the "
                                             "biometric likeness the model's heads read)."),
    keep: str = typer.Option(None, "--keep", help="Per step: a fraction rho (keep ceil(rho*n); default "
                                                   f"{DEFAULT_RHO:g}) or a whole number k (keep k)."),
    threshold: float = typer.Option(None, "--threshold", help="Per step: keep the items scoring at least this."),
    level: str = typer.Option(None, "--level", help="UC|C|M|F|UF fixes every text step's level; parser "
                                                    "(default) or classifier says how to read it."),
    camera: list[str] = typer.Option(None, "--camera", help="Only items of this camera (repeatable)."),
    after: str = typer.Option(None, "--after", help="Only items at or after this time (ISO 8601 or seconds)."),
    before: str = typer.Option(None, "--before", help="Only items at or before this time (ISO 8601 or seconds)."),
    checkpoint: Path = typer.Option(None, "--checkpoint", help="Checkpoint folder (default: the shipped one)."),
    device: str = typer.Option(None, "--device", help="cpu, cuda, cuda:1 ... (default: CUDA when available)."),
    top: int = typer.Option(10, "--top", min=1, help="Items shown per step and in the final ranking."),
    attribute_weight: float = typer.Option(None, "--attribute-weight",
                                           help="w in score = similarity + w·attribute agreement (default: the "
                                                "checkpoint's; 0 = similarity only)."),
    require: list[str] = typer.Option(None, "--require", help="An attribute key the query states that candidates "
                                                              "must not contradict, e.g. top_color (repeatable)."),
    witness_saw: WitnessSaw = typer.Option(ORDINARY, "--witness-saw",
                                           help="How the witness saw the person (resources/witness_prior.json): "
                                                "ranks the next questions by what such a witness can tell."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (one per line at the prompt)."),
    interactive: bool = typer.Option(False, "--interactive", help="Read steps and :commands from a prompt."),
) -> None:
    """Progressive search: each step ranks the survivors of the last and keeps the best (--interactive: a prompt;
    :help there lists its commands)."""
    from engine.cli.search_console import Prompt, SearchOptions, prepare, report_lines, run_planned

    options = SearchOptions(gallery=gallery, text=text, then=tuple(then or ()), sketch=sketch, ir=ir,
                            similar=similar, outfit_changed=outfit_changed, keep=keep,
                            threshold=threshold, level=level, cameras=tuple(camera or ()), after=after,
                            before=before, checkpoint=checkpoint, device=device, top=top, as_json=as_json,
                            interactive=interactive, attribute_weight=attribute_weight,
                            require=tuple(require or ()), witness_saw=WitnessSaw(witness_saw).value)
    try:
        search = prepare(options)
        if not interactive:
            report = run_planned(search)
    except Failed:
        raise
    except (ValueError, OSError, RuntimeError) as exc:
        _fail(str(exc))
    if interactive:
        stdin = typer.get_text_stream("stdin")

        def lines():
            while True:
                if stdin.isatty():
                    typer.echo("search> ", nl=False, err=True)
                line = stdin.readline()
                if not line:
                    return
                yield line

        Prompt(search, typer.echo, lambda message: typer.secho(message, fg=typer.colors.RED, err=True)).run(lines())
    elif as_json:
        typer.echo(json.dumps(report, ensure_ascii=False))
    else:
        typer.echo("\n".join(report_lines(report, len(search.gallery))))


def add_to(app: typer.Typer) -> None:
    app.command("search")(search_command)
