"""``verify_package``: does an evidence package (``app.report.package``) still hold what it was made with?

The zip is checked before anything is read from it: a file that is not a zip, an entry whose path could land
outside a folder it is unpacked into (``../x``, ``/etc/x``, ``C:x``, backslashes), a link, two entries of one
name, more entries or bytes than any package holds, or an entry that claims to expand far beyond its stored size
is a ``PackageError`` that names the package and the entry; nothing is extracted.

Then each problem names the file: the package manifest's signature (``app.report.verify.check_signature``),
every listed file (missing, a different size or SHA-256, damaged in the zip), every file the manifest does not
list, and the report's own manifest (its signature; the report and each crop against the hashes it records). A
sighting whose source the package could not carry (a gap) is a note. With a case database the report is also
checked against it as ``lineup report verify REPORT --db`` does (``verify_report``).
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
import zipfile
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from app.report.errors import ReportError
from app.report.manifest import MAX_MANIFEST_BYTES, Manifest
from app.report.package_manifest import PACKAGE_MANIFEST, PackageFile, PackageManifest
from app.report.signing import trusted_keys
from app.report.verify import ReportVerification, check_signature, verify_report

MAX_ENTRIES = 100_000
MAX_ENTRY_BYTES = 1 << 40  # 1 TiB: no footage file of a package comes near it
MAX_RATIO = 1100  # deflate cannot expand more than about 1032:1: an entry claiming more lies about its size
CHUNK = 1 << 20
_DRIVE = re.compile(r"^[A-Za-z]:")


class PackageError(ReportError):
    """An evidence package cannot be read safely (the message names the package and what is wrong)."""


def _unsafe(name: str) -> str | None:
    """Why an entry name could write outside the folder it is unpacked into (None when it cannot)."""
    if "\\" in name:
        return "it contains a backslash"
    if name.startswith("/") or _DRIVE.match(name):
        return "it is an absolute path"
    if any(part == ".." for part in PurePosixPath(name).parts):
        return "it climbs out of the package with '..'"
    if "\x00" in name or any(ord(c) < 32 for c in name):
        return "it contains control characters"
    return None


def open_package(path: Path) -> zipfile.ZipFile:
    """The package at ``path`` opened for reading after its entries were checked (``PackageError`` if not)."""
    if not path.is_file():
        raise PackageError(f"package {path} does not exist")
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError) as exc:
        raise PackageError(f"package {path} is not a zip file (or its directory is damaged): {exc}") from None
    try:
        entries = archive.infolist()
        if len(entries) > MAX_ENTRIES:
            raise PackageError(f"package {path} has {len(entries):,} entries, more than any evidence package "
                               f"({MAX_ENTRIES:,})")
        seen: set[str] = set()
        for info in entries:
            why = _unsafe(info.filename)
            if why is not None:
                raise PackageError(f"package {path} holds an entry with an unsafe path {info.filename!r} ({why}): "
                                   "not a Lineup package; nothing was extracted")
            if (info.external_attr >> 16) & 0o170000 == 0o120000:
                raise PackageError(f"package {path}: entry {info.filename!r} is a symbolic link")
            if info.filename in seen:
                raise PackageError(f"package {path} holds two entries named {info.filename!r}")
            seen.add(info.filename)
            if info.file_size > MAX_ENTRY_BYTES:
                raise PackageError(f"package {path}: entry {info.filename!r} claims {info.file_size:,} bytes, more "
                                   f"than any evidence file ({MAX_ENTRY_BYTES:,})")
            stored = info.compress_type == zipfile.ZIP_STORED
            if (stored and info.file_size != info.compress_size) or (
                    not stored and info.file_size > MAX_RATIO * max(1, info.compress_size)):
                raise PackageError(f"package {path}: entry {info.filename!r} claims to expand {info.compress_size:,} "
                                   f"stored bytes into {info.file_size:,}: its sizes are absurd (a damaged zip or a "
                                   "zip bomb)")
    except BaseException:
        archive.close()
        raise
    return archive


def _digest(archive: zipfile.ZipFile, name: str) -> tuple[str, int]:
    """SHA-256 and size of an entry, streamed (``zipfile`` also checks its CRC at the end)."""
    digest = hashlib.sha256()
    size = 0
    with archive.open(name) as source:
        while block := source.read(CHUNK):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


def _read_json(archive: zipfile.ZipFile, name: str) -> object:
    info = archive.getinfo(name)
    if info.file_size > MAX_MANIFEST_BYTES:
        raise ReportError(f"{name} is {info.file_size:,} bytes, more than any manifest")
    try:
        return json.loads(archive.read(name).decode("utf-8"))
    except (zipfile.BadZipFile, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportError(f"{name} cannot be read: {exc}") from None


def _check_files(archive: zipfile.ZipFile, listed: tuple[PackageFile, ...], problems: list[str]) -> set[str]:
    """Compare every listed file with the zip; returns the names whose content matches the manifest."""
    present = set(archive.namelist())
    intact = set()
    for entry in listed:
        if entry.name not in present:
            problems.append(f"file {entry.name} ({entry.kind}) is missing from the package")
            continue
        try:
            digest, size = _digest(archive, entry.name)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
            problems.append(f"file {entry.name} ({entry.kind}) is damaged in the zip: {exc}")
            continue
        if digest != entry.sha256 or size != entry.size:
            problems.append(f"file {entry.name} ({entry.kind}) has been changed: its SHA-256 is {digest} "
                            f"({size:,} bytes), the package manifest recorded {entry.sha256} ({entry.size:,} bytes)")
            continue
        intact.add(entry.name)
    for name in sorted(present - {entry.name for entry in listed} - {PACKAGE_MANIFEST}):
        problems.append(f"file {name} is in the package but not in its manifest (added after it was made)")
    return intact


def _check_report_manifest(archive: zipfile.ZipFile, package: PackageManifest, intact: set[str],
                           trusted: dict[str, str] | None, problems: list[str]) -> None:
    """The report's own manifest: signed by a trusted key (unless ``trusted`` is None: ``verify_report`` checks
    that); the report and the crops have the hashes it records."""
    name = package.report_manifest
    if name not in intact:
        return  # already named as missing or changed
    try:
        report_manifest = Manifest.from_json(_read_json(archive, name), Path(name))
    except ReportError as exc:
        problems.append(f"file {name}: {exc}")
        return
    if trusted is not None:
        check_signature(report_manifest, trusted, problems, [], what=f"file {name} (the report's manifest)")
    by_name = {entry.name: entry for entry in package.files}
    report = by_name.get(package.report_file)
    if report is None or report.sha256 != report_manifest.report_sha256:
        problems.append(f"file {package.report_file} is not the report its manifest {name} records (SHA-256 "
                        f"{report_manifest.report_sha256})")
    crops = {e.label.removeprefix("item "): e.sha256 for e in report_manifest.evidence if e.kind == "crop"}
    for entry in package.files:
        item = entry.about.get("item")
        if entry.kind == "crop" and item in crops and crops[item] != entry.sha256:
            problems.append(f"file {entry.name} (crop of item {item}) is not the crop the report records "
                            f"(SHA-256 {crops[item]})")


def _check_case(archive: zipfile.ZipFile, package: PackageManifest, db: Path, trust: Iterable[str],
                case_dir: Path | None, problems: list[str], notes: list[str]) -> None:
    """The report inside the package checked against the case database, as ``verify_report`` does."""
    with tempfile.TemporaryDirectory(prefix="lineup-verify-") as folder:
        for name in (package.report_file, package.report_manifest):
            target = Path(folder) / PurePosixPath(name).name
            with archive.open(name) as source, open(target, "wb") as out:
                while block := source.read(CHUNK):
                    out.write(block)
        check = verify_report(Path(folder) / PurePosixPath(package.report_file).name, db, trust=trust,
                              case_dir=case_dir)
    problems.extend(f"report: {problem}" for problem in check.problems)
    notes.extend(note for note in check.notes if note not in notes)


def verify_package(package_path: str | Path, db_path: str | Path | None = None, *, trust: Iterable[str] = (),
                   case_dir: str | Path | None = None) -> ReportVerification:
    """Check the evidence package at ``package_path`` (see the module docstring); ``db_path``, ``trust`` and
    ``case_dir`` as for ``verify_report``. ``PackageError`` when the zip itself is unsafe or unreadable."""
    trust = tuple(trust)
    path = Path(package_path).expanduser().absolute()
    problems: list[str] = []
    notes: list[str] = []
    with open_package(path) as archive:
        if PACKAGE_MANIFEST not in archive.namelist():
            return ReportVerification(path, (f"file {PACKAGE_MANIFEST} is missing: this is not a Lineup evidence "
                                             "package, or its manifest was removed",), ())
        try:
            package = PackageManifest.from_json(_read_json(archive, PACKAGE_MANIFEST), PACKAGE_MANIFEST)
        except ReportError as exc:
            return ReportVerification(path, (f"file {exc}",), ())
        trusted = trusted_keys(trust)
        check_signature(package, trusted, problems, notes, what=f"file {PACKAGE_MANIFEST}")
        intact = _check_files(archive, package.files, problems)
        for name in (package.report_file, package.report_manifest):
            if name not in {entry.name for entry in package.files}:
                problems.append(f"file {name}: the package manifest names it as the report but does not list it")
        _check_report_manifest(archive, package, intact, trusted if db_path is None else None, problems)
        if db_path is None:
            notes.append("the report was not checked against its case database (give --db to check it)")
        elif {package.report_file, package.report_manifest} <= intact:
            folder = None if case_dir is None else Path(case_dir).expanduser().absolute()
            _check_case(archive, package, Path(db_path).expanduser().absolute(), trust, folder, problems, notes)
        notes.extend(f"gap: {gap}" for gap in package.gaps())
    return ReportVerification(path, tuple(problems), tuple(notes))
