"""The manifest beside a report, ``<report>.manifest.json``: what ``lineup report verify`` checks the report
against, signed so that it cannot be edited or re-issued without the installation's key.

It records the report file's SHA-256, the case database and case, the case's first and newest audit entries
(seq and hash) at the time, every piece of evidence (kind, path, SHA-256 of the original file; a path inside
the case folder — the database's folder — is relative to it, so the folder verifies wherever it is copied), the time the
report was made, whether thumbnails were blurred, the software that made it, the fingerprints of the models
that embedded the galleries, the statement of what a score is, and the report's content as
digests: one SHA-256 per step, mark and note (their canonical records in the case database) and one over
them all. ``signer`` holds the Ed25519 public key and its fingerprint (``app.report.signing``); ``signature``
signs the canonical JSON of everything else in the manifest, so the manifest covers itself. Written
atomically.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from app.report.errors import ReportError
from app.report.signing import ALGORITHM, SigningKey
from app.store.models import canonical_json
from engine.kernel import jsonio
from engine.kernel.atomic import atomic_write_json

MANIFEST_FORMAT = "lineup-report-manifest/2"
MANIFEST_SUFFIX = ".manifest.json"
#: a manifest lists hashes, not content: even a case of thousands of steps stays far below this
MAX_MANIFEST_BYTES = 32 * 1024 * 1024
CONTENT_KINDS = ("steps", "marks", "notes")


def manifest_path(report_path: str | Path) -> Path:
    report_path = Path(report_path)
    return report_path.with_name(report_path.name + MANIFEST_SUFFIX)


def _sha256(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def content_digests(records: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Per step, mark and note the SHA-256 of its canonical record, and ``"all"`` over those digests."""
    out: dict[str, Any] = {kind: {key: _sha256(value) for key, value in sorted(records.get(kind, {}).items())}
                           for kind in CONTENT_KINDS}
    out["all"] = _sha256({kind: out[kind] for kind in CONTENT_KINDS})
    return out


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
    software: str = ""
    content: Mapping[str, Any] = field(default_factory=dict)
    signer_public_key: str = ""
    signer_fingerprint: str = ""
    signature: str = ""
    #: the models that embedded the galleries searched, and what a score is (both signed with the rest)
    model_fingerprints: tuple[str, ...] = ()
    statement: str = ""

    def body(self) -> dict[str, Any]:
        """Everything but the signature: what the signature signs."""
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
            "software": self.software,
            "content": dict(self.content),
            "signer": {"algorithm": ALGORITHM, "public_key": self.signer_public_key,
                       "fingerprint": self.signer_fingerprint},
            **({"model_fingerprints": list(self.model_fingerprints)} if self.model_fingerprints else {}),
            **({"statement": self.statement} if self.statement else {}),
        }

    def signed_bytes(self) -> bytes:
        return canonical_json(self.body()).encode("utf-8")

    def signed_with(self, key: SigningKey) -> Manifest:
        """This manifest with ``key``'s public key and a signature over its body."""
        unsigned = replace(self, signer_public_key=key.public_b64, signer_fingerprint=key.fingerprint, signature="")
        return replace(unsigned, signature=key.sign(unsigned.signed_bytes()))

    def to_json(self) -> dict[str, Any]:
        return {**self.body(), "signature": self.signature}

    @classmethod
    def from_json(cls, data: Any, where: Path) -> Manifest:
        if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
            found = data.get("format") if isinstance(data, dict) else type(data).__name__
            older = " (an unsigned manifest of an older Lineup: export the report again)" if found == \
                "lineup-report-manifest/1" else ""
            raise ReportError(f"{where} is not a Lineup report manifest (format {found!r}, expected "
                              f"{MANIFEST_FORMAT!r}){older}")
        try:
            report, head, signer = data["report"], data["audit_head"], data["signer"]
            evidence = tuple(ManifestEvidence(str(e["kind"]), str(e.get("label", "")), str(e["path"]),
                                              str(e["sha256"])) for e in data["evidence"])
            content = data["content"]
            if not isinstance(content, dict):
                raise TypeError("content must be an object")
            return cls(str(report["file"]), str(report["format"]), str(report["sha256"]), str(data["db_path"]),
                       int(data["case_id"]), str(data["case_first_entry"]), int(head["seq"]), str(head["hash"]),
                       evidence, str(data["exported_at"]), bool(data["blur_faces"]), str(data["software"]),
                       content, str(signer["public_key"]), str(signer["fingerprint"]), str(data["signature"]),
                       tuple(str(m) for m in data.get("model_fingerprints", ())), str(data.get("statement", "")))
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
        data = jsonio.read(path, expect=dict, max_bytes=MAX_MANIFEST_BYTES)
    except (OSError, ValueError) as exc:
        raise ReportError(f"manifest {path} cannot be read: {exc}") from None
    return Manifest.from_json(data, path)
