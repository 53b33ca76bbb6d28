"""Gallery → New gallery…: make a gallery from footage (video files or a folder), a folder of person crops or a
built world, in a chosen destination folder. Every source added joins an ingest queue (``app.state.ingest_queue``)
that runs in the background, one source after another; each row shows its progress, the rate measured so far
and the time left, and has its own Cancel. When the queue is done the dialog says ``gallery_ready(folder)``
(the window opens that gallery). The dialog is not modal: the window stays usable while footage is ingested.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.state.ingest_queue import CANCELLED, DONE, FAILED, QUEUED, RUNNING, IngestQueue, IngestQueueError
from app.views.file_filters import footage_filter

KIND_NAMES = {"footage": "Footage (video files or a folder)", "crops": "A folder of person crops",
              "world": "A built world"}
COLUMNS = ("Source", "Kind", "Progress", "Status", "")


def check_destination(path: str | Path) -> Path:
    """The destination folder: new, empty or an existing gallery (the sources add to it); else
    ``IngestQueueError``."""
    if not str(path).strip():
        raise IngestQueueError("Choose the folder the new gallery goes in")
    folder = Path(path).expanduser()
    if folder.exists() and not folder.is_dir():
        raise IngestQueueError(f"The destination {folder} is a file, not a folder")
    if folder.is_dir() and any(folder.iterdir()) and not (folder / "gallery.json").is_file():
        raise IngestQueueError(f"The destination {folder} holds other files: choose a new or empty folder (or a "
                               "gallery, to add to it)")
    return folder


class NewGalleryDialog(QDialog):
    """See the module docstring. ``queue``: the ingest queue the sources join."""

    gallery_ready = Signal(object)  # Path of the gallery the queue made or grew

    def __init__(self, queue: IngestQueue, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("New gallery")
        self.setModal(False)
        self.resize(760, 420)
        self.queue = queue
        self.destination_edit = QLineEdit(self)
        self.destination_edit.setPlaceholderText("Folder the gallery is made in (new or empty)")
        browse = QPushButton("Choose…", self)
        browse.clicked.connect(self._choose_destination)
        self.kind_box = QComboBox(self)
        for kind, name in KIND_NAMES.items():
            self.kind_box.addItem(name, kind)
        self.add_button = QPushButton("Add source…", self)
        self.add_button.clicked.connect(self._choose_source)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.status_label = QLabel("Add the footage, crop folders or built worlds to ingest.", self)
        self.status_label.setWordWrap(True)
        self.start_button = QPushButton("Start", self)
        self.start_button.setDefault(True)
        self.start_button.clicked.connect(self.start)
        close = QPushButton("Close", self)
        close.setToolTip("Close the dialog; the queue keeps running in the background")
        close.clicked.connect(self.hide)

        where = QHBoxLayout()
        where.addWidget(QLabel("Destination:", self))
        where.addWidget(self.destination_edit, 1)
        where.addWidget(browse)
        what = QHBoxLayout()
        what.addWidget(QLabel("Source:", self))
        what.addWidget(self.kind_box, 1)
        what.addWidget(self.add_button)
        buttons = QHBoxLayout()
        buttons.addWidget(self.status_label, 1)
        buttons.addWidget(self.start_button)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addLayout(where)
        layout.addLayout(what)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)

        self.started = False
        self._rows: dict[int, int] = {}  # queue index → table row
        queue.changed.connect(self._refresh)
        queue.finished.connect(self._queue_finished)
        self._ticker = QTimer(self)  # the ETA moves on between progress reports
        self._ticker.setInterval(1000)
        self._ticker.timeout.connect(self._refresh_all)

    # ------------------------------------------------------------------------------------------- actions

    def set_destination(self, path: str | Path) -> None:
        self.destination_edit.setText(str(path))

    def add_source(self, source: str | Path, kind: str) -> int | None:
        """Queue ``source`` (one of ``app.state.ingest_queue.SOURCE_KINDS``) for the destination; it starts at
        once when the queue already runs. Returns its queue index, or None (the status line says why)."""
        try:
            destination = check_destination(self.destination_edit.text())
            index = self.queue.add(source, kind, destination)
        except IngestQueueError as exc:
            self._say(str(exc), error=True)
            return None
        self._say(f"{len(self._rows)} source{'s' if len(self._rows) != 1 else ''} for {destination}")
        if self.started:
            self.queue.start()
        return index

    def start(self) -> None:
        """Run the queue (each source in turn, in the background)."""
        if not any(self.queue.entries[i].status == QUEUED for i in self._rows):
            self._say("Add a source first", error=True)
            return
        self.started = True
        self._ticker.start()
        self._say("Ingesting in the background; you can close this dialog")
        self.queue.start()

    def cancel(self, index: int) -> None:
        self.queue.cancel(index)

    # ------------------------------------------------------------------------------------------- dialogs

    def _choose_destination(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Folder for the new gallery")
        if folder:
            self.set_destination(folder)

    def _choose_source(self) -> None:
        kind = self.kind_box.currentData()
        if kind == "footage":
            files, _ = QFileDialog.getOpenFileNames(self, "Footage files", "", footage_filter())
            sources = files or [QFileDialog.getExistingDirectory(self, "…or a folder of footage")]
        else:
            title = "A folder of person crops" if kind == "crops" else "A built world"
            sources = [QFileDialog.getExistingDirectory(self, title)]
        for source in sources:
            if source:
                self.add_source(source, kind)

    # ------------------------------------------------------------------------------------------- rows

    def _say(self, text: str, *, error: bool = False) -> None:
        self.status_label.setText(text)
        self.status_label.setStyleSheet("color:#8a1c1c;" if error else "")

    def row_text(self, index: int) -> str:
        """The status text of a queue entry's row (tests, screen readers)."""
        item = self.table.item(self._rows[index], 3)
        return "" if item is None else item.text()

    def progress_bar(self, index: int) -> QProgressBar:
        return self.table.cellWidget(self._rows[index], 2)

    def _refresh_all(self) -> None:
        for index in self._rows:
            self._refresh(index)
        if not self.queue.active:
            self._ticker.stop()

    def _refresh(self, index: int) -> None:
        entry = self.queue.entries[index]
        if index not in self._rows:
            row = self.table.rowCount()
            self.table.insertRow(row)
            self._rows[index] = row
            self.table.setItem(row, 0, QTableWidgetItem(str(entry.source)))
            self.table.setItem(row, 1, QTableWidgetItem(entry.kind))
            bar = QProgressBar(self.table)
            bar.setRange(0, 0 if entry.status == RUNNING else 1)
            bar.setValue(0)
            self.table.setCellWidget(row, 2, bar)
            button = QPushButton("Cancel", self.table)
            button.clicked.connect(lambda _checked=False, i=index: self.cancel(i))
            self.table.setCellWidget(row, 4, button)
        row = self._rows[index]
        bar = self.table.cellWidget(row, 2)
        if entry.total > 0:
            bar.setRange(0, entry.total)
            bar.setValue(min(entry.done, entry.total))
        elif entry.status == RUNNING:
            bar.setRange(0, 0)  # busy until the first total
        elif entry.status == DONE:
            bar.setRange(0, 1)
            bar.setValue(1)
        text = self.queue.describe(index)
        status = self.table.item(row, 3)
        if status is None:
            status = QTableWidgetItem()
            self.table.setItem(row, 3, status)
        status.setText(text)
        status.setToolTip(entry.message or text)
        self.table.cellWidget(row, 4).setEnabled(entry.status in (QUEUED, RUNNING))

    def _queue_finished(self, grown: list[Path]) -> None:
        self._ticker.stop()
        self.started = False
        entries = [self.queue.entries[i] for i in self._rows]
        done = sum(e.status == DONE for e in entries)
        stopped = sum(e.status in (CANCELLED, FAILED) for e in entries)
        self._say(f"Finished: {done} source{'s' if done != 1 else ''} ingested"
                  + (f", {stopped} cancelled or failed" if stopped else ""))
        for folder in grown:
            if (Path(folder) / "gallery.json").is_file():
                self.gallery_ready.emit(Path(folder))
                break


__all__ = ["NewGalleryDialog", "check_destination"]
