"""The engine's commands of ``lineup`` (typer). Each subcommand is a thin shell over an engine function; the
commands that need the desktop app are added above both layers, in ``lineup.cli``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import typer

from engine.cli.checkpoint import checkpoint_app
from engine.cli.gallery import gallery_app
from engine.cli.output import Failed
from engine.cli.output import fail as _fail
from engine.cli.world import world_app
from engine.kernel import jsonio
from engine.kernel.keep_rules import DEFAULT_RHO

os.environ.setdefault("HF_HUB_OFFLINE", "1")

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Lineup: progressive person search.")
app.add_typer(world_app, name="world")


@app.command()
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


@app.command()
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


@app.command("eval")
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


@app.command("train")
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


def _seed_list(text: str) -> list[int]:
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        _fail(f"--seeds: expected comma-separated integers, got {text!r}")
    if not seeds:
        _fail("--seeds: give at least one seed")
    return seeds


@app.command("ablate")
def ablate_command(
    plan: str = typer.Option(..., "--plan", help="Plan name (resources/ablations) or a plan JSON path."),
    data: str = typer.Option(..., "--data", help="Training data as READER:PATH (world:/tmp/trainworld)."),
    world: Path = typer.Option(..., "--world", help="The unseen world every row is evaluated on."),
    out: Path = typer.Option(..., "--out", help="Folder: one run per row, table.json and table.md."),
    only: list[str] = typer.Option(None, "--row", help="Run only this row (repeatable)."),
    init: Path = typer.Option(None, "--init", help="The checkpoint every row starts from (plans with init)."),
    seed: int = typer.Option(0, "--seed"),
    seeds: str = typer.Option(None, "--seeds", help="Comma-separated seeds: every row once per seed; the table "
                              "gives means and 95 % intervals (replaces --seed)."),
    device: str = typer.Option(None, "--device", help="cpu, cuda or cuda:N (default: CUDA when available)."),
    threads: int = typer.Option(None, "--threads", help="CPU threads per run (default: every core); with "
                                "several processes sharing one plan, cores ÷ processes."),
) -> None:
    """Train and evaluate every row of an ablation plan at one budget; resumable; writes a table. Several
    processes can share one --out: each skips the row and seed another is training."""
    from engine.kernel.progress import cli_progress
    from engine.lab.train.ablation import load_plan, render_markdown, run_ablation

    try:
        loaded = load_plan(plan)
        seed_list = _seed_list(seeds) if seeds is not None else None
        with cli_progress(f"ablation {loaded.name}") as report:
            table = run_ablation(loaded, data, world, out, seed=seed, init=init, device=device, only=only or None,
                                 seeds=seed_list, threads=threads, echo=typer.echo, progress=report)
    except Failed:
        raise
    except (ValueError, OSError, RuntimeError) as exc:
        _fail(str(exc))
    typer.echo(render_markdown(table))


def _detector_help() -> tuple[str, str, str]:
    """``--detector``, ``--min-score`` and ``--tiles`` help, made from the detector registry
    (``engine.perception.detection.factory.DETECTORS``)."""
    from engine.perception.detection.factory import TILED, detector_help
    from engine.perception.detection.openvino_ssd import SSD_DETECTORS

    scores = ", ".join(f"{name} {spec.min_score:g}" for name, spec in SSD_DETECTORS.items())
    tiled = ", ".join(sorted(TILED - {"auto"}))
    return (detector_help(),
            f"Lowest detection score kept (default: the detector's own; ONNX 0.5, yolox 0.15, fast 0.2, {scores}).",
            f"{tiled}: auto | off | ROWSxCOLUMNS (default auto: yolox tiles frames whose long side is over 3.5× "
            "the network input, i.e. 1080p and up, the OpenVINO detectors by their own rule; off is faster when "
            "people are large in the frame).")


DETECTOR_HELP, MIN_SCORE_HELP, TILES_HELP = _detector_help()
ONNX_LAYOUT_HELP = "ONNX output layout: yolo | yolov8 | ssd | yolox."
ONNX_SIZE_HELP = "ONNX input size, WIDTHxHEIGHT (default 640x640; yolox: the long side of 416x416)."


def _person_detector(spec: str, layout: str = "yolo", size: str | None = None, person_class: int = 0,
                     min_score: float | None = None, min_person_height: float = 64.0, hog_threshold: float = 0.0,
                     tiles: str | None = None):
    """A detector from the CLI's detector options (options that do not apply to it are left out or refused)."""
    from engine.ingest import DetectorError, make_detector, parse_size
    from engine.perception.detection.factory import TILED

    options: dict = {}
    tiled = spec in TILED or (spec.lower().endswith(".onnx") and layout == "yolox")
    if spec.lower().endswith(".onnx"):
        options = {"layout": layout, "person_class": person_class}
        if layout == "yolox":
            if size is not None:
                options["input_size"] = max(parse_size(size))
        else:
            options["input_size"] = parse_size(size or "640x640")
    elif spec == "hog":
        options = {"min_person_height": min_person_height, "hit_threshold": hog_threshold}
    if min_score is not None:
        if spec == "hog":
            raise DetectorError("--min-score does not apply to the hog detector (use --hog-threshold)")
        options["min_score"] = min_score
    if tiles is not None:
        if not tiled:
            raise DetectorError(f"--tiles applies to the tiling detectors ({', '.join(sorted(TILED))}) only, not "
                                f"to {spec!r}")
        options["tiles"] = tiles
    return make_detector(spec, **options)


@app.command("ingest")
def ingest_command(
    source: Path = typer.Argument(..., help="A video, an image folder, a built world, or a folder holding them."),
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
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
) -> None:
    """Ingest footage (videos, image folders), a folder of person crops (--crops) or a built world into a gallery
    folder; resumable."""
    from contextlib import ExitStack

    from engine.index import writing
    from engine.ingest import IngestOptions, ModelEncoder, ingest, parse_scenarios
    from engine.ingest.timing import parse_time
    from engine.kernel.progress import cli_progress
    from engine.perception.detection.tiles import parse_tiles
    from engine.retrieval.evidence.ranking import DomainWeights
    from engine.retrieval.models.discovery import load_model

    try:
        with ExitStack() as lock:
            if gallery.is_dir():  # a second writer is refused at once, before the model loads
                lock.enter_context(writing(gallery))
            user_network = appearance.lower().endswith(".onnx")
            person_detector = None  # auto: ingest picks per source (YOLOX-Nano, with a background model for videos)
            if detector != "auto" or min_score is not None:
                person_detector = _person_detector(detector, onnx_layout, onnx_size, person_class, min_score,
                                                   min_person_height, hog_threshold, tiles)
            elif tiles is not None:
                parse_tiles(tiles)
            options = IngestOptions(stride=stride, samples_per_track=samples_per_track, track=track,
                                    min_box_height=min_box_height, camera=camera,
                                    start=None if start is None else parse_time(start, "--start"),
                                    modality=modality, batch_size=batch, force=force, crops=crops,
                                    tiles=None if person_detector is not None else tiles,
                                    appearance="auto" if user_network else appearance)
            encoder = ModelEncoder(load_model(checkpoint, device=device), reid_scenarios=parse_scenarios(reid))
            if user_network:
                from engine.ingest.appearance import WithAppearance
                from engine.perception.appearance import appearance_network, parse_normalisation

                encoder = WithAppearance(encoder, appearance_network(appearance, parse_normalisation(appearance_norm)))
            with cli_progress("ingesting frames") as report:
                summary = ingest(source, gallery, encoder, person_detector, options, progress=report,
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


@app.command("detect")
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
        person_detector = _person_detector(detector, onnx_layout, onnx_size, person_class, min_score, tiles=tiles)
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


@app.command("search")
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
                            require=tuple(require or ()))
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


app.add_typer(checkpoint_app, name="checkpoint")


app.add_typer(gallery_app, name="gallery")


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
