"""``lineup detect``: the people in every frame of footage, without a gallery."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from engine.cli.detector_options import (
    DETECTOR_HELP,
    MIN_SCORE_HELP,
    ONNX_LAYOUT_HELP,
    ONNX_SIZE_HELP,
    TILES_HELP,
    detector_from_options,
)
from engine.cli.output import Failed
from engine.cli.output import fail as _fail


def detect_command(
    source: Path = typer.Argument(..., help="A video (GIFs too), an image folder, or a folder holding them."),
    detector: str = typer.Option("auto", "--detector", help=DETECTOR_HELP),
    stride: int = typer.Option(1, "--stride", min=1, help="Read every STRIDE-th frame (or image)."),
    tiles: str = typer.Option(None, "--tiles", help=TILES_HELP),
    min_score: float = typer.Option(None, "--min-score", help=MIN_SCORE_HELP),
    onnx_layout: str = typer.Option("yolo", "--onnx-layout", help=ONNX_LAYOUT_HELP),
    onnx_size: str = typer.Option(None, "--onnx-size", help=ONNX_SIZE_HELP),
    person_class: int = typer.Option(0, "--person-class", min=0, help="ONNX class index of 'person'."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object: source, detector, frames."),
) -> None:
    """Find the people (and carried bags) in every frame of footage, without building a gallery."""
    from engine.ingest.detect import detect_frames
    from engine.kernel.progress import cli_progress

    def warn(path: str, message: str) -> None:
        typer.secho(f"warning: {path}: {message}", fg=typer.colors.YELLOW, err=True)

    try:
        person_detector = detector_from_options(detector, onnx_layout, onnx_size, person_class, min_score, tiles=tiles)
        frames = []
        with cli_progress("detecting") as report:
            for record in detect_frames(source, person_detector, stride, progress=report, on_warning=warn):
                frames.append(record)
                if not as_json:
                    found = ", ".join(f"{b['score']:.2f}@{b['box']}" for b in record["boxes"])
                    carried = f"; carried {[o['kind'] for o in record['objects']]}" if record["objects"] else ""
                    where = f"{record['file']} " if record["file"] else ""
                    typer.echo(f"frame {record['frame']} {where}{len(record['boxes'])} people {found}{carried}")
    except Failed:
        raise
    except (ValueError, OSError, RuntimeError) as exc:
        _fail(str(exc))
    if as_json:
        typer.echo(json.dumps({"source": str(source), "detector": person_detector.settings(), "frames": frames}))
    else:
        people = sum(len(r["boxes"]) for r in frames)
        typer.echo(f"{len(frames)} frames, {people} person boxes ({person_detector.name})")
    if not frames:
        raise typer.Exit(code=1)


def add_to(app: typer.Typer) -> None:
    app.command("detect")(detect_command)
