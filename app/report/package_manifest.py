"""The manifest of an evidence package, ``package-manifest.json`` inside the zip: every other file of the
package with its SHA-256, size and what it is, and the case's sightings with what the package holds of each.

A file's ``kind`` is one of ``FILE_KINDS``: the report, its manifest (``app.report.manifest``), the crop of a
confirmed item, the segment of a sighting cut from its source video (``app.report.segments``: the frames and
source times it holds, the source file's SHA-256) or a source file itself (an image, or a video that could not
be cut), named by its SHA-256. ``about`` says which item, sighting and source file a file belongs to.

Each sighting lists its sources: the file as the gallery recorded it, the SHA-256 recorded at ingest and the one
found at export, the package files that carry it, and a ``gap`` when the package carries nothing of it (the
source is missing, changed since ingest, or unreadable). A gap is recorded, not an error: the package still
holds the report and everything else, and ``lineup report verify`` names each gap.

``signer`` and ``signature`` work as in the report's manifest: Ed25519 over the canonical JSON of everything else
(``app.report.signing``), so neither a listed hash nor a gap can be edited without the key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from app.report.errors import ReportError
from app.report.signing import ALGORITHM, SigningKey
from app.store.models import canonical_json

PACKAGE_FORMAT = "lineup-evidence-package/1"
PACKAGE_MANIFEST = "package-manifest.json"
FILE_KINDS = ("report", "report-manifest", "crop", "segment", "source")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class PackageFile:
    """One file of the package: its name in the zip, SHA-256, size in bytes, kind and what it is about."""

    name: str
    sha256: str
    size: int
    kind: str
    about: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "sha256": self.sha256, "size": self.size, "kind": self.kind, **self.about}

    @classmethod
    def from_json(cls, data: Any) -> PackageFile:
        if not isinstance(data, dict):
            raise TypeError(f"a file entry must be an object, got {type(data).__name__}")
        name, digest, size, kind = data["name"], data["sha256"], data["size"], data["kind"]
        if not isinstance(name, str) or not name:
            raise ValueError(f"file name {name!r} is not a name")
        if not isinstance(digest, str) or not _HEX64.match(digest):
            raise ValueError(f"file {name}: SHA-256 {digest!r} is not 64 hex digits")
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ValueError(f"file {name}: size {size!r} is not a byte count")
        if kind not in FILE_KINDS:
            raise ValueError(f"file {name}: kind {kind!r} is not one of {', '.join(FILE_KINDS)}")
        about = {k: v for k, v in data.items() if k not in ("name", "sha256", "size", "kind")}
        return cls(name, digest, size, kind, about)


@dataclass(frozen=True)
class PackageManifest:
    case_id: int
    case_title: str
    exported_at: str
    software: str
    report_file: str
    report_manifest: str
    files: tuple[PackageFile, ...]
    sightings: tuple[dict[str, Any], ...]
    route: str
    signer_public_key: str = ""
    signer_fingerprint: str = ""
    signature: str = ""

    def body(self) -> dict[str, Any]:
        """Everything but the signature: what the signature signs."""
        return {"format": PACKAGE_FORMAT, "case_id": self.case_id, "case_title": self.case_title,
                "exported_at": self.exported_at, "software": self.software,
                "report": {"file": self.report_file, "manifest": self.report_manifest},
                "files": [f.to_json() for f in self.files], "route": self.route, "sightings": list(self.sightings),
                "signer": {"algorithm": ALGORITHM, "public_key": self.signer_public_key,
                           "fingerprint": self.signer_fingerprint}}

    def signed_bytes(self) -> bytes:
        return canonical_json(self.body()).encode("utf-8")

    def signed_with(self, key: SigningKey) -> PackageManifest:
        unsigned = replace(self, signer_public_key=key.public_b64, signer_fingerprint=key.fingerprint, signature="")
        return replace(unsigned, signature=key.sign(unsigned.signed_bytes()))

    def to_json(self) -> dict[str, Any]:
        return {**self.body(), "signature": self.signature}

    def gaps(self) -> list[str]:
        """"sighting N (camera): why" for every source the package carries nothing of."""
        out = []
        for sighting in self.sightings:
            for source in sighting.get("sources", ()):
                if isinstance(source, dict) and source.get("gap"):
                    out.append(f"sighting {sighting.get('number')} ({sighting.get('camera') or '?'}): "
                               f"{source.get('gap')}")
        return out

    @classmethod
    def from_json(cls, data: Any, where: str) -> PackageManifest:
        if not isinstance(data, dict) or data.get("format") != PACKAGE_FORMAT:
            found = data.get("format") if isinstance(data, dict) else type(data).__name__
            raise ReportError(f"{where} is not a Lineup evidence package manifest (format {found!r}, expected "
                              f"{PACKAGE_FORMAT!r})")
        try:
            report, signer = data["report"], data["signer"]
            files = tuple(PackageFile.from_json(entry) for entry in data["files"])
            sightings = data["sightings"]
            if not isinstance(sightings, list) or not all(isinstance(s, dict) for s in sightings):
                raise TypeError("sightings must be a list of objects")
            return cls(int(data["case_id"]), str(data["case_title"]), str(data["exported_at"]),
                       str(data["software"]), str(report["file"]), str(report["manifest"]), files,
                       tuple(sightings), str(data["route"]), str(signer["public_key"]), str(signer["fingerprint"]),
                       str(data["signature"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ReportError(f"{where} lacks a field or has a wrong value ({exc!r})") from None
