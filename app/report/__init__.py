"""Case reports: a case as a PDF (QPdfWriter, no browser) or a self-contained HTML file, with a manifest of
hashes beside it, and the check of a report against its manifest, evidence and audit trail.

``export_report(db_path, case_id, out_path, *, blur_faces=False)`` and ``verify_report(report, db_path)``;
``export_package`` and ``verify_package`` for an evidence package (the report, its manifest, the confirmed
crops and the sightings' source footage in one signed zip); the CLI is ``lineup report export|verify``.
No widgets are imported (drawing uses QtGui only).
"""

from app.report.content import ReportContent, collect_content
from app.report.errors import ReportError
from app.report.export import ReportResult, export_report
from app.report.manifest import Manifest, manifest_path, read_manifest
from app.report.package import PackageResult, export_package
from app.report.package_verify import PackageError, verify_package
from app.report.verify import ReportVerification, verify_report

__all__ = [
    "Manifest",
    "PackageError",
    "PackageResult",
    "ReportContent",
    "ReportError",
    "ReportResult",
    "ReportVerification",
    "collect_content",
    "export_package",
    "export_report",
    "manifest_path",
    "read_manifest",
    "verify_package",
    "verify_report",
]
