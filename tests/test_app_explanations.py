"""Explanations in the app: the detail pane shows why the selected item ranked where it did, the results grid's
tooltip carries a one-line explanation (app/views/detail.py, app/main_window.py)."""

from __future__ import annotations

import numpy as np
import pytest
from fixed_query_encoder import FixedQueryEncoder
from PySide6.QtCore import Qt

from app.views.detail import DetailPane, explanation_html
from engine.index import Gallery
from engine.index import evidence_table as store
from engine.kernel.ontology import ONTOLOGY
from engine.retrieval.encoding.views import gallery_views
from engine.retrieval.search import SearchSession, StepQuery

WAIT = 20_000
TEXT = "a man in a red shirt"


Encoder = FixedQueryEncoder


def colour(value, p, c):
    values = ONTOLOGY.attributes["top_color"]
    rest = (1 - p) / (len(values) - 1)
    return {"version": 1, "probabilities": {"top_color": {v: p if v == value else rest for v in values}},
            "confidence": {"top_color": c}}


@pytest.fixture
def step(tmp_path):
    """A text step over three items: red top (i0), green top (i1), no evidence (i2)."""
    views = gallery_views(4)
    vectors = np.array([[0.6, 0.8, 0, 0], [0.9, np.sqrt(1 - 0.81), 0, 0], [0.8, 0.6, 0, 0]], np.float32)
    gallery = Gallery.create(tmp_path / "g", views, "ckpt")
    gallery.add([{"id": f"i{k}", "source": "s.mp4", "frame": k} for k in range(3)], {v: vectors for v in views})
    store.append(gallery.root, ["i0", "i1"], [{"pixels": colour("red", 0.9, 1.0)},
                                              {"pixels": colour("green", 0.9, 1.0)}])
    return gallery, SearchSession(gallery, Encoder(), attribute_weight=0.5).step(StepQuery(text=TEXT))


@pytest.fixture
def pane(qtbot):
    widget = DetailPane()
    qtbot.addWidget(widget)
    widget.show()
    yield widget
    widget.wait()


def test_explanation_html_names_the_parts_and_each_attribute(step):
    _, result = step
    html = explanation_html(result.explain("i0"))
    assert "<b>Score" in html and "similarity 0.6" in html and "0.5 × agreement with the description" in html
    assert f"(view {result.view})" in html
    assert "✓</span> colour of the top: red by the pixels (0.90); the description says red" in html
    assert "? gender: not read for this item; the description says male" in html
    assert "top_color" not in html and "gender =" not in html
    mismatch = explanation_html(result.explain("i1"))
    assert "✗</span> colour of the top: green by the pixels (0.90); the description says red" in mismatch
    assert "Attribute evidence: none for this item." in explanation_html(result.explain("i2"))


def test_detail_pane_shows_and_clears_the_explanation(qtbot, pane, step):
    gallery, result = step
    with qtbot.waitSignal(pane.loaded, timeout=WAIT):
        pane.set_gallery_item(gallery, "i0", score=float(result.scores[0]))
    assert pane.explanation() is None and not pane.why.isVisible()
    explained = result.explain("i0")
    pane.set_explanation(explained)
    assert pane.explanation() == explained and pane.why.isVisible()
    assert "colour of the top: red by the pixels" in pane.why.text()
    with qtbot.waitSignal(pane.loaded, timeout=WAIT):
        pane.set_gallery_item(gallery, "i1")  # another item: the old explanation goes
    assert pane.explanation() is None
    pane.set_explanation(result.explain("i1"))
    pane.clear()
    assert pane.explanation() is None and pane.why.text() == ""


@pytest.fixture(scope="module")
def tiny_gallery(tmp_path_factory):
    """A tiny world ingested with a tiny untrained checkpoint, with pixel evidence for every item."""
    import torch

    from app.main_window import CheckpointModels
    from engine.ingest import ModelEncoder, ingest
    from engine.lab.world.build import build_world
    from engine.retrieval.evidence.items import refresh_evidence
    from engine.retrieval.models import create, save

    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("explanations")
    build_world(root / "world", identities=4, images_per_identity=3, seed=3)
    models = CheckpointModels(save(create("tiny", device="cpu"), root / "checkpoint"))
    ingest(root / "world", root / "gallery", ModelEncoder(models.model()))
    refresh_evidence(Gallery.open(root / "gallery"), scenes=False)
    return root / "gallery", models


@pytest.mark.slow  # builds and ingests a tiny world (≈ 8 s on a busy 2-core machine)
def test_main_window_explains_results_in_tooltips_and_the_detail_pane(qtbot, tmp_path, tiny_gallery):
    from app.main_window import MainWindow
    from app.state import AppState
    from app.views.results_model import ResultsModel

    gallery_dir, models = tiny_gallery
    state = AppState()
    assert state.open_store(tmp_path / "cases.db", actor="tester")
    window = MainWindow(state, models)
    qtbot.addWidget(window)
    with qtbot.waitSignal(state.gallery_changed, timeout=WAIT):
        window.open_gallery(gallery_dir)
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    assert window.new_case("Red top") is not None
    window.query_panel.set_text("a woman in a red top and black trousers")
    with qtbot.waitSignal(state.step_recorded, timeout=WAIT):
        window.query_panel.search_action.trigger()
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    model = window.results.model
    assert model.rowCount() > 0
    index = model.index(0)
    tip = index.data(Qt.ItemDataRole.ToolTipRole)
    assert "<hr>score " in tip and "colour of the top" in tip and "top_color" not in tip
    item_id = index.data(ResultsModel.IdRole)
    assert window.results.select_item(item_id)
    qtbot.waitUntil(lambda: window.detail.item_id() == item_id, timeout=WAIT)
    explained = window.detail.explanation()
    assert explained is not None and explained["item"] == item_id
    assert {a["key"] for a in explained["attributes"]} >= {"gender", "top_color", "bottom_color"}
    assert explained["score"] == pytest.approx(window.step_display.scores[item_id], abs=1e-5)
    window.close()


def test_carried_objects_evidence_is_explained_with_its_source(qtbot, pane, tmp_path):
    """An item whose track showed a backpack: the detail pane and the grid's one-line tooltip name the source."""
    from engine.perception.attributes.objects import CarriedTally
    from engine.retrieval.evidence.ranking import explanation_line

    views = gallery_views(4)
    vectors = np.tile(np.array([[0.8, 0.6, 0, 0]], np.float32), (2, 1))
    gallery = Gallery.create(tmp_path / "g", views, "ckpt")
    gallery.add([{"id": f"i{k}", "source": "s.mp4", "frame": k} for k in range(2)], {v: vectors for v in views})
    tallies = [CarriedTally(), CarriedTally()]
    for _ in range(20):
        tallies[0].observe({"backpack": 0.9})
        tallies[1].observe({})
    store.append(gallery.root, ["i0", "i1"], [{"objects": t.evidence().to_dict()} for t in tallies])
    result = SearchSession(gallery, Encoder(), attribute_weight=0.5).step(StepQuery(text="a man with a backpack"))
    html = explanation_html(result.explain("i0"))
    assert "✓</span> carried item: backpack by the carried objects (1.00); the description says backpack" in html
    assert "✗</span> carried item: nothing carried by the carried objects (1.00); the description says backpack" in \
        explanation_html(result.explain("i1"))
    assert "✓ carried item: backpack by the carried objects (1.00)" in explanation_line(result.explain("i0"))
    with qtbot.waitSignal(pane.loaded, timeout=WAIT):
        pane.set_gallery_item(gallery, "i0", score=float(result.scores[0]))
    pane.set_explanation(result.explain("i0"))
    assert "backpack by the carried objects (1.00)" in pane.why.text()
