"""The detail pane in a 1366 × 768 main window: every metadata field and every action button can be seen (the
pane never needs a sideways scroll, and the field values keep a width), and a footage item's explanation says
how far its scores can be trusted (app/views/detail.py, engine/retrieval/search/trust.py)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from fixed_query_encoder import FixedQueryEncoder
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QApplication

from app.main_window import MainWindow
from app.state import AppState
from engine.index import Gallery
from engine.index import evidence_table as store
from engine.kernel.ontology import ONTOLOGY
from engine.retrieval.encoding.views import gallery_views
from engine.retrieval.search import SearchSession, StepQuery

WAIT = 20_000
SCREEN = (1366, 768)
ITEM = "camera-north-entrance-2024-05-01_person_0001"


@pytest.fixture
def footage(tmp_path):
    """A footage gallery of one item with its crop and source image on disk, read grey by two sources."""
    root = tmp_path / "g"
    gallery = Gallery.create(root, gallery_views(4), "ckpt")
    cv2.imwrite(str(root / "crop.png"), np.full((128, 48, 3), 160, np.uint8))
    cv2.imwrite(str(tmp_path / "frame.png"), np.full((480, 640, 3), 90, np.uint8))
    gallery.add([{"id": ITEM, "source": str(tmp_path / "frame.png"), "frame": 12, "camera": "north-entrance",
                  "time": 1714550400.0, "box": [100.5, 50, 48, 128], "track": 7, "crop": "crop.png"}],
                {view: np.asarray([[0.6, 0.8, 0, 0]], np.float32) for view in gallery_views(4)})
    gallery.record_ranking("footage", 0.5, "test")
    colours = ONTOLOGY.attributes["top_color"]
    grey = {v: 0.45 if v == "gray" else 0.2 if v == "white" else 0.035 for v in colours}
    reading = {"version": 1, "probabilities": {"top_color": grey}, "confidence": {"top_color": 1.0}}
    store.append(root, [ITEM], [{"pixels": reading, "model": reading}])
    return root


def inside_viewport(window, widget) -> bool:
    viewport = window.detail_scroll.viewport()
    return viewport.rect().contains(QRect(widget.mapTo(viewport, QPoint(0, 0)), widget.size()))


def test_every_field_and_button_of_the_detail_pane_is_visible_at_1366_by_768(qtbot, tmp_path, footage):
    state = AppState()
    assert state.open_store(tmp_path / "cases.db", actor="tester")
    window = MainWindow(state, None)
    qtbot.addWidget(window)
    with qtbot.waitSignal(state.gallery_changed, timeout=WAIT):
        window.open_gallery(footage)
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    window.resize(SCREEN[0] - 16, SCREEN[1] - 40)  # the screen less a window frame and a task bar
    window.show()
    qtbot.waitExposed(window)
    pane = window.detail
    with qtbot.waitSignal(pane.loaded, timeout=WAIT):
        pane.set_gallery_item(state.gallery, ITEM, score=0.91)
    step = SearchSession(state.gallery, FixedQueryEncoder(), attribute_weight=0.5).step(
        StepQuery(text="a man in a white shirt"))
    pane.set_explanation(step.explain(ITEM), "Similarity from the checkpoint's model.")
    QApplication.processEvents()
    qtbot.wait(50)
    window.grab().save(str(tmp_path / "detail_1366.png"))

    scroll = window.detail_scroll
    assert pane.width() <= scroll.viewport().width()  # no sideways scroll: nothing is cut off at the right
    assert not scroll.horizontalScrollBar().isVisible()
    for button in pane.action_buttons:  # the actions sit at the top: visible without scrolling
        assert button.isVisibleTo(window) and inside_viewport(window, button), button.text()
        assert not button.visibleRegion().isEmpty(), button.text()
    for name in ("Score", "Camera", "Time", "Source", "Frame", "Box", "Track"):  # and the facts right below
        assert inside_viewport(window, pane.values[name]), name
    for name, value in pane.values.items():  # every field: visible, or brought into view by the pane's scroll
        scroll.ensureWidgetVisible(value, 0, 0)
        QApplication.processEvents()
        caption = pane.captions[name]
        assert caption.width() >= caption.fontMetrics().horizontalAdvance(name), name  # captions never cut
        assert value.width() >= 100, name  # values keep room: a long one elides, its full text a tooltip
        for widget in (caption, value):
            assert widget.isVisibleTo(window), name
            assert inside_viewport(window, widget) and not widget.visibleRegion().isEmpty(), name
    source = pane.values["Source"]
    assert source.toolTip() == str(tmp_path / "frame.png") and pane.metadata()["Box"] == \
        "x 100, y 50, 48 × 128 px"

    text = pane.why.text()
    trust = pane.trust()
    assert trust is not None and trust.domain == "footage"
    assert "Ranked on real footage by similarity and the attribute evidence of the pixels and the model heads" in text
    assert "hand-labelled real crops" in text
    assert "colour of the top: grey by the pixels (0.45); grey by the model heads (0.45); the description says " \
           "white" in text
    assert "REJECTED" not in text and "top_color" not in text
    window.close()
