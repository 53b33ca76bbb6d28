"""``lineup gallery``: a gallery folder's counts, a full check, and rebuilding its indexes and evidence."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from engine.cli.output import Failed
from engine.cli.output import fail as _fail


def _open_gallery(folder: Path, check_indexes: bool = True, *, writer: bool = False):
    """The gallery in ``folder``; only a ``writer`` (holding the write lock) finishes an unfinished change."""
    from engine.index import Gallery

    try:
        return Gallery.open(folder, check_indexes=check_indexes, finish_changes=writer)
    except (ValueError, OSError) as exc:
        _fail(str(exc))


def gallery_info(
    folder: Path = typer.Argument(..., help="Gallery folder."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Counts, views and their indexes, cameras, time range and bytes on disk."""
    from engine.index.report import info_lines

    info = _open_gallery(folder).info()
    typer.echo(json.dumps(info) if as_json else "\n".join(info_lines(info)))


def gallery_verify(
    folder: Path = typer.Argument(..., help="Gallery folder."),
    crops: bool = typer.Option(True, "--crops/--no-crops", help="Check crop files and their SHA-256."),
    sources: bool = typer.Option(False, "--sources", help="Also check source files against their SHA-256."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Re-read every file of a gallery, and digest every item's record and vectors again against the digests
    recorded when it was added (naming the items that changed); exit 1 when anything is wrong (nothing is
    changed)."""
    from dataclasses import asdict

    from engine.index.report import problem_lines, uncovered_line

    store = _open_gallery(folder, check_indexes=False)
    try:
        problems = store.verify(check_crops=crops, check_sources=sources)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    if as_json:
        typer.echo(json.dumps({"path": str(store.root), "content_covered": store.content_covered,
                               "problems": [asdict(p) for p in problems]}))
    else:
        lines = problem_lines(problems, str(store.root))
        typer.echo("\n".join(lines if store.content_covered else [*lines, uncovered_line(str(store.root))]))
    if problems:
        raise typer.Exit(code=1)


def gallery_rebuild(
    folder: Path = typer.Argument(..., help="Gallery folder."),
    attributes: bool = typer.Option(False, "--attributes", help="Also recompute every item's attribute evidence "
                                                                "from its stored crop (pixels; model with "
                                                                "--checkpoint; carried-objects evidence is "
                                                                "kept as stored)."),
    checkpoint: Path = typer.Option(None, "--checkpoint", help="With --attributes: the checkpoint whose attribute "
                                                               "heads give the model evidence (else it is kept)."),
    device: str = typer.Option(None, "--device", help="cpu, cuda, cuda:1 ... (default: CUDA when available)."),
    appearance: str = typer.Option(None, "--appearance", help="Add (or recompute) the 'appearance' and "
                                                              "'appearance:grey' views from the stored crops: a "
                                                              "shipped re-identification network (fast, balanced, "
                                                              "accurate) or your own (.onnx)."),
    appearance_norm: str = typer.Option("imagenet", "--appearance-norm",
                                        help="--appearance input normalisation (see `lineup ingest --help`)."),
    replace_appearance: bool = typer.Option(False, "--replace-appearance",
                                            help="With --appearance: replace an 'appearance' view another file "
                                                 "made."),
    as_json: bool = typer.Option(False, "--json", help="Print the gallery info afterwards as one JSON object."),
) -> None:
    """Rebuild every view's index from the stored vectors (repairs index problems that verify reports);
    --appearance adds or recomputes the appearance views ('appearance', and 'appearance:grey' for sketch and IR
    queries)."""
    from contextlib import ExitStack

    from engine.index import writing
    from engine.index.report import info_lines

    if checkpoint is not None and not attributes:
        _fail("--checkpoint is only used with --attributes")
    if replace_appearance and appearance is None:
        _fail("--replace-appearance is only used with --appearance")
    lock = ExitStack()
    evidence = added = None
    try:
        if folder.is_dir():  # held from before the gallery is read until every change is written
            lock.enter_context(writing(folder))
        store = _open_gallery(folder, check_indexes=False, writer=True)
        if appearance is not None:
            from engine.ingest.appearance_views import check_view_model, compute_appearance_view
            from engine.kernel.progress import cli_progress
            from engine.perception.appearance import appearance_network, parse_normalisation

            network = appearance_network(appearance, parse_normalisation(appearance_norm))
            if not replace_appearance:
                check_view_model(store, network)
        info = store.rebuild()
        if appearance is not None:
            with cli_progress("appearance view") as report:
                added = compute_appearance_view(store, network, replace=replace_appearance, progress=report)
            info = store.info()
        if attributes:
            from engine.kernel.progress import cli_progress
            from engine.retrieval.evidence.items import refresh_evidence

            model = None
            if checkpoint is not None:
                from engine.retrieval.models import load

                model = load(checkpoint, device=device)
            with cli_progress("attribute evidence") as report:
                evidence = refresh_evidence(store, model, progress=report)
    except Failed:
        raise
    except (ValueError, OSError, RuntimeError) as exc:
        _fail(str(exc))
    finally:
        lock.close()
    if as_json:
        extra = {**({} if evidence is None else {"attributes": evidence}),
                 **({} if added is None else {"appearance": added})}
        typer.echo(json.dumps({**info, **extra}))
        return
    lines = ["rebuilt every index", *info_lines(info)]
    if added is not None:
        views = ", ".join(repr(view) for view in added["views"])
        lines.append(f"{'recomputed' if added['replaced'] else 'added'} views {views}: {added['items']} "
                     f"items × {added['dim']} from {added['model'].get('version', added['model']['file'])}")
    if evidence is not None:
        lines.append(f"attribute evidence: {evidence['items']} items, {evidence['pixels']} from pixels, "
                     f"{evidence['model']} from the model, {evidence['objects']} with carried objects kept, "
                     f"{evidence['no_crop']} without a readable crop "
                     f"({evidence['seconds']:.1f} s)")
    typer.echo("\n".join(lines))


def add_to(app: typer.Typer) -> None:
    group = typer.Typer(no_args_is_help=True, help="Gallery folders: look, check, repair.")
    group.command("info")(gallery_info)
    group.command("verify")(gallery_verify)
    group.command("rebuild")(gallery_rebuild)
    app.add_typer(group, name="gallery")
