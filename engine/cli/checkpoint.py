"""``lineup checkpoint``: look at a checkpoint (config, components, evaluation) and export one."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from engine.cli.output import fail as _fail
from engine.kernel import jsonio


def checkpoint_info(
    path: Path = typer.Argument(None, help="Checkpoint folder (default: the shipped one)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Config, size, fingerprint, training command, evaluation report, the query weights it records (attribute
    weight per gallery domain, text rewrite weight) and the papers' components of a checkpoint (which are on, which
    off, and the reason the export recorded for each)."""
    from engine.retrieval.encoding.text_rewrite import checkpoint_rewrite_weight
    from engine.retrieval.evidence.ranking import DomainWeights
    from engine.retrieval.models import load, model_fingerprint, read_metadata
    from engine.retrieval.models.components import components
    from engine.retrieval.models.discovery import default_checkpoint

    try:
        folder = default_checkpoint() if path is None else path
        model = load(folder, device="cpu")
        metadata = read_metadata(folder)
        attribute_weights = dict(DomainWeights.of_checkpoint(folder).weights)
        text_rewrite = checkpoint_rewrite_weight(folder)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    data = metadata.get("data_fingerprint")
    note = metadata.get("components") if isinstance(metadata.get("components"), dict) else {}
    note = {key: value for key, value in note.items() if isinstance(value, dict)}  # ignore a malformed part
    info = {"path": str(folder), "config": model.config.name, "parameters": metadata.get("parameters"),
            "weights_dtype": metadata.get("weights_dtype", "float32"), "fingerprint": model_fingerprint(model),
            "training_command": metadata.get("training_command"), "resumed_with": metadata.get("resumed_with") or [],
            "eval_report": metadata.get("eval_report"),
            "world": data.get("world") if isinstance(data, dict) else None,
            "attribute_weights": attribute_weights, "text_rewrite_weight": text_rewrite,
            "components": components(model.config, {**note.get("off", {}), **note.get("why_on", {})})}
    if as_json:
        typer.echo(json.dumps(info))
        return
    for key, value in info.items():
        if key != "components":
            typer.echo(f"{key:>16}: {value}")
    typer.echo("      components:")
    for row in info["components"]:
        state = "on " if row["on"] else "off"
        typer.echo(f"    {state} {row['paper']:<9} {row['name']:<15} {row['what']}")
        if row["on"] and row["why_on"]:
            typer.echo(f"{'':>34}why: {row['why_on']}")
        elif not row["on"]:
            typer.echo(f"{'':>34}why: {row['why_off'] or 'not recorded (checkpoint export --components FILE)'}")


def checkpoint_export(
    source: Path = typer.Argument(..., help="Checkpoint folder to copy (e.g. RUN/model)."),
    destination: Path = typer.Argument(..., help="Where to write the copy (replaced atomically)."),
    fp16: bool = typer.Option(False, "--fp16", help="Store floating-point weights in float16 (half the size)."),
    eval_report: str = typer.Option(None, "--eval-report", help="Record this evaluation report path."),
    components_file: Path = typer.Option(None, "--components",
                                         help="JSON: component name → why it is off; recorded as the "
                                              "checkpoint's components note."),
) -> None:
    """Copy a checkpoint (e.g. to ship it), optionally with fp16 weights; metadata is kept."""
    import torch

    from engine.retrieval.models import load
    from engine.retrieval.models.checkpoint import export_checkpoint
    from engine.retrieval.models.components import component_note

    extra = {} if eval_report is None else {"eval_report": eval_report}
    try:
        if components_file is not None:
            try:
                reasons = jsonio.read(components_file)
            except jsonio.JsonInputError as exc:  # "FILE: not valid JSON (...)", or too deep, too large
                raise ValueError(str(exc)) from None
            config = load(source, device="cpu").config
            extra["components"] = component_note(config, reasons, str(components_file))
        out = export_checkpoint(source, destination, weights_dtype=torch.float16 if fp16 else None,
                                extra_metadata=extra)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    size = sum(f.stat().st_size for f in out.iterdir())
    typer.echo(f"checkpoint written to {out} ({size / 1e6:.1f} MB)")


def add_to(app: typer.Typer) -> None:
    group = typer.Typer(no_args_is_help=True, help="Model checkpoints: look, export.")
    group.command("info")(checkpoint_info)
    group.command("export")(checkpoint_export)
    app.add_typer(group, name="checkpoint")
