"""The manifest beside a report, ``<report>.manifest.json``: what ``lineup report verify`` checks the report
against. It records the report file's SHA-256, the case database and case, the case's first and newest audit
entries (seq and hash) at the time, every piece of evidence (kind, path, SHA-256 of the original file), the
time the report was made and whether thumbnails were blurred. Written atomically."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.report.errors import ReportError
from engine.atomic import atomic_write_json

MANIFEST_FORMAT = "lineup-report-manifest/1"
MANIFEST_SUFFIX = ".manifest.json"


def manifest_path(report_path: str | Path) -> Path:
    report_path = Path(report_path)
    return report_path.with_name(report_path.name + MANIFEST_SUFFIX)


@dataclass(frozen=True)
class ManifestEvidence:
    kind: str
    label: str
    path: str
    sha256: str


@dataclass(frozen=True)
class Manifest:
    report_file: str
    report_format: str
    report_sha256: str
    db_path: str
    case_id: int
    case_first_entry: str
    audit_head_seq: int
    audit_head_hash: str
    evidence: tuple[ManifestEvidence, ...]
    exported_at: str
    blur_faces: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "format": MANIFEST_FORMAT,
            "report": {"file": self.report_file, "format": self.report_format, "sha256": self.report_sha256},
            "db_path": self.db_path,
            "case_id": self.case_id,
            "case_first_entry": self.case_first_entry,
            "audit_head": {"seq": self.audit_head_seq, "hash": self.audit_head_hash},
            "evidence": [{"kind": e.kind, "label": e.label, "path": e.path, "sha256": e.sha256} for e in self.evidence],
            "exported_at": self.exported_at,
            "blur_faces": self.blur_faces,
        }

    @classmethod
    def from_json(cls, data: Any, where: Path) -> Manifest:
        if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
            found = data.get("format") if isinstance(data, dict) else type(data).__name__
            raise ReportError(f"{where} is not a Lineup report manifest (format {found!r}, expected "
                              f"{MANIFEST_FORMAT!r})")
        try:
            report, head = data["report"], data["audit_head"]
            evidence = tuple(ManifestEvidence(str(e["kind"]), str(e.get("label", "")), str(e["path"]),
                                              str(e["sha256"])) for e in data["evidence"])
            return cls(str(report["file"]), str(report["format"]), str(report["sha256"]), str(data["db_path"]),
                       int(data["case_id"]), str(data["case_first_entry"]), int(head["seq"]), str(head["hash"]),
                       evidence, str(data["exported_at"]), bool(data["blur_faces"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ReportError(f"manifest {where} lacks a field or has a wrong value ({exc!r})") from None


def write_manifest(path: Path, manifest: Manifest) -> Path:
    return atomic_write_json(path, manifest.to_json(), indent=1)


def read_manifest(path: Path) -> Manifest:
    """The manifest at ``path``; ``ReportError`` when it is missing or unreadable."""
    if not path.is_file():
        raise ReportError(f"the report has no manifest: {path} is missing (the report cannot be checked without "
                          f"it; export the report again)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReportError(f"manifest {path} cannot be read: {exc}") from None
    return Manifest.from_json(data, path)
