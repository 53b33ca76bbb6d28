"""A Qt GUI application for drawing reports (fonts, QPainter on images, QPdfWriter), also without a display.

Inside the app the running ``QApplication`` is used. Elsewhere (CLI, tests) a ``QGuiApplication`` is made
once; on Linux with neither an X11 nor a Wayland display and ``QT_QPA_PLATFORM`` unset it uses Qt's
``offscreen`` platform. Create it on the main thread (the first report of a CLI run does).
"""

from __future__ import annotations

import os
import sys

from app.report.errors import ReportError

_APPLICATION = None


def _headless() -> bool:
    return sys.platform.startswith("linux") and not os.environ.get("DISPLAY") \
        and not os.environ.get("WAYLAND_DISPLAY")


def ensure_gui_application():
    """The running QGuiApplication (or QApplication), made if there is none."""
    global _APPLICATION
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtGui import QGuiApplication

    running = QCoreApplication.instance()
    if running is not None:
        if not isinstance(running, QGuiApplication):
            raise ReportError("reports need a Qt GUI application, but a console-only QCoreApplication is running")
        return running
    if _headless() and "QT_QPA_PLATFORM" not in os.environ:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    _APPLICATION = QGuiApplication([sys.argv[0] if sys.argv else "lineup"])
    return _APPLICATION
