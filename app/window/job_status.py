"""``JobStatus``: the status bar's view of the app's one running job (``app.jobs.JobRunner``): its name or
latest progress message, a progress bar (busy while the total is unknown) and a cancel button."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QStatusBar


class JobStatus:
    """Adds its widgets to ``bar``, hidden until a job runs; ``cancel_button.clicked`` is for the caller."""

    def __init__(self, bar: QStatusBar) -> None:
        self.progress_bar = QProgressBar()
        self.progress_bar.setMaximumWidth(260)
        self.progress_bar.setTextVisible(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the running job (Esc)")
        self.label = QLabel()
        for widget in (self.label, self.progress_bar, self.cancel_button):
            bar.addPermanentWidget(widget)
            widget.hide()

    def show_job(self, busy: bool, name: str) -> None:
        """Show (``busy``) or hide the job display, named ``name``, its progress unknown so far."""
        self.label.setText(name)
        self.progress_bar.setRange(0, 0)
        for widget in (self.label, self.progress_bar, self.cancel_button):
            widget.setVisible(busy)

    def progress(self, done: int, total: int, message: str) -> None:
        if total > 0:
            self.progress_bar.setRange(0, total)
            self.progress_bar.setValue(min(done, total))
            self.progress_bar.setFormat("%v / %m  (%p%)")
        else:
            self.progress_bar.setRange(0, 0)
        if message:
            self.label.setText(message)
