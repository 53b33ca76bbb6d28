"""``lineup train``: train (or resume) a model."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from engine.cli.output import fail as _fail


def train_command(
    config: str = typer.Option("default", "--config",
                               help="Model config name (resources/configs), a config JSON path, or a run file."),
    data: str = typer.Option(..., "--data", help="READER:PATH, e.g. world:/tmp/world or cuhk-pedes:/data/CUHK-PEDES."),
    out: Path = typer.Option(..., "--out", help="Run folder: model/ checkpoint, training state, log.jsonl."),
    resume: bool = typer.Option(False, "--resume", help="Continue the run in --out from its saved state."),
    epochs: int = typer.Option(None, "--epochs", min=1, help="Override the training epochs."),
    max_minutes: float = typer.Option(None, "--max-minutes", min=0.0,
                                      help="Stop cleanly (checkpoint written) after this many minutes."),
    seed: int = typer.Option(0, "--seed"),
    device: str = typer.Option(None, "--device", help="cpu, cuda or cuda:N (default: CUDA when available)."),
    init: Path = typer.Option(None, "--init", help="Warm start a new run from this checkpoint's matching weights."),
) -> None:
    """Train (or resume) a model on a world or a dataset; writes a checkpoint and a learning curve."""
    from engine.kernel.progress import cli_progress
    from engine.lab.train import (
        RunFolderError,
        TrainConfigError,
        Trainer,
        TrainingDataError,
        TrainingError,
        TrainOptions,
    )
    from engine.retrieval.models import ConfigError

    options = TrainOptions(config=config, data=data, out=out, resume=resume, epochs=epochs,
                           max_minutes=max_minutes, seed=seed, device=device, command=" ".join(sys.argv),
                           init=init)
    import time

    started = time.monotonic()
    try:
        with cli_progress("decoding images") as report:
            trainer = Trainer.prepare(options, progress=report, echo=typer.echo)
        with cli_progress("training") as report:
            result = trainer.run(progress=report, started=started)
    except (TrainConfigError, ConfigError, TrainingDataError, RunFolderError, TrainingError) as exc:
        _fail(str(exc))
    except (ValueError, OSError) as exc:
        _fail(f"{type(exc).__name__}: {exc}")
    typer.echo(f"{result.status}: {result.epoch} epochs, {result.global_step} steps; "
               f"checkpoint {result.model_dir}; learning curve {result.out / 'log.jsonl'}")


def add_to(app: typer.Typer) -> None:
    app.command("train")(train_command)
