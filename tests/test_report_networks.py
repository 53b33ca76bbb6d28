"""The case report names the network behind each step's ranking (app/report/markup.py, app/provenance.py): a
find-similar step on a footage gallery's ``appearance`` view gives the shipped re-identification network's
version and training data, or a user's ONNX file by name and hash; a checkpoint view gives the checkpoint; the
notices carry the Apache-2.0 line for the shipped networks only when the case used one; the galleries section
lists each gallery's network-made views and evidence sources."""

from __future__ import annotations

import html
import shutil

import pytest
from network_galleries import footage_gallery, onnx_fingerprint, shipped_fingerprint
from report_cases import chain_step, report_case

from app.report import collect_content, export_report
from app.report.html import render_html
from app.store import CaseStore
from app.store.from_engine import gallery_identity
from engine.perception.pretrained.registry import ATTRIBUTE_NETWORK, FACE_NETWORK, MSMT17, shipped

pytestmark = pytest.mark.usefixtures("qapp")

REID = shipped("balanced")


def footage_case(tmp_path, network, sources=("pixels", "pretrained"), confirm=False):
    """A text step on ``rgb`` (the checkpoint), then find similar to i0 on ``appearance``."""
    gallery = footage_gallery(tmp_path / "footage", network, sources)
    db = tmp_path / "cases.sqlite"
    with CaseStore.open(db, actor="examiner") as store:
        case = store.create_case("Red top on platform 1")
        gallery_id = store.add_gallery(case, **gallery_identity(gallery))
        text, kept = chain_step(gallery_id, list(gallery.ids), 6, 1, query_text="a man in a red top", view="rgb")
        store.record_step(case, text)
        similar, kept = chain_step(gallery_id, kept, 3, 2, query_kind="example", example_item="i0",
                                   view="appearance" if network else "rgb")
        store.record_step(case, similar)
        if confirm:
            store.mark(case, gallery_id, kept[0], "confirmed")
    return db, case, gallery


def page_of(db, case, **options):
    with CaseStore.open(db) as store:
        content = collect_content(store, case, **options)
    return content, html.unescape(render_html(content))


def row(page, label, step):
    """The text of the ``label`` row of chain step ``step`` (tags stripped)."""
    section = page.split(f"Step {step} · ", 1)[1].split("<h3>", 1)[0]
    cell = section.split(f"<b>{label}</b></td>", 1)[1].split("</td>", 2)[0]
    return cell.split(">", 1)[1]


def test_a_find_similar_step_names_the_shipped_network_and_its_training_data(tmp_path):
    db, case, gallery = footage_case(tmp_path, shipped_fingerprint())
    content, page = page_of(db, case)
    assert content.chain[1].network["version"] == REID.version and content.chain[0].network is None
    assert row(page, "Searched view", 2) == "appearance"
    ranked = row(page, "Ranked by", 2)
    assert ranked == (f"the re-identification network {REID.version}; trained on {MSMT17}")
    assert "person-reidentification-retail-0287 (FP32, Intel Open Model Zoo 2023.0)" in ranked
    assert row(page, "Ranked by", 1) == f"the checkpoint's model (fingerprint {gallery.model_fingerprint})"


def test_the_licence_notice_appears_when_a_step_used_a_shipped_network(tmp_path):
    db, case, _ = footage_case(tmp_path, shipped_fingerprint())
    _, page = page_of(db, case)
    notice = page.split("<b>Pretrained networks.</b> ", 1)[1].split("</p>", 1)[0]
    assert notice == (f"{REID.name} (ranked step 2); {ATTRIBUTE_NETWORK} (attribute evidence for step 1): Intel "
                      "Open Model Zoo 2023.0, shipped unmodified; copyright Intel Corporation, licensed under the "
                      "Apache License 2.0 (Apache-2.0).")


def test_the_galleries_section_lists_network_views_and_evidence_sources(tmp_path):
    db, case, _ = footage_case(tmp_path, shipped_fingerprint(), sources=("pixels", "model", "objects", "pretrained"))
    content, page = page_of(db, case)
    assert content.galleries[0].evidence_sources == ("pixels", "model", "objects", "pretrained")
    assert (f"views appearance by {REID.version}; attribute evidence: pixels, model heads, carried objects, "
            f"attribute network {shipped(ATTRIBUTE_NETWORK).version}") in page


def test_a_users_onnx_network_is_named_by_its_file_and_needs_no_licence_line(tmp_path):
    db, case, _ = footage_case(tmp_path, onnx_fingerprint(), sources=("pixels",))
    _, page = page_of(db, case)
    assert row(page, "Ranked by", 2) == ("your re-identification network station-reid.onnx "
                                         "(SHA-256 abababababababab…); training data not recorded")
    assert "Pretrained networks." not in page and "Apache" not in page
    assert "attribute evidence: pixels" in page


def test_a_world_case_has_no_network_notice(tmp_path):
    built = report_case(tmp_path)
    _, page = page_of(built.db, built.case_id)
    assert "Pretrained networks." not in page
    assert row(page, "Ranked by", 1).startswith("the checkpoint's model (fingerprint ")


def test_face_blurring_adds_the_face_detector_to_the_notice(tmp_path):
    db, case, _ = footage_case(tmp_path, None, sources=(), confirm=True)
    content, page = page_of(db, case, blur_faces=True)
    assert content.confirmed[0].thumbnail.blurred
    notice = page.split("<b>Pretrained networks.</b> ", 1)[1].split("</p>", 1)[0]
    assert notice.startswith(f"{FACE_NETWORK} (face blurring): Intel Open Model Zoo 2023.0")


def test_a_gallery_gone_at_export_says_the_network_is_not_known(tmp_path):
    db, case, gallery = footage_case(tmp_path, shipped_fingerprint())
    shutil.rmtree(gallery.root)
    _, page = page_of(db, case)
    assert row(page, "Ranked by", 2).startswith(f"not known: gallery {gallery.root.resolve()} cannot be opened")
    assert "Pretrained networks." not in page


def test_the_pdf_export_carries_the_same_content(tmp_path):
    db, case, _ = footage_case(tmp_path, shipped_fingerprint())
    result = export_report(db, case, tmp_path / "case.pdf")
    assert result.pages >= 1 and result.report_path.read_bytes().startswith(b"%PDF")
