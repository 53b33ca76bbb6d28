"""``lineup eval``: evaluate a checkpoint on a world or a dataset."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from engine.cli.output import Failed
from engine.cli.output import fail as _fail
from engine.kernel.keep_rules import DEFAULT_RHO


def evaluate_command(
    checkpoint: Path = typer.Option(None, "--checkpoint", help="Checkpoint folder (default: the shipped one)."),
    world: Path = typer.Option(None, "--world", help="A built world folder (benchmarks built on demand)."),
    data: str = typer.Option(None, "--data", help="A real dataset as READER:PATH (cuhk-pedes:/data/CUHK-PEDES)."),
    protocol: str = typer.Option(
        ..., "--protocol", help="mg-separate | mg-progressive | modes | cross-res | anytime (world); t2i, reid, "
                                "sketch (data; sketch needs no checkpoint)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    level: str = typer.Option(None, "--level", help="auto | given (default: given on a world, auto on data)."),
    rho: float = typer.Option(DEFAULT_RHO, "--rho", help="Progressive keep rate: k = ceil(rho * |candidates|)."),
    batch: int = typer.Option(64, "--batch", min=1, help="Images or texts per model call."),
    device: str = typer.Option(None, "--device", help="cpu, cuda, cuda:1 ... (default: CUDA when available)."),
    out: Path = typer.Option(None, "--out", help="Also write the JSON report to this file."),
    texts: str = typer.Option("generated", "--texts",
                              help="mg-separate: generated | paraphrased (held-out words + hand-written) | both."),
    text_rewrite: float = typer.Option(None, "--text-rewrite",
                                       help="Weight 0–1 of each text query's rewrite in the generator's words "
                                            "(default: the checkpoint's; 0 = the text alone)."),
) -> None:
    """Evaluate a checkpoint: MG-Eval separate/progressive, query modes, cross-resolution, any-time, t2i, reid;
    sketch ranks PKU-Sketch's sketches by the shipped appearance network alone."""
    from engine.kernel.atomic import atomic_write_json
    from engine.kernel.progress import cli_progress
    from engine.lab.evaluation import evaluate, load_model, render
    from engine.lab.evaluation.api import CHECKPOINT_FREE, check_options, check_source, check_text_rewrite
    from engine.lab.evaluation.sources import read_dataset_spec
    from engine.retrieval.encoding.text_rewrite import checkpoint_rewrite_weight
    from engine.retrieval.evidence.ranking import checkpoint_attribute_weight

    if (world is None) == (data is None):
        _fail("give exactly one of --world DIR or --data READER:PATH")
    if data is not None and data.lower().startswith("world:"):
        world, data = Path(data.partition(":")[2]), None  # the training command's spelling of a world
    try:
        check_options(protocol, level, rho, batch, texts)
        check_source(protocol, on_world=world is not None)
        text_rewrite = check_text_rewrite(checkpoint_rewrite_weight(checkpoint) if text_rewrite is None
                                          else text_rewrite)
        source = world if world is not None else read_dataset_spec(data)
        if protocol in CHECKPOINT_FREE and checkpoint is not None:
            raise ValueError(f"protocol {protocol!r} ranks by the shipped appearance network; it takes no --checkpoint")
        model = None if protocol in CHECKPOINT_FREE else load_model(checkpoint, device=device)
        with cli_progress(f"encoding ({protocol})") as progress:
            report = evaluate(model, source, protocol, level=level, rho=rho, batch_size=batch, progress=progress,
                              texts=texts, text_rewrite=text_rewrite,
                              attribute_weight=checkpoint_attribute_weight(checkpoint, "footage"))
    except Failed:
        raise
    except (ValueError, OSError, RuntimeError) as exc:
        _fail(str(exc))
    if data is not None:
        report["source"]["data"] = data
    if protocol not in CHECKPOINT_FREE:
        report["checkpoint"] = str(checkpoint) if checkpoint is not None else "default"
    if out is not None:
        atomic_write_json(out, report, indent=2)
    if as_json:
        typer.echo(json.dumps(report))
    else:
        render(report)


def add_to(app: typer.Typer) -> None:
    app.command("eval")(evaluate_command)
