"""``Panes``: the main window's widgets and how they sit: the query panel over the step timeline and the case's
notes on the left, the results grid in the centre, the detail pane over the distribution panel on the right, the
open case named above them with the banner under it (``central`` holds them all)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QSizePolicy, QSplitter, QTabWidget, QVBoxLayout, QWidget

from app.views.detail import DetailPane
from app.views.distribution import DistributionPanel
from app.views.notes_panel import NotesPanel
from app.views.query_panel import QueryPanel
from app.views.results import ResultsView
from app.views.timeline import StepTimeline
from app.window.banner import Banner
from app.window.layout import CENTRE_MIN_WIDTH


class Panes:
    """The views (``query_panel``, ``timeline``, ``notes``, ``results``, ``detail``, ``distribution``), the
    ``banner`` and ``case_label``, and the splitters that hold them (``left``, ``right``, ``columns``)."""

    def __init__(self) -> None:
        self.query_panel = QueryPanel()
        self.timeline = StepTimeline()
        self.notes = NotesPanel()
        self.results = ResultsView()
        self.detail = DetailPane()
        self.distribution = DistributionPanel()
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

        self.central = QWidget()
        layout = QVBoxLayout(self.central)
        layout.setContentsMargins(6, 4, 6, 0)
        layout.setSpacing(4)
        layout.addWidget(self.case_label)
        layout.addWidget(self.banner)
        layout.addWidget(self.columns, 1)

    def splitters(self) -> tuple[tuple[str, QSplitter], ...]:
        """The splitters by the names the window's settings remember them under."""
        return (("columns", self.columns), ("left", self.left), ("right", self.right))

    def focus_tab(self, panel: QWidget) -> None:
        """Bring the side tab ``panel`` (the step timeline or the notes) forward and focus its list."""
        self.side_tabs.setCurrentWidget(panel)
        panel.list.setFocus()
