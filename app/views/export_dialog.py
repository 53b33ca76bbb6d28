"""Case → Export report…: where to write the report (PDF or HTML, from the file name or the format chosen)
and whether to blur faces in its thumbnails. ``ask_export`` returns ``(path, blur_faces)`` or None. The export
itself runs as a background job (``app.jobs.ExportReportJob``) whose progress and Cancel button the status bar
shows; the dialog says so."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

FORMATS = {"PDF": ".pdf", "HTML (one self-contained file)": ".html"}


class ExportDialog(QDialog):
    """See the module docstring."""

    def __init__(self, default_path: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export report")
        self.format_box = QComboBox(self)
        for name, suffix in FORMATS.items():
            self.format_box.addItem(name, suffix)
        self.path_edit = QLineEdit(str(default_path.with_suffix(".pdf")), self)
        browse = QPushButton("Browse…", self)
        browse.clicked.connect(self._browse)
        self.blur_box = QCheckBox("Blur faces in the report's thumbnails (evidence files are never changed)", self)
        self.blur_box.setToolTip("Each confirmed result's thumbnail is searched with a face detector and every face "
                                 "found is blurred; where none is found, the head region is blurred instead. "
                                 "Only the report's copies change.")
        self.how = QLabel("The report lists every search step of the case, on every branch, undone ones included. "
                          "It is written in the background: its progress and a Cancel button show in the status "
                          "bar, and a cancelled export leaves no file.", self)
        self.how.setWordWrap(True)
        self.problem = QLabel(self)
        self.problem.setStyleSheet("color: #b91c1c;")
        self.problem.setWordWrap(True)
        self.problem.hide()
        where = QHBoxLayout()
        where.addWidget(self.path_edit, 1)
        where.addWidget(browse)
        form = QFormLayout()
        form.addRow("Format", self.format_box)
        form.addRow("File", where)
        form.addRow("", self.blur_box)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.how)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)
        self.format_box.currentIndexChanged.connect(self._format_changed)
        self.resize(560, self.sizeHint().height())

    def path(self) -> Path:
        return Path(self.path_edit.text().strip()).expanduser()

    def _format_changed(self, _index: int) -> None:
        text = self.path_edit.text().strip()
        if text:
            self.path_edit.setText(str(Path(text).with_suffix(self.format_box.currentData())))

    def _browse(self) -> None:
        suffix = self.format_box.currentData()
        chosen, _ = QFileDialog.getSaveFileName(self, "Export report", str(self.path()),
                                                f"{self.format_box.currentText()} (*{suffix})")
        if chosen:
            self.path_edit.setText(str(Path(chosen).with_suffix(suffix)))

    def problem_with(self, path: Path) -> str:
        """Why ``path`` cannot take the report ("" when it can)."""
        if not path.name:
            return "Give a file name for the report"
        if path.suffix.lower() not in FORMATS.values():
            return f"The report file must end in .pdf or .html, not {path.suffix or 'nothing'!r}"
        if not path.parent.is_dir():
            return f"The folder {path.parent} does not exist"
        return ""

    def _accept(self) -> None:
        problem = self.problem_with(self.path())
        if problem:
            self.problem.setText(problem)
            self.problem.show()
            return
        self.accept()


def ask_export(default_path: Path, parent: QWidget | None) -> tuple[Path, bool] | None:
    dialog = ExportDialog(default_path, parent)
    if dialog.exec() != QDialog.DialogCode.Accepted:
        return None
    return dialog.path(), dialog.blur_box.isChecked()
