"""``Panes``: the main window's widgets and how they sit: the query panel over the step timeline and the case's
notes on the left, the results grid in the centre, the detail pane over the distribution panel on the right, the
sightings timeline under all three (its line with the route, and its lanes when opened), the open case named
above them with the banner under it (``central`` holds them all)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QSizePolicy, QSplitter, QTabWidget, QVBoxLayout, QWidget

from app.views.detail import DetailPane
from app.views.distribution import DistributionPanel
from app.views.notes_panel import NotesPanel
from app.views.query_panel import QueryPanel
from app.views.results import ResultsView
from app.views.sightings_timeline import SightingsTimeline
from app.views.timeline import StepTimeline
from app.window.banner import Banner
from app.window.layout import CENTRE_MIN_WIDTH, sightings_height


class Panes:
    """The views (``query_panel``, ``timeline``, ``notes``, ``results``, ``detail``, ``distribution``,
    ``sightings``), the ``banner`` and ``case_label``, and the splitters that hold them (``left``, ``right``,
    ``columns``; ``rows``: the columns over the sightings timeline)."""

    def __init__(self) -> None:
        self.query_panel = QueryPanel()
        self.timeline = StepTimeline()
        self.notes = NotesPanel()
        self.results = ResultsView()
        self.detail = DetailPane()
        self.distribution = DistributionPanel()
        self.sightings = SightingsTimeline()
        self.banner = Banner()
        self.case_label = QLabel()
        self.case_label.setTextFormat(Qt.TextFormat.RichText)
        self.case_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.case_label.setContentsMargins(4, 0, 4, 0)

        self.side_tabs = QTabWidget()
        self.side_tabs.setDocumentMode(True)
        self.side_tabs.addTab(self.timeline, "Steps")
        self.side_tabs.addTab(self.notes, "Notes")
        self.detail_scroll = QScrollArea()
        self.detail_scroll.setWidget(self.detail)
        self.detail_scroll.setWidgetResizable(True)
        self.detail_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.detail_scroll.setMinimumHeight(140)

        self.left = QSplitter(Qt.Orientation.Vertical)
        self.left.addWidget(self.query_panel)
        self.left.addWidget(self.side_tabs)
        self.right = QSplitter(Qt.Orientation.Vertical)
        self.right.addWidget(self.detail_scroll)
        self.right.addWidget(self.distribution)
        self.columns = QSplitter(Qt.Orientation.Horizontal)
        for widget in (self.left, self.results, self.right):
            self.columns.addWidget(widget)
        self.results.setMinimumWidth(CENTRE_MIN_WIDTH)  # room for two thumbnails; the side columns size to content
        self.columns.setStretchFactor(1, 1)
        for splitter in (self.left, self.right, self.columns):
            splitter.setChildrenCollapsible(False)
            splitter.setHandleWidth(6)
        self.rows = QSplitter(Qt.Orientation.Vertical)
        self.rows.addWidget(self.columns)
        self.rows.addWidget(self.sightings)
        self.rows.setStretchFactor(0, 1)
        self.rows.setChildrenCollapsible(False)
        self.rows.setHandleWidth(6)
        self.sightings.expand_requested.connect(self.open_sightings)

        self.central = QWidget()
        layout = QVBoxLayout(self.central)
        layout.setContentsMargins(6, 4, 6, 0)
        layout.setSpacing(4)
        layout.addWidget(self.case_label)
        layout.addWidget(self.banner)
        layout.addWidget(self.rows, 1)

    def splitters(self) -> tuple[tuple[str, QSplitter], ...]:
        """The splitters by the names the window's settings remember them under."""
        return (("columns", self.columns), ("left", self.left), ("right", self.right))

    def focus_tab(self, panel: QWidget) -> None:
        """Bring the side tab ``panel`` (the step timeline or the notes) forward and focus its list."""
        self.side_tabs.setCurrentWidget(panel)
        panel.list.setFocus()

    def open_sightings(self, open_: bool, height: int | None = None) -> None:
        """Open the sightings timeline's lanes (at their share of ``height``, by default the panes' height) or
        close them to the line with the route."""
        self.sightings.set_expanded(open_)
        if open_:
            total = height or sum(self.rows.sizes())
            strip = sightings_height(total)
            self.rows.setSizes([max(total - strip, 0), strip])

    def focus_sightings(self) -> None:
        """Open the sightings timeline and focus its lanes."""
        if not self.sightings.is_expanded():
            self.open_sightings(True)
        self.sightings.canvas.setFocus()
