"""``verify_report``: does a report still match its manifest, its evidence and its case's audit trail?

Problems (any one fails the check): the report file differs from the SHA-256 in its manifest; the manifest
is missing, unreadable, or written for another database or case; an evidence file is missing or its SHA-256
differs from the one the report recorded; a gallery's fingerprint differs or it cannot be opened; the case's
audit chain does not verify (``CaseStore.verify_chain``); the audit entry that was newest when the report was
made is gone or has another hash. Entries added after the report are fine and are reported as a note.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.report.errors import ReportError
from app.report.galleries import GalleryLookup
from app.report.manifest import Manifest, manifest_path, read_manifest
from app.store import CaseNotFoundError, CaseStore
from engine.hashing import sha256_file


@dataclass(frozen=True)
class ReportVerification:
    report_path: Path
    problems: tuple[str, ...]
    notes: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and a.samefile(b))
    except OSError:
        return False


def _check_case(manifest: Manifest, db: Path, problems: list[str], notes: list[str]) -> None:
    with CaseStore.open(db, read_only=True) as store:
        try:
            trail = store.audit_trail(manifest.case_id)
        except CaseNotFoundError:
            problems.append(f"case database {db} has no case {manifest.case_id}: the report was made from another "
                            f"database")
            return
        chain = store.verify_chain(manifest.case_id)
    if not trail or trail[0].hash != manifest.case_first_entry:
        problems.append(f"case {manifest.case_id} in {db} is not the case the report was made from (its first "
                        f"audit entry differs)")
        return
    problems.extend(f"audit trail: {problem}" for problem in chain.problems)
    by_seq = {entry.seq: entry for entry in trail}
    head = by_seq.get(manifest.audit_head_seq)
    if head is None:
        problems.append(f"audit entry #{manifest.audit_head_seq}, the newest when the report was made, is no longer "
                        f"in the trail")
    elif head.hash != manifest.audit_head_hash:
        problems.append(f"audit entry #{manifest.audit_head_seq} has hash {head.hash}, the report recorded "
                        f"{manifest.audit_head_hash}: the trail was changed after the report was made")
    later = [entry.seq for entry in trail if entry.seq > manifest.audit_head_seq]
    if later:
        notes.append(f"{len(later)} audit entr{'y was' if len(later) == 1 else 'ies were'} added after the report was "
                     f"made (#{later[0]}–#{later[-1]}); the report does not show them")


def _check_evidence(manifest: Manifest, problems: list[str]) -> None:
    galleries = GalleryLookup()
    for item in manifest.evidence:
        if item.kind == "gallery":
            now = galleries.fingerprint(item.path)
            if now is None:
                problems.append(f"gallery {item.path} cannot be opened: {galleries.problem(item.path)}")
            elif now != item.sha256:
                problems.append(f"gallery {item.path} has changed since the report was made: its fingerprint is "
                                f"{now}, the report recorded {item.sha256}")
            continue
        path = Path(item.path)
        if not path.is_file():
            problems.append(f"{item.kind} evidence file {path} ({item.label}) is missing")
            continue
        digest = sha256_file(path)
        if digest != item.sha256:
            problems.append(f"{item.kind} evidence file {path} ({item.label}) has changed: its SHA-256 is {digest}, "
                            f"the report recorded {item.sha256}")


def verify_report(report_path: str | Path, db_path: str | Path) -> ReportVerification:
    """Check the report at ``report_path`` against its manifest, its evidence files and the case in ``db_path``."""
    report = Path(report_path).expanduser().absolute()
    db = Path(db_path).expanduser().absolute()
    problems: list[str] = []
    notes: list[str] = []
    if not report.is_file():
        problems.append(f"report file {report} does not exist")
    try:
        manifest = read_manifest(manifest_path(report))
    except ReportError as exc:
        return ReportVerification(report, (*problems, str(exc)), ())
    if report.is_file():
        digest = sha256_file(report)
        if digest != manifest.report_sha256:
            problems.append(f"report file {report} has been changed since it was made: its SHA-256 is {digest}, the "
                            f"manifest recorded {manifest.report_sha256}")
    if report.name != manifest.report_file:
        notes.append(f"the report was made as {manifest.report_file} and has been renamed {report.name}")
    if not _same_file(db, Path(manifest.db_path)):
        problems.append(f"the manifest was written for case database {manifest.db_path}, not {db}")
    if not db.is_file():
        problems.append(f"case database {db} does not exist")
    else:
        _check_case(manifest, db, problems, notes)
    _check_evidence(manifest, problems)
    return ReportVerification(report, tuple(problems), tuple(notes))
