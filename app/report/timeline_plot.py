"""The sightings timeline for the report, drawn with QPainter into an image (no widgets): one lane per camera,
each sighting a numbered mark from its start to its end on a shared time axis, a dashed line joining the
sightings in time order, and the route written above. Wall-clock times read in UTC; footage-clock times in
seconds (``engine.kernel.timefmt``). Sightings without a time are left out of the figure (the table lists
them)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime

from app.report.errors import ReportError
from app.report.images import ReportImage
from app.report.sightings import ReportSighting, cameras, sightings_route, timed
from engine.kernel.timefmt import is_wall_clock

LANE_COLORS = ("#4a7fc1", "#e8702a", "#2e9d4f", "#9b59b6", "#c0392b", "#16a085", "#d4a017", "#7f8c8d")
TEXT_COLOR = "#30343a"
GRID_COLOR = "#e3e6ea"
PATH_COLOR = "#8593a8"
WIDTH, LANE, SCALE = 680, 34, 2
_LEFT, _RIGHT, _TOP, _BOTTOM = 78, 16, 34, 38
MIN_MARK = 5.0  # points: a sighting of one moment still shows
#: seconds between ticks a time axis may use (1 s … 4 weeks)
_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800,
          604800, 1209600, 2419200)


def time_ticks(low: float, high: float, wanted: int = 7) -> tuple[list[float], int]:
    """Tick times inside [low, high] at a round step (aligned to UTC midnight for wall-clock times), and the
    step in seconds."""
    span = max(high - low, 1e-9)
    if not is_wall_clock(low):
        raw = span / max(1, wanted - 1)
        power = 10 ** math.floor(math.log10(raw))
        step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    else:
        step = next((s for s in _STEPS if span / s <= wanted), _STEPS[-1])
    first = math.ceil(low / step - 1e-9) * step
    ticks = []
    value = first
    while value <= high + 1e-9 * span:
        ticks.append(value)
        value += step
    return ticks, step


def tick_label(value: float, step: float) -> str:
    """A tick's text: seconds on the footage clock; UTC clock time, or the date for steps of a day or more."""
    if not is_wall_clock(value):
        return f"{value:g} s"
    moment = datetime.fromtimestamp(value, UTC)
    if step >= 86400:
        return moment.strftime("%m-%d")
    return moment.strftime("%H:%M:%S" if step < 60 else "%H:%M")


def axis_caption(low: float, high: float) -> str:
    if not is_wall_clock(low):
        return "footage clock (seconds)"
    first, last = (datetime.fromtimestamp(v, UTC).strftime("%Y-%m-%d") for v in (low, high))
    return f"time (UTC), {first}" + ("" if first == last else f" – {last}")


def render_timeline(sightings: Sequence[ReportSighting], *, width: int = WIDTH, scale: int = SCALE
                    ) -> ReportImage | None:
    """The timeline of the timed ``sightings`` as a PNG of ``width`` points wide drawn at ``scale``× pixels,
    or None when none has a time. Needs a QGuiApplication (``app.report.qt``)."""
    shown = timed(sightings)
    if not shown:
        return None
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPointF, QRectF, Qt
    from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPen

    lanes = cameras(shown)
    height = _TOP + LANE * len(lanes) + _BOTTOM
    low = min(s.start for s in shown)
    high = max(s.end for s in shown)
    pad = max((high - low) * 0.04, 1.0)
    low, high = low - pad, high + pad
    ticks, step = time_ticks(low, high)

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
        text = QColor(TEXT_COLOR)
        area = QRectF(_LEFT, _TOP, width - _LEFT - _RIGHT, LANE * len(lanes))

        def x_of(value: float) -> float:
            return area.left() + (value - low) / (high - low) * area.width()

        def y_of(camera: str) -> float:
            return area.top() + (lanes.index(camera) + 0.5) * LANE

        small = QFont(font)
        small.setPixelSize(8)
        bold = QFont(font)
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(text)
        route = sightings_route(shown)
        painter.drawText(QRectF(area.left(), 6, area.width(), 16), Qt.AlignmentFlag.AlignVCenter,
                         painter.fontMetrics().elidedText(f"Route: {route}", Qt.TextElideMode.ElideRight,
                                                          int(area.width())))
        painter.setFont(font)
        for index, camera in enumerate(lanes):
            y = y_of(camera)
            if index % 2:
                painter.fillRect(QRectF(area.left(), y - LANE / 2, area.width(), LANE), QColor("#f6f7f9"))
            painter.setPen(text)
            name = painter.fontMetrics().elidedText(camera, Qt.TextElideMode.ElideLeft, _LEFT - 10)
            painter.drawText(QRectF(0, y - 8, _LEFT - 8, 16),
                             Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, name)
        for tick in ticks:
            x = x_of(tick)
            painter.setPen(QPen(QColor(GRID_COLOR), 0.8))
            painter.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()))
            painter.setPen(text)
            painter.drawLine(QPointF(x, area.bottom()), QPointF(x, area.bottom() + 3))
            painter.drawText(QRectF(x - 40, area.bottom() + 3, 80, 13), Qt.AlignmentFlag.AlignCenter,
                             tick_label(tick, step))
        painter.drawText(QRectF(area.left(), height - 16, area.width(), 14), Qt.AlignmentFlag.AlignCenter,
                         axis_caption(low + pad, high - pad))

        centres = [QPointF((x_of(s.start) + x_of(s.end)) / 2, y_of(s.camera or "?")) for s in shown]
        painter.setPen(QPen(QColor(PATH_COLOR), 1.2, Qt.PenStyle.DashLine))
        for a, b in zip(centres, centres[1:], strict=False):
            painter.drawLine(a, b)
        for sighting, centre in zip(shown, centres, strict=True):
            left, right = x_of(sighting.start), x_of(sighting.end)
            if right - left < MIN_MARK:
                left, right = centre.x() - MIN_MARK / 2, centre.x() + MIN_MARK / 2
            color = QColor(LANE_COLORS[lanes.index(sighting.camera or "?") % len(LANE_COLORS)])
            mark = QRectF(left, centre.y() - 6, right - left, 12)
            painter.fillRect(mark, color)
            painter.setPen(QPen(color.darker(140), 1))
            painter.drawRect(mark)
            painter.setPen(text)
            painter.setFont(small)
            painter.drawText(QRectF(centre.x() - 20, centre.y() - 17, 40, 10), Qt.AlignmentFlag.AlignCenter,
                             str(sighting.number))
            painter.setFont(font)
        painter.setPen(QPen(QColor("#9aa1ab"), 1))
        painter.drawRect(area)
    finally:
        painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise ReportError("the sightings timeline could not be encoded as PNG")
    buffer.close()
    return ReportImage(bytes(data), width * scale, height * scale, scale=scale)
