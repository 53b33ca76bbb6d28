"""``verify_report``: does a report still match its manifest, its evidence and its case's audit trail?

Each problem names what changed, and who is to blame:

- the manifest: its signature does not verify (the manifest was edited after signing, or its signature or key
  replaced), or it is signed by a key the verifier does not trust (``app.report.signing.trusted_keys``: its
  own key, its trusted-keys folder, keys given for the check) — a valid signature by an unknown key proves
  nothing, so it is never OK;
- the report file: its SHA-256 differs from the one the signed manifest records;
- the case database: its audit chain does not verify (``CaseStore.verify_chain``); the audit entry that was
  newest when the report was made is gone or has another hash; a step, mark or note differs from the
  content the report showed (named by id; a mark changed by a later audit entry is a note, not a problem);
- the evidence: a file is missing or its SHA-256 differs; a gallery's fingerprint differs or it cannot be
  opened.

A head hash that differs while the manifest's signature fails and the chain verifies is blamed on the
manifest, not on the database. Entries added after the report are fine and are reported as a note. The case
database is opened read-only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from app.report.errors import ReportError
from app.report.galleries import GalleryLookup
from app.report.manifest import CONTENT_KINDS, Manifest, content_digests, manifest_path, read_manifest
from app.report.signing import grouped, public_fingerprint, signature_valid, trusted_keys
from app.store import CaseNotFoundError, CaseStore
from engine.kernel.hashing import sha256_file

#: query images and crops are images: anything far larger is not one Lineup kept
MAX_EVIDENCE_BYTES = 512 * 1024 * 1024


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


def check_signature(manifest, trusted: dict[str, str], problems: list[str], notes: list[str],
                    what: str = "manifest") -> bool:
    """Whether ``manifest`` (a report's or a package's: anything with ``signer_public_key``, ``signer_fingerprint``,
    ``signature`` and ``signed_bytes()``) is signed, intact, and by a key the verifier trusts; problems name what
    is wrong, ``what`` names the manifest. A valid signature by a key nobody here trusts proves nothing about who
    made it: it is a problem."""
    named = public_fingerprint(manifest.signer_public_key)
    if named is None:
        problems.append(f"{what}: its signer's public key is missing or malformed: it cannot be trusted")
        return False
    intact = signature_valid(manifest.signer_public_key, manifest.signature, manifest.signed_bytes())
    if not intact:
        problems.append(f"{what}: its signature does not verify: it was edited after it was signed "
                        "(or its signature was replaced); none of its values can be trusted")
    if named != manifest.signer_fingerprint:
        problems.append(f"{what}: the fingerprint it states ({manifest.signer_fingerprint}) is not that of the "
                        f"key it carries ({named})")
        intact = False
    if named in trusted:
        notes.append(f"signed by key {grouped(named)} ({trusted[named]})")
        return intact
    if trusted:
        known = "; ".join(f"{grouped(key)[:19]}… ({why})" for key, why in trusted.items())
        problems.append(f"{what}: signed by key {grouped(named)}, which this installation does not trust "
                        f"(trusted: {known}): it was not issued by a trusted examiner")
    else:
        problems.append(f"{what}: signed by key {grouped(named)}, which this installation does not trust (it "
                        "trusts no key yet): compare this fingerprint with the examiner's by another channel, then "
                        "`lineup key trust THEIR_KEY.pub` or pass --trust")
    return False


def _check_content(manifest: Manifest, records, later_entries: bool, problems: list[str],
                   notes: list[str]) -> None:
    """Compare the case's steps, marks and notes now with the digests the report recorded."""
    now = content_digests(records)
    recorded = manifest.content
    if now.get("all") == recorded.get("all"):
        return
    singular = {"steps": "step", "marks": "mark", "notes": "note"}
    for kind in CONTENT_KINDS:
        then, current = recorded.get(kind) or {}, now[kind]
        if not isinstance(then, dict):
            problems.append(f"manifest: its {kind} digests are not a mapping")
            continue
        for key in sorted(set(then) | set(current)):
            what = f"{singular[kind]} {key}"
            if key not in current:
                problems.append(f"content differs from the database: {what}, shown in the report, is no longer in "
                                "the case database")
            elif key not in then:
                if not later_entries:  # with later entries it is a later action, which the trail note covers
                    problems.append(f"content differs from the database: {what} is in the case database but not "
                                    "in the report, and no audit entry added it after the report")
            elif then[key] != current[key]:
                if kind == "marks" and later_entries:
                    notes.append(f"{what} was changed after the report was made")
                else:
                    problems.append(f"content differs from the database: {what} is not what the report shows "
                                    "(changed in the case database after the report was made)")


def _check_case(manifest: Manifest, db: Path, trusted_manifest: bool, problems: list[str],
                notes: list[str]) -> None:
    with CaseStore.open(db, read_only=True) as store:
        try:
            trail = store.audit_trail(manifest.case_id)
        except CaseNotFoundError:
            problems.append(f"case database {db} has no case {manifest.case_id}: the report was made from another "
                            f"database")
            return
        chain = store.verify_chain(manifest.case_id)
        _, records = store.content_records(manifest.case_id)
    if not trail or trail[0].hash != manifest.case_first_entry:
        problems.append(f"case {manifest.case_id} in {db} is not the case the report was made from (its first "
                        f"audit entry differs)")
        return
    problems.extend(f"audit trail: {problem} (the case database's audit chain is broken)"
                    for problem in chain.problems)
    by_seq = {entry.seq: entry for entry in trail}
    head = by_seq.get(manifest.audit_head_seq)
    if head is None:
        problems.append(f"audit entry #{manifest.audit_head_seq}, the newest when the report was made, is no longer "
                        f"in the trail")
    elif head.hash != manifest.audit_head_hash:
        if not trusted_manifest and chain.ok:
            problems.append(f"manifest: its audit head hash for entry #{manifest.audit_head_seq} was edited (it says "
                            f"{manifest.audit_head_hash}; the database's chain verifies and has {head.hash})")
        else:
            problems.append(f"audit entry #{manifest.audit_head_seq} has hash {head.hash}, the report recorded "
                            f"{manifest.audit_head_hash}: the trail was changed after the report was made")
    later = [entry.seq for entry in trail if entry.seq > manifest.audit_head_seq]
    _check_content(manifest, records, bool(later), problems, notes)
    if later:
        notes.append(f"{len(later)} audit entr{'y was' if len(later) == 1 else 'ies were'} added after the report was "
                     f"made (#{later[0]}–#{later[-1]}); the report does not show them")


def _check_evidence(manifest: Manifest, case_dir: Path, trusted_manifest: bool, problems: list[str]) -> None:
    """Hash the evidence files the manifest names, only when the manifest is trustworthy (an untrusted one
    could name any file, a sparse terabyte among them) and only files of a plausible size."""
    if not trusted_manifest:
        problems.append("evidence files were not checked: the manifest that names them is not trustworthy")
        return
    galleries = GalleryLookup()
    for item in manifest.evidence:
        where = in_case(item.path, case_dir)
        if item.kind == "gallery":
            now = galleries.fingerprint(where)
            if now is None:
                problems.append(f"gallery {item.path} cannot be opened: {galleries.problem(item.path)}")
            elif now != item.sha256:
                problems.append(f"gallery {item.path} has changed since the report was made: its fingerprint is "
                                f"{now}, the report recorded {item.sha256}")
            continue
        path = Path(where)
        if not path.is_file():
            problems.append(f"{item.kind} evidence file {path} ({item.label}) is missing")
            continue
        size = path.stat().st_size
        if size > MAX_EVIDENCE_BYTES:
            problems.append(f"{item.kind} evidence file {path} ({item.label}) is {size:,} bytes, more than any image "
                            f"Lineup keeps as evidence ({MAX_EVIDENCE_BYTES:,}): not hashed")
            continue
        digest = sha256_file(path)
        if digest != item.sha256:
            problems.append(f"{item.kind} evidence file {path} ({item.label}) has changed: its SHA-256 is {digest}, "
                            f"the report recorded {item.sha256}")


def in_case(path: str, case_dir: Path) -> str:
    """A manifest path on this machine: relative paths lie in the case folder."""
    return path if Path(path).is_absolute() else str(case_dir / path)


def verify_report(report_path: str | Path, db_path: str | Path, *,
                  trust: Iterable[str] = (), case_dir: str | Path | None = None) -> ReportVerification:
    """Check the report at ``report_path`` against its manifest, its evidence files and the case in ``db_path``.
    The manifest must be signed by a key the verifier trusts (``app.report.signing.trusted_keys``: its own,
    its trusted-keys folder, and ``trust``: public key files or fingerprints). Paths the manifest records
    relative to the case folder are looked up in ``case_dir`` (default: the folder of ``db_path``), so a case
    folder copied to another machine verifies there."""
    trusted = trusted_keys(trust)
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
    trusted_manifest = check_signature(manifest, trusted, problems, notes)
    if report.is_file():
        digest = sha256_file(report)
        if digest != manifest.report_sha256:
            problems.append(f"report file {report} has been changed since it was made (edited): its SHA-256 is "
                            f"{digest}, the manifest recorded {manifest.report_sha256}")
        elif not trusted_manifest:
            problems.append(f"report file {report} matches the manifest's SHA-256, but that manifest is not "
                            "trustworthy: the report file may have been edited too")
    if report.name != manifest.report_file:
        notes.append(f"the report was made as {manifest.report_file} and has been renamed {report.name}")
    folder = db.parent if case_dir is None else Path(case_dir).expanduser().absolute()
    recorded_db = Path(in_case(manifest.db_path, folder))
    if not _same_file(db, recorded_db):  # the case itself is checked by its first audit entry below
        notes.append(f"the report was made from case database {manifest.db_path}; checking {db}")
    if not db.is_file():
        problems.append(f"case database {db} does not exist")
    else:
        _check_case(manifest, db, trusted_manifest, problems, notes)
    _check_evidence(manifest, folder, trusted_manifest, problems)
    return ReportVerification(report, tuple(problems), tuple(notes))
