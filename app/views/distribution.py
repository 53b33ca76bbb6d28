"""Distribution panel: the histogram of a step's candidate scores with the keep cut (docs/methods.md §1.3:
the scores exposed, the analyst cuts).

A vertical line stands at the kept top-k boundary (the k-th highest score; the threshold itself for a
threshold rule). Dragging it previews a threshold keep rule: the panel shows live how many items a step
with that threshold would keep (confirmed items included) and emits ``threshold_changed``. The preview
changes nothing: "Apply cut to this step" (``apply_requested``) asks for the step to be run again with that
threshold; the next step's rule is never touched. With ground truth the relevant and other candidates get
their own histograms, a rug marks every relevant score, and the step's AP and mSD (one query) are shown. The
figures come from the state layer (``app.state.distribution``); the panel draws them."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QStackedWidget, QVBoxLayout, QWidget

from app.state.distribution import (  # noqa: F401 - the plot's figures, importable from here
    MAX_BINS,
    MIN_BINS,
    DistributionInputError,
    ScoreDistribution,
    StepMetrics,
    bin_count,
    histogram_edges,
    step_distribution,
    step_metrics,
)

CANDIDATES_COLOR = QColor("#4a7fc1")
OTHERS_COLOR = QColor("#8593a8")
RELEVANT_COLOR = QColor("#e8702a")
KEPT_REGION_COLOR = QColor(46, 157, 79, 28)
CUT_COLOR = QColor("#d99a00")
HISTOGRAM_COLORS = {"candidates": CANDIDATES_COLOR, "others": OTHERS_COLOR, "relevant": RELEVANT_COLOR}
MIN_PLOT_HEIGHT = 150


def _with_alpha(color: QColor, alpha: int) -> QColor:
    out = QColor(color)
    out.setAlpha(alpha)
    return out


class CountAxis(pg.AxisItem):
    """An axis of counts: ticks only at whole numbers (never 0.5 candidates), at least one unit apart."""

    def tickSpacing(self, minVal: float, maxVal: float, size: float):  # noqa: N802, N803 - pyqtgraph API
        kept: list[tuple[float, float]] = []
        for spacing, _offset in super().tickSpacing(minVal, maxVal, size):
            whole = float(max(1, math.ceil(spacing - 1e-9)))
            if not kept or whole < kept[-1][0]:
                kept.append((whole, 0.0))
        return kept or [(1.0, 0.0)]

    def tickStrings(self, values, scale: float, spacing: float) -> list[str]:  # noqa: N802 - pyqtgraph API
        return [f"{round(value * scale):,}" for value in values]


class DistributionPanel(QWidget):
    """Setters: ``set_step(step, confirmed_ids)``, ``set_scores(...)`` (plain arrays, e.g. a step read back
    from a case), ``set_threshold(score)``, ``reset_cut()``, ``clear()``. Signals: ``threshold_changed(score)``
    while the cut is dragged (live), ``threshold_released(score)`` when the drag ends."""

    threshold_changed = Signal(float)
    threshold_released = Signal(float)
    apply_requested = Signal(float)  # "Apply cut to this step" at this threshold

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._dist: ScoreDistribution | None = None  # the step's figures (``app.state.distribution``)
        self._edges = np.zeros(0)
        self._counts: dict[str, np.ndarray] = {}
        self._quiet = False
        self._can_apply = False

        palette = self.palette()
        text = palette.color(QPalette.ColorRole.Text)
        self.plot = pg.PlotWidget(self, background=palette.color(QPalette.ColorRole.Base),
                                  axisItems={"left": CountAxis("left")})
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        item = self.plot.getPlotItem()
        for side in ("left", "bottom"):
            axis = item.getAxis(side)
            axis.setPen(pg.mkPen(text))
            axis.setTextPen(pg.mkPen(text))
            axis.enableAutoSIPrefix(False)
            # the axis grows for wider tick labels but never shrinks: a width that followed every step's counts
            # re-laid out the plot and painted it up to four times per step instead of two
            axis.setStyle(autoReduceTextSpace=False)
        item.setLabel("bottom", "similarity score")
        item.setLabel("left", "candidates")
        item.disableAutoRange()  # the ranges are set once per step (auto-ranging walks every item each change)
        # the legend is a line of text under the plot, never over the bars
        self.legend_entries: list[str] = []
        self.legend_label = QLabel(self)
        self.legend_label.setTextFormat(Qt.TextFormat.RichText)
        self.legend_label.setWordWrap(True)
        self.region = pg.LinearRegionItem(movable=False, brush=pg.mkBrush(KEPT_REGION_COLOR),
                                          pen=pg.mkPen(None))
        self.region.setZValue(-10)
        self.cut_line = pg.InfiniteLine(
            angle=90, movable=True, pen=pg.mkPen(CUT_COLOR, width=2.5),
            hoverPen=pg.mkPen(CUT_COLOR.darker(130), width=4),
            label="{value:.3f}", labelOpts={"position": 0.93, "color": text, "movable": False,
                                             "fill": pg.mkBrush(_with_alpha(palette.color(QPalette.ColorRole.Base),
                                                                            210))})
        self.cut_line.setZValue(10)
        self.cut_line.setCursor(Qt.CursorShape.SizeHorCursor)
        self.cut_line.setToolTip("Drag to try a score threshold")
        self.cut_line.sigPositionChanged.connect(self._line_moved)
        self.cut_line.sigPositionChangeFinished.connect(self._line_released)
        # the plot's items are made once and updated in place: rebuilding them for every step cost the UI thread
        # tens of milliseconds (and a stall) each time a step's results were shown
        self._curves: dict[str, pg.PlotDataItem] = {}
        for name, color in HISTOGRAM_COLORS.items():
            fill = QColor(color)
            fill.setAlpha(150 if name == "relevant" else 110)
            curve = pg.PlotDataItem([0.0, 1.0], [0.0], stepMode="center", fillLevel=0, brush=pg.mkBrush(fill),
                                    pen=pg.mkPen(color, width=1.5))
            curve.setVisible(False)
            self._curves[name] = curve
        self._rug = pg.ScatterPlotItem(symbol="|", size=12, pen=pg.mkPen(RELEVANT_COLOR.darker(115), width=2),
                                       brush=None)
        self._rug.setZValue(5)
        self._rug.setVisible(False)
        for plotted in (self.region, *self._curves.values(), self._rug, self.cut_line):
            item.addItem(plotted)

        self.title = QLabel(self)
        bold = QFont(self.title.font())
        bold.setBold(True)
        self.title.setFont(bold)
        self.cut_label = QLabel(self)
        self.cut_label.setTextFormat(Qt.TextFormat.RichText)
        self.metrics_label = QLabel(self)
        self.metrics_label.setTextFormat(Qt.TextFormat.RichText)
        self.reset_button = QPushButton("Reset cut", self)
        self.reset_button.setToolTip("Put the cut back at the step's own kept boundary")
        self.reset_button.clicked.connect(self.reset_cut)
        self.apply_button = QPushButton("Apply cut to this step", self)
        self.apply_button.setToolTip("Run this step again keeping scores ≥ the cut (the step is replaced; the next "
                                     "step keeps its own rule from the query panel)")
        self.apply_button.clicked.connect(lambda: self.apply_requested.emit(self.threshold()))
        self.apply_button.setEnabled(False)
        self.apply_button.hide()

        self.empty_label = QLabel("No step yet.\nThe score distribution of the current step appears here.", self)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setWordWrap(True)
        self.empty_label.setEnabled(False)
        body = QWidget(self)
        rows = QVBoxLayout(body)
        rows.setContentsMargins(0, 0, 0, 0)
        rows.setSpacing(2)
        self.title.setWordWrap(True)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.plot.setMinimumHeight(MIN_PLOT_HEIGHT)
        for label in (self.cut_label, self.metrics_label):
            label.setWordWrap(True)
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.reset_button)
        buttons.addWidget(self.apply_button)
        rows.addWidget(self.title)
        rows.addWidget(self.plot, 1)
        rows.addWidget(self.legend_label)
        rows.addWidget(self.cut_label)
        rows.addLayout(buttons)
        rows.addWidget(self.metrics_label)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.empty_label)
        self.stack.addWidget(body)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.addWidget(self.stack)
        self.clear()

    # ---------------------------------------------------------------------------------------- setters

    def set_can_apply(self, can: bool) -> None:
        """Whether "Apply cut to this step" may be offered (a step of the open case, searchable now)."""
        self._can_apply = bool(can)
        self.apply_button.setVisible(self._can_apply)
        self.apply_button.setEnabled(self._can_apply and self.reset_button.isEnabled())

    def set_step(self, step, confirmed_ids: Iterable[str] = (), *, label: str | None = None) -> None:
        """Plot a ``StepResult`` (None clears). ``confirmed_ids``: the session's confirmed items, which every
        keep rule keeps, so the live count matches what a threshold step would keep. ``label``: the step's
        label in its case ("3a", ``app.state.timeline_rows.step_label``); its position in the session without."""
        if step is None:
            self.clear()
            return
        self.set_distribution(step_distribution(step, confirmed_ids, label=label))

    def set_scores(self, scores, k: int, *, relevant=None, pinned=None, kept=None, keep_rule: str = "k",
                   keep_value: float | None = None, title: str = "") -> None:
        """Plot plain arrays: candidate ``scores``, the count kept ``k``, optional ground truth ``relevant``,
        ``pinned`` (confirmed) and ``kept`` masks over the same candidates, and the step's keep rule."""
        self.set_distribution(ScoreDistribution.of(scores, k, relevant=relevant, pinned=pinned, kept=kept,
                                                   keep_rule=keep_rule, keep_value=keep_value, title=title))

    def set_distribution(self, distribution: ScoreDistribution) -> None:
        """Plot a step's figures as the state layer reads them (``app.state.distribution``)."""
        self._dist = distribution
        self.title.setText(distribution.title)
        self._draw()
        self.stack.setCurrentIndex(1)

    def clear(self) -> None:
        self._dist = None
        self._edges, self._counts = np.zeros(0), {}
        for curve in self._curves.values():
            curve.setVisible(False)
        self._rug.setVisible(False)
        self.legend_entries = []
        self.stack.setCurrentIndex(0)

    def set_threshold(self, score: float) -> None:
        """Move the cut to ``score`` without emitting ``threshold_changed``."""
        if self._dist is None:
            return
        self._quiet = True
        try:
            self.cut_line.setValue(float(score))
        finally:
            self._quiet = False

    def reset_cut(self) -> None:
        """Back to the step's own boundary (emits nothing)."""
        if self._dist is not None:
            self.set_threshold(self._dist.cut)

    # ---------------------------------------------------------------------------------------- queries

    def is_empty(self) -> bool:
        return self._dist is None

    def bin_edges(self) -> np.ndarray:
        return self._edges.copy()

    def counts(self) -> dict[str, np.ndarray]:
        """Bin counts per drawn histogram: {'candidates'} without ground truth, else {'relevant', 'others'}."""
        return {name: counts.copy() for name, counts in self._counts.items()}

    def cut_score(self) -> float:
        """The step's boundary: the k-th highest score (the threshold for a threshold rule)."""
        return math.nan if self._dist is None else self._dist.cut

    def threshold(self) -> float:
        """Where the cut line stands now."""
        return float(self.cut_line.value())

    def kept_at(self, threshold: float) -> int:
        """Items a step keeping scores ≥ ``threshold`` would keep (confirmed items always kept)."""
        return 0 if self._dist is None else self._dist.kept_at(threshold)

    def metrics(self) -> StepMetrics | None:
        return None if self._dist is None else self._dist.metrics

    @property
    def curves(self) -> dict[str, pg.PlotDataItem]:
        """The histograms drawn now: {'candidates'} without ground truth, else {'others', 'relevant'}."""
        return {name: self._curves[name] for name in self._counts}

    @property
    def rug(self) -> pg.ScatterPlotItem | None:
        """Marks at every relevant candidate's score (None when no candidate is relevant)."""
        return self._rug if self._rug.isVisible() else None

    # ---------------------------------------------------------------------------------------- drawing

    def _draw(self) -> None:
        """Update the plot's items in place for the current scores (no item is created or removed)."""
        item = self.plot.getPlotItem()
        dist = self._dist
        histograms = dist.histograms()
        edges, groups = histograms.edges, histograms.groups
        self._edges, self._counts = edges, histograms.counts
        for name, curve in self._curves.items():
            counts = self._counts.get(name)
            if counts is not None:
                curve.setData(edges, counts)
            curve.setVisible(counts is not None)
        self.legend_entries = [f"{name} ({values.shape[0]:,})" for name, values in groups.items()]
        self.legend_label.setText(" &nbsp; ".join(
            f"<span style='color:{HISTOGRAM_COLORS[name].name()}'>■</span> {entry}"
            for name, entry in zip(groups, self.legend_entries, strict=True)))
        peak = max(1, max(int(c.max()) for c in self._counts.values()))
        floor = 0.0
        if dist.relevant is not None and dist.relevant.any():
            marks = dist.scores[dist.relevant]
            floor = -0.07 * peak
            self._rug.setData(marks, np.full(marks.shape[0], floor / 2))
            self._rug.setVisible(True)
        else:
            self._rug.setVisible(False)
        width = edges[-1] - edges[0]
        # the step's own cut always lies inside the line's bounds: a threshold below every candidate's score,
        # clamped to the plot's edge, read as a dragged preview on a step that is only being viewed
        low = min(edges[0] - 0.02 * width, dist.cut - 0.02 * width)
        high = max(edges[-1] + 0.02 * width, dist.cut + 0.02 * width)
        self._quiet = True  # new bounds move the line from where the last step had it: that is no drag
        try:
            self.cut_line.setBounds((low, high))
        finally:
            self._quiet = False
        item.getViewBox().setRange(xRange=(low, high), yRange=(floor - 0.02 * peak, peak * 1.12), padding=0)
        self.set_threshold(dist.cut)
        self._update_texts(dist.cut)

    def _line_moved(self) -> None:
        value = float(self.cut_line.value())
        self._update_texts(value)
        if not self._quiet:
            self.threshold_changed.emit(value)

    def _line_released(self) -> None:
        if not self._quiet:
            self.threshold_released.emit(float(self.cut_line.value()))

    def _update_texts(self, threshold: float) -> None:
        dist = self._dist
        if dist is None:
            return
        high = self._edges[-1] + (self._edges[-1] - self._edges[0])
        self.region.setRegion((threshold, high))
        n, step_kept, rule = dist.size, dist.step_kept, dist.rule_text()
        kept = dist.kept_at(threshold)
        moved = dist.moved(threshold)
        if moved:
            text = (f"Threshold <b>{threshold:.3f}</b> would keep <b>{kept:,}</b> of {n:,} "
                    f"<span style='color:gray'>(the step kept {step_kept:,}, {rule})</span>")
        else:
            text = f"Kept <b>{step_kept:,}</b> of {n:,} ({rule}), cut at <b>{dist.cut:.3f}</b>"
        self.cut_label.setText(text)
        self.reset_button.setEnabled(moved)
        self.apply_button.setEnabled(moved and self._can_apply)
        self.metrics_label.setVisible(dist.metrics is not None)
        if dist.metrics is not None:
            self.metrics_label.setText(self._metrics_text(threshold))

    def _metrics_text(self, threshold: float) -> str:
        m = self._dist.metrics
        if m.relevant == 0:
            return "Ground truth: no candidate of this step is the person."
        above = self._dist.relevant_at_or_above(threshold)
        msd = "n/a" if math.isnan(m.msd) else f"{m.msd:.3f}"
        color = RELEVANT_COLOR.name()
        return (f"<span style='color:{color}'>■</span> Relevant <b>{m.relevant:,}</b>, kept {m.relevant_kept:,}"
                f" (≥ cut: {above:,}) · AP <b>{m.ap:.3f}</b> · mSD <b>{msd}</b>")
