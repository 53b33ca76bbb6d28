"""The app names the networks behind a ranking (app/provenance.py): the detail pane's explanation of a
find-similar step on a footage gallery names the re-identification network that made its ``appearance`` view
(the shipped one by version, a user's ONNX file by name; the checkpoint otherwise), attribute readings of the
pretrained attribute network appear as "attribute network" with its version, and the window's gallery summary
names the network and the evidence sources the gallery holds."""

from __future__ import annotations

import pytest
from fixed_query_encoder import FixedQueryEncoder
from network_galleries import footage_gallery, onnx_fingerprint, shipped_fingerprint

from app.main_window import MainWindow
from app.provenance import SOURCE_LABELS, similarity_line, view_network
from app.state import AppState
from app.views.detail import DetailPane, explanation_html
from engine.index.evidence_table import SOURCES
from engine.perception.pretrained.registry import ATTRIBUTE_NETWORK, shipped
from engine.retrieval.evidence.ranking import explanation_line
from engine.retrieval.search import SearchSession, StepQuery

WAIT = 20_000
REID = "person-reidentification-retail-0287 (FP32, Intel Open Model Zoo 2023.0)"
ATTRIBUTES = f"{ATTRIBUTE_NETWORK} (FP32, Intel Open Model Zoo 2023.0)"


@pytest.fixture
def window(qtbot, tmp_path):
    gallery = footage_gallery(tmp_path / "footage", shipped_fingerprint())
    state = AppState()
    assert state.open_store(tmp_path / "cases.db", actor="tester")
    window = MainWindow(state)
    qtbot.addWidget(window)
    with qtbot.waitSignal(state.gallery_changed, timeout=WAIT):
        assert window.open_gallery(gallery.root) is not None
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    yield window
    window.close()


def test_every_evidence_source_has_one_label():
    assert set(SOURCE_LABELS) == set(SOURCES)
    assert SOURCE_LABELS["pretrained"] == "attribute network" and shipped(ATTRIBUTE_NETWORK).version == ATTRIBUTES


def test_the_detail_pane_names_the_network_of_a_find_similar_step(qtbot, window):
    state = window.state
    assert window.new_case("Red top on platform 1") is not None
    with qtbot.waitSignal(state.step_recorded, timeout=WAIT):
        state.find_similar("i0")
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    assert state.step_state(state.head_step_id).view == "appearance"
    assert window.results.select_item("i1")
    qtbot.waitUntil(lambda: window.detail.explanation() is not None, timeout=WAIT)
    shown = window.detail.why.text()
    assert "(view appearance)" in shown
    assert f"<br>Similarity from the re-identification network {REID}.<br>" in shown


def test_the_gallery_summary_names_the_network_and_the_evidence_sources(window):
    lines = window.show_gallery_info()
    assert lines == ["Gallery footage: 8 items",
                     f"Find similar ranks by the re-identification network {REID}",
                     f"Attribute evidence: pixels, attribute network {ATTRIBUTES}"]
    assert window.banner.text() == "\n".join(lines) and window.banner.kind == "info"
    assert window.case_label.toolTip() == "\n".join(lines)
    assert window.gallery_info_action.text() == "Gallery &information"


def test_no_gallery_no_summary(qtbot, tmp_path):
    state = AppState()
    window = MainWindow(state)
    qtbot.addWidget(window)
    assert window.show_gallery_info() == [] and window.banner.text() == "Open a gallery first (Gallery menu)"
    assert window.case_label.toolTip() == ""


def test_a_users_onnx_network_and_the_checkpoint_are_named_too(qtbot, tmp_path):
    onnx = footage_gallery(tmp_path / "onnx", onnx_fingerprint())
    step = SearchSession(onnx).step(StepQuery(example="i0"))
    explained = step.explain("i1")
    pane = DetailPane()
    qtbot.addWidget(pane)
    pane.set_explanation(explained, similarity_line(view_network(onnx, step.view), step.view))
    assert "Similarity from your re-identification network station-reid.onnx." in pane.why.text()

    world = footage_gallery(tmp_path / "world", None)
    step = SearchSession(world).step(StepQuery(example="i0"))
    assert step.view == "rgb"
    line = similarity_line(view_network(world, step.view), step.view)
    assert line == "Similarity from the checkpoint's model."
    assert similarity_line(view_network(onnx, "biometrics"), "biometrics") == line  # ranks by rgb
    grey = similarity_line(shipped_fingerprint(), "appearance:grey")
    assert grey == f"Similarity from the re-identification network {REID} on grey copies of the query and the crops."


def test_attribute_readings_name_the_attribute_network(tmp_path):
    gallery = footage_gallery(tmp_path / "footage", shipped_fingerprint(),
                              sources=("pixels", "model", "objects", "pretrained"))
    step = SearchSession(gallery, FixedQueryEncoder(), attribute_weight=0.5).step(StepQuery(text="a man in a red top"))
    html = explanation_html(step.explain("i0"))
    assert "colour of the top: red by the pixels (0.90); red by the model heads (0.90); red by the carried " \
        "objects (0.90); red by the attribute network (0.90); the description says red" in html
    assert html.endswith(f"<i>attribute network</i>: {ATTRIBUTES}")
    alone = footage_gallery(tmp_path / "network-only", None, sources=("pretrained",))
    step = SearchSession(alone, FixedQueryEncoder(), attribute_weight=0.5).step(StepQuery(text="a red top"))
    # the results grid's tooltip line, as the window asks for it
    assert "✓ colour of the top: red by the attribute network (0.90)" in \
        explanation_line(step.explain("i0"), labels=SOURCE_LABELS)
    # the CLI's words are the same (engine.retrieval.evidence.wording): no internal source or key names
    assert "✓ colour of the top: red by the attribute network (0.90)" in explanation_line(step.explain("i0"))
    without = footage_gallery(tmp_path / "pixels-only", None, sources=("pixels",))
    plain = SearchSession(without, FixedQueryEncoder(), attribute_weight=0.5).step(StepQuery(text="a red top"))
    assert "attribute network" not in explanation_html(plain.explain("i0"))
