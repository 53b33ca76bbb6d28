"""``Messages``: how the main window speaks to the analyst: errors in the banner and the status bar, passing
information in the status bar, notices in the banner until dismissed; never a traceback or a blocking box."""

from __future__ import annotations

from PySide6.QtWidgets import QStatusBar

from app.window.banner import Banner

#: How long an information message stays in the status bar (ms).
MESSAGE_MS = 8000


class Messages:
    """Says things through the window's ``banner`` and its ``status_bar``."""

    def __init__(self, banner: Banner, status_bar: QStatusBar) -> None:
        self.banner = banner
        self.status_bar = status_bar

    def error(self, text: str) -> None:
        self.banner.show_message(text, "error")
        self.status_bar.showMessage(text, MESSAGE_MS)

    def message(self, text: str) -> None:
        self.status_bar.showMessage(text, MESSAGE_MS)

    def notice(self, text: str) -> None:
        """A notice that stays until dismissed (e.g. how to give a checkpoint)."""
        self.banner.show_message(text, "info")
