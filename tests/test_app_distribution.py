"""Distribution panel (app/views/distribution.py): bin counts, the cut at the k-th score, dragging the cut,
relevant/other split, AP and mSD equal to engine.retrieval.metrics, empty state and input checks."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from app.views.distribution import DistributionInputError, DistributionPanel
from engine.index import Gallery
from engine.retrieval.metrics.msd import msd_per_query
from engine.retrieval.metrics.retrieval import evaluate_retrieval
from engine.retrieval.search import SearchSession, StepQuery

N = 300


def unit(x):
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    rng = np.random.default_rng(11)
    centres = unit(rng.standard_normal((6, 8)))
    identity = np.arange(N) % 6
    g = Gallery.create(tmp_path_factory.mktemp("dist") / "g", {"rgb": 8}, "test")
    items = [{"id": f"i{k}", "source": "s.mp4", "time": float(k), "camera": f"c{k % 2}",
              "identity": f"p{identity[k]}"} for k in range(N)]
    g.add(items, {"rgb": unit(centres[identity] + 0.7 * rng.standard_normal((N, 8)))})
    return SearchSession(g)


@pytest.fixture(scope="module")
def step(session):
    return session.step(StepQuery(example="i0", rho=0.3))


@pytest.fixture
def panel(qtbot):
    widget = DistributionPanel()
    qtbot.addWidget(widget)
    widget.resize(640, 380)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def test_empty_state_until_a_step_arrives(panel, step):
    assert panel.stack.currentIndex() == 0 and panel.is_empty()
    assert "No step yet" in panel.empty_label.text()
    panel.set_step(step)
    assert panel.stack.currentIndex() == 1 and not panel.is_empty()
    panel.clear()
    assert panel.stack.currentIndex() == 0 and panel.counts() == {}


def test_bins_count_the_scores(panel):
    scores = np.array([0.1, 0.12, 0.5, 0.5, 0.9, 0.33, 0.34, 0.35, 0.8, -0.2], dtype=np.float32)
    panel.set_scores(scores, 3)
    edges = panel.bin_edges()
    counts = panel.counts()
    assert set(counts) == {"candidates"}
    assert edges[0] == pytest.approx(-0.2) and edges[-1] == pytest.approx(0.9)
    assert counts["candidates"].tolist() == np.histogram(scores, bins=edges)[0].tolist()
    assert counts["candidates"].sum() == scores.size
    x, y = panel.curves["candidates"].getData()
    assert np.allclose(x, edges) and y.tolist() == counts["candidates"].tolist()


def test_cut_line_stands_at_the_kth_score(panel, step):
    panel.set_step(step)
    kth = float(np.sort(step.scores)[::-1][step.k - 1])
    assert step.k == math.ceil(0.3 * N)
    assert panel.cut_score() == kth and panel.threshold() == pytest.approx(kth)
    assert panel.kept_at(kth) == step.k
    assert f"Kept <b>{step.k:,}</b> of {N:,}" in panel.cut_label.text() and "ρ = 0.3" in panel.cut_label.text()
    assert not panel.reset_button.isEnabled()


def test_threshold_rule_puts_the_cut_at_the_threshold(panel, session):
    step = session.step(StepQuery(example="i1", threshold=0.25))
    session.undo()
    panel.set_step(step)
    assert panel.cut_score() == pytest.approx(0.25) and panel.kept_at(0.25) == step.k


def drag(widget, start: QPointF, end: QPointF) -> None:
    """A real left-button drag on a pyqtgraph view (QTest moves carry no buttons)."""
    viewport = widget.viewport()

    def send(kind, point, buttons):
        local = QPointF(point)
        event = QMouseEvent(kind, local, QPointF(viewport.mapToGlobal(local.toPoint())), Qt.MouseButton.LeftButton,
                            buttons, Qt.KeyboardModifier.NoModifier)
        QApplication.sendEvent(viewport, event)

    send(QEvent.Type.MouseButtonPress, start, Qt.MouseButton.LeftButton)
    for t in np.linspace(0, 1, 6)[1:]:
        time.sleep(0.04)  # pyqtgraph's scene drops moves that come faster than a display frame
        send(QEvent.Type.MouseMove, start + (end - start) * float(t), Qt.MouseButton.LeftButton)
    send(QEvent.Type.MouseButtonRelease, end, Qt.MouseButton.NoButton)


def test_dragging_the_cut_emits_the_threshold_and_updates_the_kept_count(qtbot, panel, step):
    panel.set_step(step)
    view = panel.plot.getPlotItem().getViewBox()
    target = float(np.sort(step.scores)[::-1][40])
    y = float(np.mean(view.viewRange()[1]))

    def to_widget(x):
        return QPointF(panel.plot.mapFromScene(view.mapViewToScene(QPointF(x, y))))

    moved = []
    panel.threshold_changed.connect(moved.append)
    with qtbot.waitSignal(panel.threshold_released) as released:
        drag(panel.plot, to_widget(panel.cut_score()), to_widget(target))
    assert len(moved) >= 3  # live updates while dragging
    threshold = released.args[0]
    assert threshold == pytest.approx(target, abs=0.01) and moved[-1] == threshold
    kept = int((step.scores >= threshold).sum())
    assert panel.kept_at(threshold) == kept
    assert f"would keep <b>{kept:,}</b> of {N:,}" in panel.cut_label.text()
    assert f"the step kept {step.k:,}" in panel.cut_label.text()
    assert panel.reset_button.isEnabled()
    panel.reset_button.click()
    assert panel.threshold() == pytest.approx(panel.cut_score())


def test_set_threshold_is_silent_and_confirmed_items_count(qtbot, panel, session, step):
    low = step.top(N)[-1][0]  # the lowest-scored candidate
    panel.set_step(step, confirmed_ids=[low])
    threshold = float(np.sort(step.scores)[::-1][9])
    with qtbot.assertNotEmitted(panel.threshold_changed):
        panel.set_threshold(threshold)
    assert panel.kept_at(threshold) == 11  # the ten best plus the confirmed one
    assert "would keep <b>11</b>" in panel.cut_label.text()


def test_relevant_and_other_histograms_split_the_candidates(panel, step):
    panel.set_step(step)
    counts = panel.counts()
    assert set(counts) == {"relevant", "others"}
    edges = panel.bin_edges()
    relevant = step.relevant
    assert counts["relevant"].tolist() == np.histogram(step.scores[relevant], bins=edges)[0].tolist()
    assert counts["others"].tolist() == np.histogram(step.scores[~relevant], bins=edges)[0].tolist()
    assert counts["relevant"].sum() == relevant.sum() == N // 6
    assert counts["relevant"].sum() + counts["others"].sum() == N
    assert panel.rug is not None and len(panel.rug.data) == relevant.sum()
    assert panel.legend_entries == [f"others ({N - N // 6:,})", f"relevant ({N // 6:,})"]
    assert "others (250)" in panel.legend_label.text() and "relevant (50)" in panel.legend_label.text()


def test_ap_and_msd_equal_engine_metrics(panel, step):
    panel.set_step(step)
    rows, scores = step.ranked()
    relevant = step.relevant[step.order]
    ap = evaluate_retrieval(scores[None, :].astype(np.float64), relevant[None, :]).ap[0]
    msd = msd_per_query(scores[None, :].astype(np.float64), relevant[None, :], cosine=True)[0]
    metrics = panel.metrics()
    assert metrics.ap == pytest.approx(ap) and metrics.msd == pytest.approx(msd)
    assert 0 < metrics.ap < 1 and 0 < metrics.msd < 1
    relevant_kept = step.relevant_counts()[1]
    text = panel.metrics_label.text()
    assert f"AP <b>{ap:.3f}</b>" in text and f"mSD <b>{msd:.3f}</b>" in text
    assert f"Relevant <b>{N // 6}</b>, kept {relevant_kept}" in text


def test_no_relevant_candidate_and_no_ground_truth(panel):
    scores = np.linspace(-0.5, 0.5, 50)
    panel.set_scores(scores, 10, relevant=np.zeros(50, dtype=bool))
    assert panel.metrics().relevant == 0 and "no candidate of this step" in panel.metrics_label.text()
    panel.set_scores(scores, 10)
    assert panel.metrics() is None and panel.metrics_label.isHidden()


def test_bad_scores_are_refused(panel):
    with pytest.raises(DistributionInputError, match="at least one"):
        panel.set_scores([], 1)
    with pytest.raises(DistributionInputError, match="NaN"):
        panel.set_scores([0.1, math.nan], 1)
    with pytest.raises(DistributionInputError, match="relevant has 1 flags for 2 scores"):
        panel.set_scores([0.1, 0.2], 1, relevant=[True])
    with pytest.raises(DistributionInputError, match="k must be"):
        panel.set_scores([0.1, 0.2], -1)


def test_a_new_step_updates_the_plot_in_place(panel, step):
    panel.set_step(step)
    items = list(panel.plot.getPlotItem().items)
    panel.set_scores(np.linspace(-0.2, 0.6, 40), 5)  # no ground truth: one histogram, no rug
    assert list(panel.plot.getPlotItem().items) == items  # the same items, nothing made or removed
    assert set(panel.curves) == {"candidates"} and panel.rug is None
    assert not panel._curves["relevant"].isVisible() and panel.curves["candidates"].isVisible()
    assert panel.legend_entries == ["candidates (40)"]
    low, high = panel.plot.getPlotItem().getViewBox().viewRange()[0]
    assert low < -0.2 and high > 0.6 and high - low < 0.9  # the view follows the new scores
    panel.set_step(step)
    assert set(panel.curves) == {"relevant", "others"} and panel.rug is not None
    panel.clear()
    assert panel.curves == {} and panel.rug is None and not any(c.isVisible() for c in panel._curves.values())


def test_the_count_axis_does_not_narrow_for_a_step_with_fewer_candidates(qtbot, panel):
    axis = panel.plot.getPlotItem().getAxis("left")
    panel.set_scores(np.random.default_rng(1).normal(0.3, 0.1, 5000), 100)  # bins counting hundreds
    qtbot.waitUntil(lambda: axis.width() > 0)
    qtbot.wait(50)
    wide = axis.width()
    panel.set_scores(np.linspace(0.1, 0.4, 12), 3)  # single-digit counts
    qtbot.wait(50)
    assert axis.width() >= wide  # no re-layout (and second repaint of the plot) for narrower tick labels


def test_a_viewed_step_shows_its_own_cut_not_a_preview(qtbot, panel):
    """Kept scores read back from a case with a threshold below all of them: the line stands on the
    threshold, nothing reads as a dragged preview and nothing is emitted."""
    moved = []
    panel.threshold_changed.connect(moved.append)
    scores = np.linspace(0.6, 0.9, 40)
    panel.set_scores(scores, 40, keep_rule="threshold", keep_value=0.2, title="Step 2 · kept items as stored")
    assert panel.threshold() == pytest.approx(0.2) and panel.cut_score() == pytest.approx(0.2)
    assert panel.cut_label.text().startswith("Kept <b>40</b> of 40")
    assert "would keep" not in panel.cut_label.text()
    assert not panel.reset_button.isEnabled() and not panel.apply_button.isEnabled()
    assert moved == []


def test_the_count_axis_ticks_only_whole_numbers(qtbot, panel):
    panel.set_scores(np.array([0.1, 0.5, 0.9]), 1)  # one candidate per bin at most: a peak of 1
    axis = panel.plot.getPlotItem().getAxis("left")
    low, high = panel.plot.getPlotItem().getViewBox().viewRange()[1]
    values = [value for _spacing, level in axis.tickValues(low, high, axis.height() or 150) for value in level]
    assert values and all(float(value).is_integer() for value in values)
    strings = axis.tickStrings(values, 1.0, 1.0)
    assert all(text.lstrip("-").replace(",", "").isdigit() for text in strings)


def test_the_title_names_the_step_by_its_case_label(panel, step):
    panel.set_step(step, label="3a")
    assert panel.title.text().startswith("Step 3a · ")
    panel.set_step(step)
    assert panel.title.text().startswith(f"Step {step.index + 1} · ")
