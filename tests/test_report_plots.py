"""The report's distribution plot (app/report/plots.py): the stored 128-bin histogram regrouped near the
panel's bin count, the relevant and other candidates split, and the cut line drawn where the step cut."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QImage

from app.report.errors import ReportError
from app.report.plots import (
    CUT_COLOR,
    PLOT_HEIGHT,
    PLOT_SCALE,
    PLOT_WIDTH,
    nice_ticks,
    regroup,
    render_distribution,
    target_bins,
)
from app.store.codec import score_histogram

pytestmark = pytest.mark.usefixtures("qapp")  # a QApplication, as in the app (not a bare QGuiApplication)


@pytest.fixture
def histogram():
    rng = np.random.default_rng(0)
    scores = rng.normal(0.3, 0.1, 1000)
    return score_histogram(scores, scores > 0.45), scores


def test_regrouping_keeps_every_candidate_and_splits_relevant(histogram):
    stored, scores = histogram
    binned = regroup(stored)
    assert target_bins(1000) == 20
    assert len(binned.edges) - 1 == 16 and 128 % 16 == 0  # the divisor of 128 nearest the Rice target
    assert binned.series["others"].sum() + binned.series["relevant"].sum() == 1000
    assert binned.series["relevant"].sum() == int((scores > 0.45).sum())
    assert binned.edges[0] == pytest.approx(scores.min()) and binned.edges[-1] == pytest.approx(scores.max())


def test_constant_and_empty_steps():
    constant = regroup(score_histogram(np.full(5, 0.25), None))
    assert list(constant.series["candidates"]) == [5] and constant.edges[0] < 0.25 < constant.edges[1]
    assert regroup(score_histogram(np.zeros(0), None)) is None
    assert render_distribution(score_histogram(np.zeros(0), None), None) is None
    with pytest.raises(ReportError, match="relevant counts"):
        regroup({"count": 2, "counts": [1, 1], "relevant": [1], "low": 0.0, "high": 1.0})


def test_nice_ticks():
    assert nice_ticks(0.0, 1.0) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_ticks(-0.03, 0.52, 7) == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]


def cut_column(image: QImage) -> int:
    """The x (in pixels) of the column holding the most cut-coloured pixels."""
    width, height = image.width(), image.height()
    pointer = image.convertToFormat(QImage.Format.Format_RGB888).constBits()
    pixels = np.frombuffer(pointer, np.uint8)[: height * width * 3]
    rgb = np.asarray(pixels).reshape(height, -1)[:, : width * 3].reshape(height, width, 3).astype(int)
    target = np.array([int(CUT_COLOR[i:i + 2], 16) for i in (1, 3, 5)])
    hits = (np.abs(rgb - target).sum(axis=2) < 40).sum(axis=0)
    assert hits.max() > 100
    return int(hits.argmax())


def test_the_plot_draws_the_cut_where_the_step_cut(qapp, histogram):
    stored, _ = histogram
    low_cut = render_distribution(stored, 0.2)
    high_cut = render_distribution(stored, 0.5)
    for plot in (low_cut, high_cut):
        assert plot.png.startswith(b"\x89PNG") and plot.scale == PLOT_SCALE
        image = QImage.fromData(plot.png, "PNG")
        assert (image.width(), image.height()) == (PLOT_WIDTH * PLOT_SCALE, PLOT_HEIGHT * PLOT_SCALE)
    left = cut_column(QImage.fromData(low_cut.png, "PNG"))
    right = cut_column(QImage.fromData(high_cut.png, "PNG"))
    span = (stored["high"] - stored["low"]) * 1.04
    expected = (0.5 - 0.2) / span * (PLOT_WIDTH - 64) * PLOT_SCALE
    assert right - left == pytest.approx(expected, abs=4)
