"""The ``lineup`` command, the one front door (``python -m lineup`` runs the same): ``build_app`` makes the
typer app from the engine's commands (``engine.cli.register``) and the ones that open the desktop app's code,
``lineup app``, ``lineup report export|verify`` and ``lineup key``. This package sits above both ``engine`` and
``app`` and is the only place that wires them together."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

import engine.cli
from engine.cli.output import fail as _fail

__all__ = ["app", "build_app", "main"]


def app_command(
    db: Path = typer.Option(None, "--db", help="Case database (default: cases.db in the user data folder)."),
    gallery: Path = typer.Option(None, "--gallery", help="Gallery folder (default: the built-in demo gallery)."),
    checkpoint: Path = typer.Option(None, "--checkpoint", help="Checkpoint folder (default: the shipped one)."),
    play: str = typer.Option(None, "--play", help="Replay a demo script (a path or a name in resources/demos)."),
    export_report: Path = typer.Option(None, "--export-report", help="After --play: export the report (.pdf/.html)."),
    screenshot: Path = typer.Option(None, "--screenshot", help="After --play: save a PNG of the window."),
    quit_after: bool = typer.Option(False, "--quit", help="After --play: quit (exit 0 when everything worked)."),
    fast: bool = typer.Option(False, "--fast", help="Play without the watchable pauses (tests)."),
    blur_faces: bool = typer.Option(False, "--blur-faces", help="Blur faces in the report's thumbnails."),
) -> None:
    """Open the analyst window (first launch without --gallery builds and ingests the demo, once).
    With --play, replay a trainer demo script through the window."""
    try:  # imported when the command runs: the other commands start without Qt
        from app import launch
    except ImportError as exc:
        _fail(f"the desktop app cannot start ({exc}); install Lineup with its app dependencies (PySide6)")
    raise typer.Exit(code=launch.launch(db, gallery, checkpoint, play=play, export_report=export_report,
                                        screenshot=screenshot, quit_after=quit_after, fast=fast,
                                        blur_faces=blur_faces))


def _report_module():
    """``app.report``, imported when a report command runs: the other commands start without Qt."""
    try:
        from app import report
    except ImportError as exc:
        _fail(f"case reports need Lineup's app dependencies (PySide6, SQLAlchemy): {exc}")
    return report


def report_export(
    db: Path = typer.Option(..., "--db", help="Case database (SQLite file)."),
    case: int = typer.Option(..., "--case", help="Case id (see the app's case list)."),
    out: Path = typer.Option(None, "--out", help="Report file to write: .pdf or .html (manifest goes beside it)."),
    package: Path = typer.Option(None, "--package", help="Instead of --out: write an evidence package (.zip): the "
                                 "report, its manifest, the confirmed crops and each sighting's source footage "
                                 "(cut without re-encoding where possible), listed in a signed package manifest."),
    report_format: str = typer.Option("pdf", "--format", help="With --package: the report's format, pdf or html."),
    blur_faces: bool = typer.Option(False, "--blur-faces", help="Blur faces in the report's thumbnails: those a "
                                    "face detector finds, else the head region (evidence files are never changed)."),
    show_paths: bool = typer.Option(False, "--show-paths", help="Print full file paths and the OS user in the report "
                                    "(by default paths read relative to the case folder and the OS user is left out)."),
) -> None:
    """Write a case report (details, query chain with plots, confirmed results, sightings, evidence hashes, audit
    trail), or with --package an evidence package around it."""
    if (out is None) == (package is None):
        _fail("give exactly one of --out (a report file) and --package (an evidence package .zip)")
    report = _report_module()
    try:
        if package is not None:
            made = report.export_package(db, case, package, report_format=report_format, blur_faces=blur_faces,
                                         show_paths=show_paths)
        else:
            result = report.export_report(db, case, out, blur_faces=blur_faces, show_paths=show_paths)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    if package is not None:
        typer.echo(f"wrote {made.path} ({made.files} files, {made.size:,} bytes; report {made.report_format}, "
                   f"{made.sightings} sightings)")
        for gap in made.gaps:
            typer.secho(f"gap: {gap}", fg=typer.colors.YELLOW, err=True)
        warnings = made.warnings
    else:
        pages = f", {result.pages} pages" if result.pages else ""
        typer.echo(f"wrote {result.report_path} ({result.format}{pages}, {result.evidence} evidence hashes)")
        typer.echo(f"wrote {result.manifest_path}")
        warnings = result.warnings
    for warning in warnings:
        typer.secho(f"warning: {warning}", fg=typer.colors.YELLOW, err=True)


def report_verify(
    report_file: Path = typer.Argument(..., metavar="REPORT", help="Report file (its manifest lies beside it), or "
                                       "an evidence package (.zip)."),
    db: Path = typer.Option(None, "--db", help="Case database the report was made from (required for a report "
                            "file; for a package, also checks its report against the case)."),
    trust: list[str] = typer.Option(None, "--trust", help="Also trust this signer for this check: a public key file "
                                    "(`lineup key export`) or its fingerprint. Repeatable. Always trusted: this "
                                    "installation's key and the keys in its trusted-keys folder (`lineup key trust`)."),
    case_dir: Path = typer.Option(None, "--case-dir", help="Case folder where the manifest's relative paths lie "
                                  "(default: the folder of --db)."),
) -> None:
    """Check a report's signature, file, evidence and content against its manifest and the case's audit trail,
    or every file of an evidence package against its signed manifest (exit 1 if not, and if a key this
    installation does not trust signed it)."""
    is_package = report_file.suffix.lower() == ".zip"
    if db is None and not is_package:
        _fail("--db is required to check a report file (an evidence package .zip can be checked without it)")
    report = _report_module()
    try:
        if is_package:
            result = report.verify_package(report_file, db, trust=trust or (), case_dir=case_dir)
        else:
            result = report.verify_report(report_file, db, trust=trust or (), case_dir=case_dir)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    for note in result.notes:
        typer.echo(f"note: {note}")
    if result.ok:
        what = "every file matches the signed package manifest" if is_package else \
            "matches its manifest, its evidence files and the audit trail"
        typer.echo(f"OK: {report_file} {what}")
        return
    typer.secho(f"FAILED: {report_file}: {len(result.problems)} problem(s)", fg=typer.colors.RED)
    for problem in result.problems:
        typer.echo(f"  - {problem}")
    raise typer.Exit(code=1)


def _signing_module():
    try:
        from app.report import signing
    except ImportError as exc:
        _fail(f"report keys need Lineup's app dependencies: {exc}")
    return signing


def key_export(out: Path = typer.Option(..., "--out", help="File to write the public key to (PEM).")) -> None:
    """Write this installation's public report-signing key (made on first use) for others to trust."""
    signing = _signing_module()
    try:
        path, digest = signing.export_public_key(out)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    typer.echo(f"wrote {path}")
    typer.echo(f"fingerprint {signing.grouped(digest)}  (read it to whoever will trust this key)")


def key_trust(key_file: Path = typer.Argument(..., metavar="KEY.pub", help="Another examiner's public key.")) -> None:
    """Trust reports signed by this key from now on (compare its fingerprint with its owner's first)."""
    signing = _signing_module()
    try:
        digest = signing.trust_key(key_file)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    typer.echo(f"trusted key {signing.grouped(digest)} (in {signing.trusted_keys_dir()})")


def key_list() -> None:
    """The keys whose reports this installation accepts."""
    signing = _signing_module()
    try:
        trusted = signing.trusted_keys()
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    if not trusted:
        typer.echo("no trusted keys yet: `lineup key export` makes this installation's key")
    for digest, why in trusted.items():
        typer.echo(f"{signing.grouped(digest)}  {why}")


def _sightings_module():
    try:
        from app import case_sightings
    except ImportError as exc:
        _fail(f"case commands need Lineup's app dependencies (SQLAlchemy): {exc}")
    return case_sightings


def case_list(
    db: Path = typer.Option(..., "--db", help="Case database (SQLite file)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON list."),
) -> None:
    """The cases of a case database, most recently changed first."""
    module = _sightings_module()
    try:
        cases = module.list_cases(db)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    if as_json:
        typer.echo(json.dumps([{"id": c.id, "title": c.title, "status": c.status, "steps": c.step_count,
                                "updated": c.updated_at.isoformat()} for c in cases], ensure_ascii=False))
        return
    for c in cases:
        typer.echo(f"{c.id:>4}  {c.updated_at:%Y-%m-%d %H:%M}  {c.status:<8} {c.step_count:>3} steps  {c.title}")


def case_sightings(
    db: Path = typer.Option(..., "--db", help="Case database (SQLite file)."),
    case: int = typer.Option(None, "--case", help="Case id (default: the most recently changed case)."),
    gap: float = typer.Option(10.0, "--gap", help="Seconds between two items of one camera that still make one "
                              "sighting (items of one track always do)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON list of sightings."),
) -> None:
    """A case's confirmed items grouped into sightings (camera, start, end, best item, source, frames), in time
    order, and the route across cameras."""
    module = _sightings_module()
    try:
        found = module.case_sightings(db, case, gap)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    if as_json:
        typer.echo(json.dumps([s.to_dict() for s in found.sightings], ensure_ascii=False))
        return
    typer.echo(f"case {found.case_id}: {found.title} — {len(found.sightings)} sightings; route {found.route or '-'}")
    for s in found.sightings:
        when = "no time" if s.start is None else f"{s.start:.1f}–{s.end:.1f} s"
        typer.echo(f"  {s.camera or '?':<12} {when:<20} {len(s.items):>3} items  best {s.best}")


def build_app() -> typer.Typer:
    """The ``lineup`` typer app: the engine's commands, then ``app``, ``report`` and ``key``."""
    lineup = typer.Typer(no_args_is_help=True, add_completion=False, help="Lineup: progressive person search.")
    engine.cli.register(lineup)
    lineup.command("app")(app_command)
    report = typer.Typer(no_args_is_help=True, help="Case reports: export a case to PDF or HTML, verify a report.")
    report.command("export")(report_export)
    report.command("verify")(report_verify)
    lineup.add_typer(report, name="report")
    key = typer.Typer(no_args_is_help=True, help="Report-signing keys: export this installation's public key, "
                      "trust another examiner's.")
    key.command("export")(key_export)
    key.command("trust")(key_trust)
    key.command("list")(key_list)
    lineup.add_typer(key, name="key")
    cases = typer.Typer(no_args_is_help=True, help="Cases of a case database: list them, show a case's sightings.")
    cases.command("list")(case_list)
    cases.command("sightings")(case_sightings)
    lineup.add_typer(cases, name="case")
    return lineup


app = build_app()


def main() -> None:
    """The ``lineup`` console script (and ``python -m lineup``)."""
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
