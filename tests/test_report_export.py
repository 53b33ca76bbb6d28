"""Exporting a case report (app/report/export.py): the HTML is self-contained and holds the chain, counts,
hashes and audit entries; the PDF is a valid multi-page file that grows with the chain; the manifest lists
the report's hash, the audit head and every piece of evidence; nothing is left half-written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from report_cases import N_ITEMS, report_case

from app.report import ReportError, export_report, read_manifest, verify_report
from app.report import export as export_module
from app.report.manifest import MANIFEST_FORMAT
from app.store import CaseStore
from engine.kernel.hashing import sha256_file

pytestmark = pytest.mark.usefixtures("qapp")  # a QApplication, as in the app (not a bare QGuiApplication)


def pdf_pages(path: Path) -> int:
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", path.read_bytes()))


@pytest.fixture
def built(tmp_path):
    return report_case(tmp_path)


def test_the_html_report_is_self_contained_and_complete(built, tmp_path):
    result = export_report(built.db, built.case_id, tmp_path / "case.html")
    page = result.report_path.read_text(encoding="utf-8")
    assert result.format == "html" and result.pages is None
    assert page.startswith("<!DOCTYPE html>") and "Grey hoodie at the station" in page
    for text in ("man in a grey hoodie", "black backpack", f"{N_ITEMS:,} → 12", "12 → 6", "6 → 3",
                 "M (set by the analyst)", "C (attribute parser)", "keep top ρ = 0.5", "cameras c0, c1, c2",
                 "Seen leaving by the north exit.", "Rejected results (1)", "same bag"):
        assert text in page, text
    sources = re.findall(r'<img src="([^"]+)"', page)
    assert len(sources) == 3 + 2 + 2 + 1 + 2  # three plots, sketch and IR, two thumbnails, the sightings timeline
    # and each sighting's best crop
    assert all(src.startswith("data:image/png;base64,") for src in sources)
    assert "http://" not in page and "https://" not in page
    with CaseStore.open(built.db) as store:
        trail = store.audit_trail(built.case_id)
        state = store.load_case(built.case_id)
    for entry in trail:
        assert entry.hash in page and f"<td valign=\"top\">{entry.seq}</td>" in page
    for item in built.confirmed:
        assert item in page
    assert sha256_file(built.sketch) in page and sha256_file(built.ir) in page
    assert state.galleries[0].gallery_fingerprint in page
    assert "Faces in the thumbnails are blurred" not in page


def test_the_manifest_records_report_hash_audit_head_and_evidence(built, tmp_path):
    result = export_report(built.db, built.case_id, tmp_path / "case.html", blur_faces=True)
    assert result.manifest_path == tmp_path / "case.html.manifest.json"
    raw = json.loads(result.manifest_path.read_text())
    assert raw["format"] == MANIFEST_FORMAT and raw["blur_faces"] is True
    manifest = read_manifest(result.manifest_path)
    assert manifest.report_sha256 == sha256_file(result.report_path) == result.sha256
    assert (manifest.db_path, manifest.case_id) == (built.db.name, built.case_id)  # relative to the case folder
    with CaseStore.open(built.db) as store:
        trail = store.audit_trail(built.case_id)
    assert (manifest.audit_head_seq, manifest.audit_head_hash) == (trail[-1].seq, trail[-1].hash)
    assert manifest.case_first_entry == trail[0].hash
    kinds = sorted(e.kind for e in manifest.evidence)
    assert kinds == ["crop", "crop", "gallery", "ir", "sketch"] and result.evidence == 5
    for entry in manifest.evidence:
        if entry.kind != "gallery":
            assert sha256_file(built.db.parent / entry.path) == entry.sha256


def test_the_pdf_is_a_multi_page_pdf_that_grows_with_the_chain(built, tmp_path):
    short = export_report(built.db, built.case_id, tmp_path / "case.pdf")
    data = short.report_path.read_bytes()
    assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")
    assert short.pages >= 2 and pdf_pages(short.report_path) == short.pages
    (tmp_path / "long").mkdir()
    long_case = report_case(tmp_path / "long", extra_steps=6)
    longer = export_report(long_case.db, long_case.case_id, tmp_path / "long.pdf")
    assert longer.pages > short.pages and pdf_pages(longer.report_path) == longer.pages


def test_format_and_paths_are_checked(built, tmp_path):
    with pytest.raises(ReportError, match=r"must end in \.pdf or \.html"):
        export_report(built.db, built.case_id, tmp_path / "case.docx")
    with pytest.raises(ReportError, match="does not exist"):
        export_report(tmp_path / "none.sqlite", built.case_id, tmp_path / "case.pdf")
    assert not (tmp_path / "none.sqlite").exists()
    with pytest.raises(ReportError, match="folder"):
        export_report(built.db, built.case_id, tmp_path / "missing" / "case.pdf")
    with pytest.raises(ValueError, match="has no case 7"):
        export_report(built.db, 7, tmp_path / "case.pdf")


def test_a_failed_export_leaves_the_old_report_whole(built, tmp_path, monkeypatch):
    first = export_report(built.db, built.case_id, tmp_path / "case.pdf")
    before = first.report_path.read_bytes(), first.manifest_path.read_bytes()

    def broken(content, path, **_options):
        Path(path).write_bytes(b"%PDF-1.4 half")
        raise OSError("disk full")

    monkeypatch.setattr(export_module, "render_pdf", broken)
    with pytest.raises(OSError, match="disk full"):
        export_report(built.db, built.case_id, tmp_path / "case.pdf")
    assert (first.report_path.read_bytes(), first.manifest_path.read_bytes()) == before
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".case.pdf")]


def test_an_empty_case_exports_and_its_text_is_escaped(tmp_path):
    db = tmp_path / "cases.sqlite"
    with CaseStore.open(db, actor="examiner") as store:
        case = store.create_case('<script>alert("x")</script> & co', "line one\nline <two>")
    page = export_report(db, case, tmp_path / "empty.html").report_path.read_text(encoding="utf-8")
    assert "<script>" not in page and "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; co" in page
    assert "No search step was recorded." in page and "No search step on the current branch." in page
    assert "No result was confirmed." in page and "No result was rejected." in page
    pdf = export_report(db, case, tmp_path / "empty.pdf")
    assert pdf.pages >= 1 and pdf.evidence == 0
    assert verify_report(pdf.report_path, db).ok
