"""``lineup ingest``: footage, crop folders or a built world into a gallery folder."""

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


def ingest_command(
    sources: list[Path] = typer.Argument(..., metavar="SOURCES",
                                         help="Videos, image folders, built worlds, or folders holding them."),
    gallery: Path = typer.Option(..., "--gallery", help="Gallery folder (created when absent or empty)."),
    checkpoint: Path = typer.Option(None, "--checkpoint", help="Checkpoint folder (default: the shipped one)."),
    detector: str = typer.Option("auto", "--detector", help=DETECTOR_HELP),
    onnx_layout: str = typer.Option("yolo", "--onnx-layout", help=ONNX_LAYOUT_HELP),
    onnx_size: str = typer.Option(None, "--onnx-size", help=ONNX_SIZE_HELP),
    person_class: int = typer.Option(0, "--person-class", min=0, help="ONNX class index of 'person'."),
    min_score: float = typer.Option(None, "--min-score", help=MIN_SCORE_HELP),
    min_person_height: float = typer.Option(64.0, "--min-person-height", min=1.0,
                                            help="--detector hog: smallest person (px) to find; frames are "
                                                 "upscaled for it."),
    hog_threshold: float = typer.Option(0.0, "--hog-threshold",
                                        help="--detector hog: SVM margin threshold (lower finds more, with more "
                                             "false alarms)."),
    stride: int = typer.Option(1, "--stride", min=1, help="Read every STRIDE-th frame (or image)."),
    samples_per_track: int = typer.Option(3, "--samples-per-track", min=1, help="Crops kept per track."),
    track: bool = typer.Option(True, "--track/--no-track", help="Track people, or keep every detection."),
    min_box_height: float = typer.Option(24.0, "--min-box-height", min=1.0, help="Drop shorter detections (px)."),
    camera: str = typer.Option(None, "--camera", help="Camera name for every source (overrides file names)."),
    start: str = typer.Option(None, "--start", help="Start time of the videos: ISO 8601 or POSIX seconds."),
    modality: str = typer.Option("auto", "--modality", help="auto | rgb | ir (auto: grey footage is ir)."),
    reid: str = typer.Option("AD-LT", "--reid", help="Re-id views: scenarios (comma-separated), all or none."),
    batch: int = typer.Option(32, "--batch", min=1, help="Crops per model call and gallery commit."),
    device: str = typer.Option(None, "--device", help="cpu, cuda, cuda:1 ... (default: CUDA when available)."),
    force: bool = typer.Option(False, "--force", help="Read sources again although they are marked done."),
    crops: bool = typer.Option(False, "--crops", help="SOURCE is a folder of person crops: every image is one "
                                                      "person (no detector, no tracker)."),
    appearance: str = typer.Option("auto", "--appearance",
                                   help="The gallery view 'appearance', searched by find-similar: auto (a new gallery "
                                        "of footage or crops gets the shipped 'balanced' re-identification network, "
                                        "one of built worlds none), none, fast, balanced, accurate, or your own "
                                        "network (.onnx, [B,3,H,W] → [B,D])."),
    appearance_norm: str = typer.Option("imagenet", "--appearance-norm",
                                        help="--appearance input normalisation: imagenet (RGB, /255, ImageNet "
                                             "mean/std) or 'order=rgb|bgr;divide=255;mean=a,b,c;std=a,b,c'."),
    tiles: str = typer.Option(None, "--tiles", help=TILES_HELP),
    workers: int = typer.Option(None, "--workers", min=1,
                                help="Read the sources in N Ray workers (a local Ray; needs the cluster extra: "
                                     "pip install 'lineup[cluster]'); 1 (default): in this process. "
                                     "docs/scaling.md."),
    ray_address: str = typer.Option(None, "--ray", help="Join the Ray cluster at ADDRESS (e.g. ray://head:10001 or "
                                                        "head:6379) and read the sources on its workers (--workers "
                                                        "of them, default one per CPU)."),
    world_shard: int = typer.Option(256, "--world-shard", min=1,
                                    help="With --workers or --ray: images of a built world per work unit."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
) -> None:
    """Ingest footage (videos, image folders), a folder of person crops (--crops) or a built world into a gallery
    folder; resumable."""
    from contextlib import ExitStack
    from functools import partial

    from engine.index import writing
    from engine.ingest import IngestOptions, ingest
    from engine.ingest.timing import parse_time
    from engine.kernel.progress import cli_progress
    from engine.perception.detection.tiles import parse_tiles
    from engine.retrieval.evidence.ranking import DomainWeights

    on_ray = ray_address is not None or (workers is not None and workers > 1)
    try:
        if on_ray:  # before anything is read or locked: without Ray the command says how to get it
            from engine.ingest.ray_session import require_ray

            require_ray("lineup ingest --workers N (N > 1) or --ray")
        with ExitStack() as lock:
            if gallery.is_dir():  # a second writer is refused at once, before the model loads
                lock.enter_context(writing(gallery))
            user_network = appearance.lower().endswith(".onnx")
            person_detector = None  # auto: ingest picks per source (YOLOX-Nano, with a background model for videos)
            detector_args = (detector, onnx_layout, onnx_size, person_class, min_score, min_person_height,
                             hog_threshold, tiles)
            if detector != "auto" or min_score is not None:
                person_detector = detector_from_options(*detector_args)
            elif tiles is not None:
                parse_tiles(tiles)
            options = IngestOptions(stride=stride, samples_per_track=samples_per_track, track=track,
                                    min_box_height=min_box_height, camera=camera,
                                    start=None if start is None else parse_time(start, "--start"),
                                    modality=modality, batch_size=batch, force=force, crops=crops,
                                    tiles=None if person_detector is not None else tiles,
                                    appearance="auto" if user_network else appearance)
            make_encoder = partial(build_encoder, checkpoint, device, reid, appearance if user_network else None,
                                   appearance_norm)
            encoder = None if on_ray else make_encoder()  # on Ray: built by the writer and by every worker
            with cli_progress("ingesting frames") as report:
                if on_ray:
                    from engine.ingest.cluster import ingest_on_ray

                    summary = ingest_on_ray(sources, gallery, make_encoder,
                                            None if person_detector is None else partial(detector_from_options,
                                                                                         *detector_args),
                                            options, workers=workers, address=ray_address, progress=report,
                                            weights=DomainWeights.of_checkpoint(checkpoint), world_shard=world_shard)
                else:
                    summary = ingest(sources, gallery, encoder, person_detector, options, progress=report,
                                     weights=DomainWeights.of_checkpoint(checkpoint))
    except Failed:
        raise
    except (ValueError, OSError, RuntimeError) as exc:
        _fail(str(exc))
    if as_json:
        typer.echo(json.dumps(summary.to_dict()))
    else:
        typer.echo("\n".join(summary.lines()))
    totals = summary.totals()
    if totals["sources_read"] + totals["sources_done_before"] == 0:
        raise typer.Exit(code=1)


def build_encoder(checkpoint: Path | None, device: str | None, reid: str, network: str | None,
                  normalisation: str):
    """The encoder of ``lineup ingest``: the checkpoint's views (re-identification scenarios ``reid``) and, with
    ``network`` (a user's ``.onnx`` file), its appearance views. Module-level, so that Ray workers can build it."""
    from engine.ingest import ModelEncoder, parse_scenarios
    from engine.retrieval.models.discovery import load_model

    encoder = ModelEncoder(load_model(checkpoint, device=device), reid_scenarios=parse_scenarios(reid))
    if network is None:
        return encoder
    from engine.ingest.appearance import WithAppearance
    from engine.perception.appearance import appearance_network, parse_normalisation

    return WithAppearance(encoder, appearance_network(network, parse_normalisation(normalisation)))


def add_to(app: typer.Typer) -> None:
    app.command("ingest")(ingest_command)
