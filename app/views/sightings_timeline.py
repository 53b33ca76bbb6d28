"""The sightings timeline: where and when the person was seen, from the case's confirmed items (and, when a
follow-to-next-camera step proposes some, the proposed sightings), one lane per camera on a shared time axis
(``SightingsCanvas``), under a line with the route across cameras ("Route: cam02 → cam05 → cam03"), the zoom
buttons (−, +, Fit all) and the button that opens and closes the lanes (closed, only the line shows).

Painted with QPainter, as the step timeline is: lanes, marks of a width set by the sighting's span, the lines
and gap labels between them and the keyboard focus are drawn and hit-tested directly, which a plotting
library's scatter items would only get in the way of.

The widget only reports: ``sighting_selected(item ids, best item id)`` (a click, Enter or the menu's "Show"),
``confirm_requested(item ids)`` / ``reject_requested(item ids)`` (C / R or the menu, on a proposed sighting)
and ``follow_requested(index)`` (F or the menu, on a confirmed sighting, when ``set_follow_available``);
``expand_requested(open)`` when its button is pressed (the window sizes the strip and calls ``set_expanded``);
``follow_window_changed(seconds)`` when the follow window's hours (the "Follow ±" box) change.
Feed it with ``set_chart`` (``app.state.sightings_rows``)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QSpinBox, QToolButton, QVBoxLayout, QWidget

from app.state.sightings_rows import EMPTY, SightingRow, SightingsChart
from app.views.sightings_canvas import ZOOM_STEP, SightingsCanvas

#: The keys the timeline answers to while it has the focus (the shortcuts sheet lists them).
KEYS = (("Left / Right, Up / Down", "Sightings: the previous / next sighting in time, the nearest in the lane "
                                    "above / below"),
        ("Home / End", "Sightings: the first / last sighting"),
        ("Enter, C / R, F", "Sightings: select the sighting's items; confirm / reject a proposed sighting; follow a "
                            "confirmed one to the next camera"),
        ("+ / − / 0", "Sightings: zoom in / out / fit all"))


class SightingsTimeline(QWidget):
    """See the module docstring."""

    sighting_selected = Signal(list, str)  # item ids, best item id
    confirm_requested = Signal(list)
    reject_requested = Signal(list)
    follow_requested = Signal(int)
    expand_requested = Signal(bool)
    follow_window_changed = Signal(float)  # seconds before and after a followed sighting

    #: the follow window's bounds in hours (the engine refuses more than 31 days)
    FOLLOW_HOURS = (1, 744)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        title = QLabel("Sightings")
        font = QFont(title.font())
        font.setBold(True)
        title.setFont(font)
        self.route_label = QLabel()
        self.route_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.route_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.zoom_out_button, self.zoom_in_button, self.fit_button = (QToolButton(), QToolButton(), QToolButton())
        for button, text, tip in ((self.zoom_out_button, "−", "Zoom out (-; the wheel zooms at the pointer)"),
                                  (self.zoom_in_button, "+", "Zoom in (+)"),
                                  (self.fit_button, "Fit all", "Show every sighting (0)")):
            button.setText(text)
            button.setToolTip(tip)
            button.setAutoRaise(True)
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.toggle_button = QToolButton()
        self.toggle_button.setCheckable(True)
        self.toggle_button.setAutoRaise(True)
        self.toggle_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.toggle_button.setToolTip("Open or close the lanes of the sightings timeline (Ctrl+5 opens and focuses "
                                      "them)")
        header = QHBoxLayout()
        header.setContentsMargins(8, 2, 4, 2)
        header.setSpacing(8)
        header.addWidget(title)
        header.addWidget(self.route_label, 1)
        self.follow_hours = QSpinBox()
        self.follow_hours.setRange(*self.FOLLOW_HOURS)
        self.follow_hours.setPrefix("Follow ± ")
        self.follow_hours.setSuffix(" h")
        self.follow_hours.setToolTip("Follow to next camera (F here, Ctrl+Shift+F in the grid) searches the other "
                                     "cameras this many hours before and after the sighting")
        self.follow_hours.valueChanged.connect(lambda hours: self.follow_window_changed.emit(hours * 3600.0))
        header.addWidget(self.follow_hours)
        for button in (self.zoom_out_button, self.zoom_in_button, self.fit_button):
            header.addWidget(button)
        header.addWidget(self.toggle_button)
        self.header = header
        self.canvas = SightingsCanvas()
        self.canvas.setToolTip("")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(header)
        layout.addWidget(self.canvas, 1)

        self.zoom_out_button.clicked.connect(lambda: self.canvas.zoom(ZOOM_STEP))
        self.zoom_in_button.clicked.connect(lambda: self.canvas.zoom(1 / ZOOM_STEP))
        self.fit_button.clicked.connect(self.canvas.fit_all)
        self.canvas.activated.connect(self._activated)
        self.canvas.confirm_requested.connect(self.confirm_requested)
        self.canvas.reject_requested.connect(self.reject_requested)
        self.canvas.follow_requested.connect(self.follow_requested)
        self.canvas.view_changed.connect(self._refresh_buttons)
        self.toggle_button.clicked.connect(self.expand_requested)
        self.set_chart(EMPTY)
        self.set_expanded(True)

    # ------------------------------------------------------------------------------------------ feeding

    def set_chart(self, chart: SightingsChart) -> None:
        self.canvas.set_chart(chart)
        self.route_label.setText(self.route_text())
        self.route_label.setToolTip(self.route_text())
        self._refresh_buttons()

    def set_follow_available(self, available: bool) -> None:
        """Whether F and the menu offer to follow a confirmed sighting to the next camera."""
        self.canvas.follow_available = bool(available)

    def set_follow_window(self, seconds: float) -> None:
        """Show the follow window (rounded to whole hours within ``FOLLOW_HOURS``) without reporting it back."""
        low, high = self.FOLLOW_HOURS
        self.follow_hours.blockSignals(True)
        self.follow_hours.setValue(min(max(round(seconds / 3600.0), low), high))
        self.follow_hours.blockSignals(False)

    def set_expanded(self, expanded: bool) -> None:
        """Show the lanes, or only the line with the route (the strip then keeps to that line's height)."""
        self.canvas.setVisible(expanded)
        for button in (self.zoom_out_button, self.zoom_in_button, self.fit_button, self.follow_hours):
            button.setVisible(expanded)
        self.toggle_button.setChecked(expanded)
        self.toggle_button.setText("Hide timeline" if expanded else "Show timeline")
        margins = self.layout().contentsMargins()
        line = self.header.sizeHint().height() + margins.top() + margins.bottom()
        self.setMaximumHeight(16_777_215 if expanded else line)

    def is_expanded(self) -> bool:
        return self.toggle_button.isChecked()

    # ------------------------------------------------------------------------------------------ reading

    @property
    def chart(self) -> SightingsChart:
        return self.canvas.chart

    def route_text(self) -> str:
        """"Route: cam02 → cam05 · 3 sightings" (and how many have no time), or what to do without any."""
        chart = self.chart
        confirmed = sum(1 for row in chart.rows if not row.proposed) + chart.untimed
        if not confirmed:
            proposed = len(chart.rows)
            return f"{proposed} proposed" if proposed else "No confirmed items yet"
        parts = [f"Route: {chart.route}", f"{confirmed} sighting{'s' if confirmed != 1 else ''}"]
        if chart.untimed:
            parts.append(f"{chart.untimed} without a time")
        proposed = sum(1 for row in chart.rows if row.proposed)
        if proposed:
            parts.append(f"{proposed} proposed")
        return " · ".join(parts)

    def current_row(self) -> SightingRow | None:
        place = self.canvas.current
        return None if place is None else self.chart.rows[place]

    # ------------------------------------------------------------------------------------------ actions

    def select(self, place: int) -> None:
        """Make row ``place`` current and report its items, as a click does."""
        self.canvas.activate(place)

    def _activated(self, place: int) -> None:
        row = self.chart.rows[place]
        self.sighting_selected.emit(list(row.items), row.best)

    def _refresh_buttons(self) -> None:
        shown = self.canvas.visible_range() is not None
        for button in (self.zoom_out_button, self.zoom_in_button, self.fit_button):
            button.setEnabled(shown)
