"""``export_report``: a case of a case database as a PDF or HTML report with its manifest beside it.

The report is written to a temporary file beside the target and moved into place (``os.replace``), then the
manifest the same way, so neither is ever seen half-written. The manifest is signed with the installation's
key (``app.report.signing``, made on first use), whose fingerprint the report prints.

``progress(done, total, message)`` (optional) hears each stage: reading the case, laying out its steps, every
thumbnail (each one runs the face detector when faces are blurred), every step's distribution plot, laying out
and every PDF page. It may raise to stop the export
(the app's cancel): its last call comes before the report is moved into place, so a stopped export leaves the
target as it was (absent, or the previous report with its manifest) and no temporary file.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from app.report.content import Progress, ReportContent, collect_content, no_progress, relative_to_case
from app.report.errors import ReportError
from app.report.html import render_html
from app.report.manifest import Manifest, ManifestEvidence, content_digests, manifest_path, write_manifest
from app.report.markup import SCORE_STATEMENT
from app.report.pdf import render_pdf
from app.report.pdf_process import render_pdf_apart
from app.report.qt import ensure_gui_application
from app.report.signing import SigningKey, installation_key
from app.store import CaseStore
from app.store.models import utc_text
from engine.kernel.atomic import atomic_target
from engine.kernel.hashing import sha256_file
from engine.kernel.permissions import owner_only_umask

FORMATS = {".pdf": "pdf", ".html": "html", ".htm": "html"}


@dataclass(frozen=True)
class ReportResult:
    report_path: Path
    manifest_path: Path
    format: str
    sha256: str
    pages: int | None  # PDF only
    evidence: int
    warnings: tuple[str, ...]


def report_format(out_path: Path) -> str:
    """"pdf" or "html" from the file name's ending."""
    try:
        return FORMATS[out_path.suffix.lower()]
    except KeyError:
        raise ReportError(f"report file {out_path} must end in .pdf or .html (got {out_path.suffix or 'no ending'!r})"
                          ) from None


def portable(path: str, case_dir: Path) -> str:
    """A manifest path: relative to the case folder when inside it (the folder verifies wherever it is copied),
    else as it is."""
    inside = relative_to_case(path, case_dir)
    return path if inside is None else inside


def make_manifest(content: ReportContent, report: Path, report_kind: str, digest: str, key: SigningKey) -> Manifest:
    """The report's manifest, signed with ``key``."""
    head = content.audit_head
    case_dir = content.case_dir
    models = tuple(dict.fromkeys(g.model_fingerprint for g in content.galleries))
    manifest = Manifest(report_file=report.name, report_format=report_kind, report_sha256=digest,
                        db_path=portable(content.db_path, case_dir), case_id=content.case.id,
                        case_first_entry=content.audit_first_hash, audit_head_seq=head.seq, audit_head_hash=head.hash,
                        evidence=tuple(ManifestEvidence(e.kind, e.label, portable(e.path, case_dir), e.sha256)
                                       for e in content.evidence),
                        exported_at=utc_text(content.exported_at), blur_faces=content.blur_faces,
                        software=content.software, content=content_digests(content.records),
                        model_fingerprints=models, statement=SCORE_STATEMENT)
    return manifest.signed_with(key)


def checked_inputs(db_path: str | Path, out_path: str | Path) -> tuple[Path, Path]:
    """(case database, target file) as absolute paths; ``ReportError`` when the database or the target's
    folder does not exist."""
    out = Path(out_path).expanduser().absolute()
    if not out.parent.is_dir():
        raise ReportError(f"cannot write {out}: folder {out.parent} does not exist")
    db = Path(db_path).expanduser().absolute()
    if not db.is_file():
        raise ReportError(f"case database {db} does not exist")
    return db, out


def prepare_content(db: Path, case_id: int, *, blur_faces: bool = False, progress: Progress | None = None,
                    show_paths: bool = False) -> tuple[ReportContent, SigningKey]:
    """What the report of case ``case_id`` shows, read from the case database ``db`` (opened read-only), and the
    installation's key that will sign it (made on first use)."""
    report = progress or no_progress
    report(0, 0, "Reading the case")
    key = installation_key()
    ensure_gui_application()
    with CaseStore.open(db, read_only=True) as store:
        content = collect_content(store, case_id, blur_faces=blur_faces, progress=report, show_paths=show_paths)
    return replace(content, signing_fingerprint=key.fingerprint), key


def write_report(content: ReportContent, key: SigningKey, out: Path, *, progress: Progress | None = None,
                 apart: bool = False) -> ReportResult:
    """Render ``content`` to ``out`` (its ending gives the format) and write its signed manifest beside it."""
    report = progress or no_progress
    kind = report_format(out)
    pages = None
    with atomic_target(out, suffix=out.suffix) as tmp:
        if kind == "pdf":
            pages = (render_pdf_apart if apart else render_pdf)(content, tmp, progress=report)
        else:
            report(0, 0, "Writing the HTML report")
            tmp.write_text(render_html(content, progress=report), encoding="utf-8")
        digest = sha256_file(tmp)
        report(1, 1, "Report written; signing its manifest")  # the last point at which the export may stop
    manifest = manifest_path(out)
    write_manifest(manifest, make_manifest(content, out, kind, digest, key))
    return ReportResult(out, manifest, kind, digest, pages, len(content.evidence), content.warnings)


@owner_only_umask()
def export_report(db_path: str | Path, case_id: int, out_path: str | Path, *,
                  blur_faces: bool = False, progress: Progress | None = None, apart: bool = False,
                  show_paths: bool = False) -> ReportResult:
    """Write the report of case ``case_id`` in the case database ``db_path`` to ``out_path`` (.pdf or .html)
    and its manifest to ``<out_path>.manifest.json``, both owner-only (0600). The case database is opened
    read-only: no write lock, no migration. ``blur_faces`` blurs faces in the report's thumbnails
    (``app.report.blur``); the evidence files and their hashes are never touched. ``progress``: see the module
    docstring. ``apart`` draws a PDF in a child process (``app.report.pdf_process``: what the app's background
    export does, so that its window never waits on Qt's text layout). ``show_paths``: print full paths and the
    OS user (by default paths read relative to the case folder and the OS user is left out)."""
    report_format(Path(out_path))
    db, out = checked_inputs(db_path, out_path)
    content, key = prepare_content(db, case_id, blur_faces=blur_faces, progress=progress, show_paths=show_paths)
    return write_report(content, key, out, progress=progress, apart=apart)
