"""A step's score distribution for the report, drawn with QPainter into an image (no widgets, no pyqtgraph).

It shows what the app's distribution panel shows, from what the case stored: the histogram of every ranked
candidate's score (``app.store.codec.score_histogram``: 128 equal bins over [min, max]), regrouped into about
as many bins as the panel's Rice rule 2·n^(1/3) gives (clipped to [12, 80]); with ground truth the relevant
candidates and the others as two overlaid histograms; the kept region shaded right of the cut line (the
threshold of a threshold rule, else the lowest kept score).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from app.report.errors import ReportError
from app.report.images import ReportImage

MIN_BINS, MAX_BINS = 12, 80
CANDIDATES_COLOR = "#4a7fc1"
OTHERS_COLOR = "#8593a8"
RELEVANT_COLOR = "#e8702a"
KEPT_COLOR = (46, 157, 79, 34)
CUT_COLOR = "#d99a00"
TEXT_COLOR = "#30343a"
GRID_COLOR = "#e3e6ea"
PLOT_WIDTH, PLOT_HEIGHT, PLOT_SCALE = 680, 210, 2
_LEFT, _RIGHT, _TOP, _BOTTOM = 50, 14, 24, 34


@dataclass(frozen=True)
class Binned:
    """The histogram regrouped for drawing: ``edges`` (bins + 1), counts per drawn series."""

    edges: np.ndarray
    series: dict[str, np.ndarray]
    total: int


def target_bins(n: int) -> int:
    """Rice rule 2·n^(1/3), clipped to [MIN_BINS, MAX_BINS] (as the distribution panel bins its scores)."""
    return int(np.clip(math.ceil(2 * n ** (1 / 3)), MIN_BINS, MAX_BINS)) if n > 0 else MIN_BINS


def regroup(histogram: dict) -> Binned | None:
    """The stored histogram in groups of g adjacent bins, g a divisor of the bin count chosen so that the
    number of groups is nearest the Rice target. None for a step without ranked candidates."""
    total = int(histogram.get("count") or 0)
    counts = np.asarray(histogram.get("counts") or [], dtype=np.int64)
    if total == 0 or counts.size == 0:
        return None
    low, high = histogram.get("low"), histogram.get("high")
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)) or high < low:
        raise ReportError(f"the step's histogram has an unusable score range [{low}, {high}]")
    relevant = histogram.get("relevant")
    relevant = None if relevant is None else np.asarray(relevant, dtype=np.int64)
    if relevant is not None and relevant.shape != counts.shape:
        raise ReportError(f"the step's histogram has {relevant.size} relevant counts for {counts.size} bins")
    if high - low < 1e-9:  # every score equal: one narrow bar around it
        edges = np.array([low - 0.005, high + 0.005])
        series = {"candidates": counts.sum(keepdims=True)} if relevant is None else {
            "others": (counts - relevant).sum(keepdims=True), "relevant": relevant.sum(keepdims=True)}
        return Binned(edges, series, total)
    size = counts.size
    target = target_bins(total)
    group = min((g for g in range(1, size + 1) if size % g == 0), key=lambda g: (abs(size // g - target), g))
    edges = np.linspace(low, high, size // group + 1)

    def grouped(values: np.ndarray) -> np.ndarray:
        return values.reshape(-1, group).sum(axis=1)

    if relevant is None:
        series = {"candidates": grouped(counts)}
    else:
        series = {"others": grouped(counts - relevant), "relevant": grouped(relevant)}
    return Binned(edges, series, total)


def nice_ticks(low: float, high: float, wanted: int = 6) -> list[float]:
    """Round tick values (1, 2 or 5 × 10^n apart) inside [low, high]."""
    span = high - low
    if span <= 0:
        return [low]
    raw = span / max(1, wanted - 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(low / step - 1e-9) * step
    ticks = []
    value = first
    while value <= high + 1e-9 * span:
        ticks.append(round(value, 12))
        value += step
    return ticks


def _decimals(ticks: list[float]) -> int:
    """Decimals enough to tell ticks apart (at most 4)."""
    if len(ticks) < 2:
        return 3
    return max(0, min(4, -math.floor(math.log10(abs(ticks[1] - ticks[0])))))


def render_distribution(histogram: dict, cut: float | None, *, width: int = PLOT_WIDTH, height: int = PLOT_HEIGHT,
                        scale: int = PLOT_SCALE) -> ReportImage | None:
    """The step's distribution plot as a PNG of ``width``×``height`` points drawn at ``scale``× pixels, or
    None for a step with no ranked candidate. Needs a QGuiApplication (``app.report.qt``)."""
    binned = regroup(histogram)
    if binned is None:
        return None
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPointF, QRectF, Qt
    from PySide6.QtGui import QBrush, QColor, QFont, QImage, QPainter, QPainterPath, QPen

    edges = binned.edges
    spread = edges[-1] - edges[0]
    x_low, x_high = edges[0] - 0.02 * spread, edges[-1] + 0.02 * spread
    if cut is not None and math.isfinite(cut):
        x_low, x_high = min(x_low, cut - 0.02 * spread), max(x_high, cut + 0.02 * spread)
    peak = max(1, max(int(values.max()) for values in binned.series.values()))
    y_ticks = [t for t in nice_ticks(0, peak * 1.08, 5) if float(t).is_integer()] or [0.0]
    y_high = max(peak * 1.12, y_ticks[-1])

    image = QImage(width * scale, height * scale, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(QColor("white"))
    painter = QPainter(image)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        painter.scale(scale, scale)
        font = QFont("DejaVu Sans")
        font.setPixelSize(10)
        painter.setFont(font)
        area = QRectF(_LEFT, _TOP, width - _LEFT - _RIGHT, height - _TOP - _BOTTOM)

        def x_of(value: float) -> float:
            return area.left() + (value - x_low) / (x_high - x_low) * area.width()

        def y_of(value: float) -> float:
            return area.bottom() - value / y_high * area.height()

        text = QColor(TEXT_COLOR)
        for tick in y_ticks:
            painter.setPen(QPen(QColor(GRID_COLOR), 0.8))
            painter.drawLine(QPointF(area.left(), y_of(tick)), QPointF(area.right(), y_of(tick)))
            painter.setPen(text)
            painter.drawText(QRectF(0, y_of(tick) - 7, _LEFT - 6, 14),
                             Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, f"{int(tick):,}")
        x_ticks = [t for t in nice_ticks(x_low, x_high, 7) if x_low <= t <= x_high]
        decimals = _decimals(x_ticks)
        for tick in x_ticks:
            x = x_of(tick)
            painter.setPen(QPen(QColor(GRID_COLOR), 0.8))
            painter.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()))
            painter.setPen(text)
            painter.drawLine(QPointF(x, area.bottom()), QPointF(x, area.bottom() + 3))
            painter.drawText(QRectF(x - 30, area.bottom() + 3, 60, 13), Qt.AlignmentFlag.AlignCenter,
                             f"{tick:.{decimals}f}")
        painter.drawText(QRectF(area.left(), height - 15, area.width(), 14), Qt.AlignmentFlag.AlignCenter,
                         "similarity score")
        painter.save()
        painter.translate(11, area.center().y())
        painter.rotate(-90)
        painter.drawText(QRectF(-area.height() / 2, -7, area.height(), 14), Qt.AlignmentFlag.AlignCenter,
                         "candidates")
        painter.restore()

        if cut is not None and math.isfinite(cut):
            kept = QColor(*KEPT_COLOR)
            painter.fillRect(QRectF(QPointF(x_of(cut), area.top()), QPointF(area.right(), area.bottom())), kept)

        colors = {"candidates": CANDIDATES_COLOR, "others": OTHERS_COLOR, "relevant": RELEVANT_COLOR}
        for name, values in binned.series.items():
            color = QColor(colors[name])
            fill = QColor(color)
            fill.setAlpha(150 if name == "relevant" else 110)
            path = QPainterPath(QPointF(x_of(edges[0]), y_of(0)))
            for index, value in enumerate(values):
                path.lineTo(x_of(edges[index]), y_of(float(value)))
                path.lineTo(x_of(edges[index + 1]), y_of(float(value)))
            path.lineTo(x_of(edges[-1]), y_of(0))
            path.closeSubpath()
            painter.fillPath(path, QBrush(fill))
            painter.setPen(QPen(color, 1.2))
            painter.drawPath(path)

        painter.setPen(QPen(QColor("#9aa1ab"), 1))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(area)

        if cut is not None and math.isfinite(cut):
            x = x_of(cut)
            painter.setPen(QPen(QColor(CUT_COLOR), 2.2))
            painter.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()))
            label = f"cut {cut:.4f}"
            box = QRectF(x + 4, area.top() + 3, painter.fontMetrics().horizontalAdvance(label) + 8, 14)
            if box.right() > area.right():
                box.moveRight(x - 4)
            painter.fillRect(box, QColor(255, 255, 255, 215))
            painter.setPen(text)
            painter.drawText(box, Qt.AlignmentFlag.AlignCenter, label)

        entries = [(colors[name], f"{name} ({int(values.sum()):,})") for name, values in binned.series.items()]
        if cut is not None and math.isfinite(cut):
            entries.append(((46, 157, 79, 90), "kept"))
        x = area.left()
        for color, label in entries:
            swatch = QColor(*color) if isinstance(color, tuple) else QColor(color)
            painter.fillRect(QRectF(x, 7, 10, 10), swatch)
            painter.setPen(text)
            advance = painter.fontMetrics().horizontalAdvance(label)
            painter.drawText(QRectF(x + 14, 4, advance + 4, 16), Qt.AlignmentFlag.AlignVCenter, label)
            x += advance + 30
    finally:
        painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise ReportError("the distribution plot could not be encoded as PNG")
    buffer.close()
    return ReportImage(bytes(data), width * scale, height * scale, scale=scale)
