"""``export_package``: a case's evidence package, one zip file holding

- the report (``report.pdf`` or ``report.html``, as ``export_report`` writes it) and its signed manifest;
- the crop of every confirmed item (``crops/``), byte for byte as its gallery keeps it;
- for every sighting (``app.report.sightings``) its stretch of source video cut without re-encoding
  (``segments/``, ``app.report.segments``), or where that cannot be done — an image source, a container that
  cannot be cut — the original source file itself (``sources/<SHA-256><ending>``, once however many sightings
  use it);
- ``package-manifest.json`` (``app.report.package_manifest``): every other file with its SHA-256, size and what
  it is, and per sighting what the package holds of it, signed with the installation's key.

A source file must still have the SHA-256 ingest recorded for it: one that is missing, unreadable or changed is
a recorded gap of its sighting (in the manifest, and in ``PackageResult.gaps``), not a failure of the export.

The zip is written to a temporary file beside the target and moved into place (``engine.kernel.atomic``), so a
failed or stopped export leaves no partial package; files are streamed into it, never read whole. ``progress``
is heard as by ``export_report`` and may raise to stop.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.report.content import Progress, ReportContent, no_progress
from app.report.errors import ReportError
from app.report.export import checked_inputs, prepare_content, write_report
from app.report.package_manifest import PACKAGE_MANIFEST, PackageFile, PackageManifest
from app.report.segments import SegmentError, cut_segment
from app.report.sightings import ReportSighting, sightings_route
from app.store.models import utc_text
from engine.kernel.atomic import atomic_target
from engine.kernel.hashing import sha256_file
from engine.kernel.permissions import owner_only_umask

CHUNK = 1 << 20
PACKAGE_FORMATS = ("pdf", "html")
#: already compressed: stored as they are (deflating them again only costs time)
STORED_ENDINGS = frozenset({".png", ".jpg", ".jpeg", ".webp", ".pdf", ".mp4", ".m4v", ".mov", ".mkv", ".avi",
                            ".webm", ".ts", ".mpg", ".mpeg"})
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class PackageResult:
    path: Path
    report_format: str
    pages: int | None
    files: int  # in the zip, the package manifest included
    size: int  # bytes of the zip
    sightings: int
    gaps: tuple[str, ...]
    warnings: tuple[str, ...]


def safe_name(text: str, limit: int = 60) -> str:
    """``text`` as one harmless file-name part (letters, digits, ``.``, ``_``, ``-``)."""
    return (_UNSAFE.sub("_", text).strip("._") or "x")[:limit]


class _Members:
    """Adds files to the zip, streaming and hashing them, and keeps the ``PackageFile`` of each."""

    def __init__(self, archive: zipfile.ZipFile, stamp: tuple[int, int, int, int, int, int]) -> None:
        self._zip = archive
        self._stamp = stamp
        self.files: list[PackageFile] = []
        self.by_sha: dict[str, str] = {}  # SHA-256 of a source file → its name in the zip

    def _info(self, name: str, size: int) -> zipfile.ZipInfo:
        info = zipfile.ZipInfo(name, self._stamp)
        info.compress_type = zipfile.ZIP_STORED if Path(name).suffix.lower() in STORED_ENDINGS else \
            zipfile.ZIP_DEFLATED
        info.external_attr = 0o600 << 16
        info.file_size = size  # lets the zip choose ZIP64 for files past 2 GiB
        return info

    def add_file(self, path: Path, name: str, kind: str, about: dict[str, Any],
                 expect_sha256: str | None = None) -> PackageFile:
        digest = hashlib.sha256()
        size = 0
        with open(path, "rb") as source, self._zip.open(self._info(name, path.stat().st_size), "w") as target:
            while block := source.read(CHUNK):
                digest.update(block)
                target.write(block)
                size += len(block)
        if expect_sha256 is not None and digest.hexdigest() != expect_sha256:
            raise ReportError(f"{path} changed while it was being packaged (its SHA-256 is now "
                              f"{digest.hexdigest()}, {expect_sha256} a moment before): export the package again")
        entry = PackageFile(name, digest.hexdigest(), size, kind, about)
        self.files.append(entry)
        return entry

    def add_bytes(self, name: str, data: bytes) -> None:
        self._zip.writestr(self._info(name, len(data)), data)


def _crops(content: ReportContent, members: _Members) -> None:
    for number, result in enumerate(content.confirmed, 1):
        if result.crop_path is None:
            continue
        path = Path(result.crop_path)
        members.add_file(path, f"crops/{number:03d}-{safe_name(result.item_id)}{path.suffix.lower()}", "crop",
                         {"item": result.item_id, "gallery": result.gallery_id,
                          "sha256_recorded": result.crop_sha256})


def _original(path: Path, digest: str, members: _Members, about: dict[str, Any]) -> str:
    """The name in the zip of the source file itself (added once, under its SHA-256)."""
    if digest not in members.by_sha:
        name = f"sources/{digest}{path.suffix.lower()}"
        members.add_file(path, name, "source", about, expect_sha256=digest)
        members.by_sha[digest] = name
    return members.by_sha[digest]


def _source(sighting: ReportSighting, index: int, path_text: str, items, content: ReportContent, work: Path,
            members: _Members) -> dict[str, Any]:
    """What the package holds of one source file of a sighting (a segment, the file itself, or a gap)."""
    shown = content.shown(path_text)
    recorded = next((item.source_sha256 for item in items if item.source_sha256), None)
    entry: dict[str, Any] = {"file": shown, "items": [item.id for item in items], "sha256_recorded": recorded}
    path = Path(path_text)
    if not path.is_absolute():
        entry["gap"] = f"source file {shown} is recorded by a relative path: where it lies is not known"
        return entry
    if not path.is_file():
        entry["gap"] = f"source file {shown} is missing: the package holds no footage of this sighting"
        return entry
    try:
        before = path.stat()
        digest = sha256_file(path)
    except OSError as exc:
        entry["gap"] = f"source file {shown} cannot be read ({exc.strerror or exc})"
        return entry
    entry["sha256"] = digest
    if recorded is not None and digest != recorded:
        entry["gap"] = (f"source file {shown} has changed since ingest (its SHA-256 is {digest}, ingest recorded "
                        f"{recorded}): not packaged")
        return entry
    if recorded is None:
        entry["note"] = "ingest recorded no SHA-256 for this source: the one given is the file's at export"
    frames = [item.frame for item in items if item.frame is not None]
    about = {"sighting": sighting.number, "camera": sighting.camera, "source": shown, "source_sha256": digest}
    if frames:
        first, last = min(frames), max(frames)
        part = f"-{index}" if index > 1 else ""
        name = f"segments/sighting-{sighting.number:03d}-{safe_name(sighting.camera or 'camera')}{part}"
        cut_file = work / f"segment-{sighting.number}-{index}{path.suffix.lower()}"
        try:
            cut = cut_segment(path, first, last, cut_file)
        except SegmentError as exc:
            entry["cut"] = f"not cut ({exc}); the original file is in the package instead"
        else:
            now = path.stat()
            if (now.st_size, now.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
                raise ReportError(f"source file {path} changed while it was being cut: export the package again")
            segment = {"frames_asked": [first, last], "frames": [cut.first, cut.last], "frame_count": cut.frames,
                       "source_seconds": [cut.start_seconds, cut.end_seconds],
                       "timestamp_shift_seconds": cut.offset_seconds, "codec": cut.codec,
                       "times": [sighting.start, sighting.end]}
            member = members.add_file(cut_file, name + path.suffix.lower(), "segment", {**about, **segment})
            cut_file.unlink()
            entry.update(files=[member.name], segment=segment)
            return entry
    entry["files"] = [_original(path, digest, members, about)]
    return entry


def _sighting(sighting: ReportSighting, content: ReportContent, work: Path, members: _Members) -> dict[str, Any]:
    sources = [_source(sighting, index, path, items, content, work, members)
               for index, (path, items) in enumerate(sighting.sources().items(), 1)]
    duration = None if sighting.duration is None else round(sighting.duration, 3)
    return {"number": sighting.number, "camera": sighting.camera, "start": sighting.start, "end": sighting.end,
            "duration": duration, "items": list(sighting.sighting.items), "best": sighting.sighting.best,
            "frames": list(sighting.frames), "sources": sources}


@owner_only_umask()
def export_package(db_path: str | Path, case_id: int, out_path: str | Path, *, report_format: str = "pdf",
                   blur_faces: bool = False, progress: Progress | None = None, apart: bool = False,
                   show_paths: bool = False) -> PackageResult:
    """Write the evidence package of case ``case_id`` of ``db_path`` to ``out_path`` (a ``.zip``, owner-only),
    with the report as ``report_format`` ("pdf" or "html"); the other options as for ``export_report``."""
    report = progress or no_progress
    if Path(out_path).suffix.lower() != ".zip":
        raise ReportError(f"package file {out_path} must end in .zip")
    if report_format not in PACKAGE_FORMATS:
        raise ReportError(f"report format {report_format!r} must be one of {', '.join(PACKAGE_FORMATS)}")
    db, out = checked_inputs(db_path, out_path)
    content, key = prepare_content(db, case_id, blur_faces=blur_faces, progress=report, show_paths=show_paths)
    with tempfile.TemporaryDirectory(prefix=".lineup-package-", dir=out.parent) as folder, \
            atomic_target(out, suffix=".zip") as tmp:
        work = Path(folder)
        written = write_report(content, key, work / f"report.{report_format}", progress=report, apart=apart)
        with zipfile.ZipFile(tmp, "w", allowZip64=True) as archive:
            members = _Members(archive, content.exported_at.utctimetuple()[:6])
            members.add_file(written.report_path, written.report_path.name, "report", {"format": report_format})
            members.add_file(written.manifest_path, written.manifest_path.name, "report-manifest", {})
            report(0, len(content.confirmed), "Packaging the crops")
            _crops(content, members)
            sightings = []
            for done, sighting in enumerate(content.sightings):
                report(done, len(content.sightings), f"Packaging sighting {done + 1} of {len(content.sightings)}")
                sightings.append(_sighting(sighting, content, work, members))
            manifest = PackageManifest(content.case.id, content.case.title, utc_text(content.exported_at),
                                       content.software, written.report_path.name, written.manifest_path.name,
                                       tuple(members.files), tuple(sightings), sightings_route(content.sightings))
            manifest = manifest.signed_with(key)
            members.add_bytes(PACKAGE_MANIFEST, json.dumps(manifest.to_json(), ensure_ascii=False,
                                                           indent=1).encode("utf-8"))
        report(1, 1, "Package written")
    return PackageResult(out, report_format, written.pages, len(members.files) + 1, out.stat().st_size,
                         len(content.sightings), tuple(manifest.gaps()), content.warnings)
