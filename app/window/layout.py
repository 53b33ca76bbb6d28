"""The main window's sizes: it opens at a size taken from the screen, its minimum (``MINIMUM_SIZE``) is fixed and
never grows with content, its columns and panes start at shares of the window, and with settings it
remembers its geometry, its splitters and the last case opened."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QSettings
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QSplitter, QWidget

DEFAULT_SIZE = (1500, 950)  # without a screen to measure
#: The largest opening size: the window fills the screen's free area up to this (a 4K screen gets a window,
#: not a wall).
LARGEST_OPENING_SIZE = (2560, 1440)
#: The window's minimum: fits a 1366×768 screen with a task bar; content never raises it.
MINIMUM_SIZE = (1000, 600)
#: Shares of the width for the left, centre and right columns.
COLUMN_SHARES = (0.27, 0.43, 0.30)
CENTRE_MIN_WIDTH = 300
#: Shares of the left column's height (query, steps/notes) and of the right one's (detail, plot).
LEFT_SHARES, RIGHT_SHARES = (0.6, 0.4), (0.52, 0.48)
#: The sightings timeline under the columns starts with its lanes open in windows at least this tall (on a
#: 1366×768 screen only its line with the route shows until opened), and opens at this share of the height,
#: within these pixels.
SIGHTINGS_OPEN_FROM, SIGHTINGS_SHARE, SIGHTINGS_HEIGHT = 900, 0.22, (130, 260)


def fit_to_screen(window: QWidget) -> None:
    """Size ``window`` to fill the screen's free area less a window frame (up to ``LARGEST_OPENING_SIZE``; never
    below the minimum the screen allows); ``DEFAULT_SIZE`` when there is no screen to measure."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    width, height = DEFAULT_SIZE
    if screen is not None:
        free = screen.availableGeometry()
        width = min(LARGEST_OPENING_SIZE[0], free.width() - 16)
        height = min(LARGEST_OPENING_SIZE[1], free.height() - 40)
        window.setMinimumSize(min(MINIMUM_SIZE[0], free.width()), min(MINIMUM_SIZE[1], free.height()))
    window.resize(max(width, window.minimumWidth()), max(height, window.minimumHeight()))


def share_out(window: QWidget, columns: QSplitter, left: QSplitter, right: QSplitter) -> None:
    """Set the ``columns`` of ``window`` and the panes of its ``left`` and ``right`` columns as shares of its
    size."""
    width = max(window.width(), window.minimumWidth())
    height = max(window.height(), window.minimumHeight())
    columns.setSizes([round(width * share) for share in COLUMN_SHARES])
    left.setSizes([round(height * share) for share in LEFT_SHARES])
    right.setSizes([round(height * share) for share in RIGHT_SHARES])


def sightings_height(height: int) -> int:
    """The pixels the open sightings timeline takes in a window ``height`` pixels tall."""
    return min(max(round(height * SIGHTINGS_SHARE), SIGHTINGS_HEIGHT[0]), SIGHTINGS_HEIGHT[1])


def restore_layout(window: QWidget, splitters: Iterable[tuple[str, QSplitter]], settings: QSettings | None) -> None:
    """Put back the geometry of ``window`` and the state of its named ``splitters`` as ``settings`` remember them."""
    if settings is None:
        return
    geometry = settings.value("window/geometry")
    if geometry is not None:
        window.restoreGeometry(geometry)
    for name, splitter in splitters:
        saved = settings.value(f"window/{name}")
        if saved is not None:
            splitter.restoreState(saved)


def save_layout(window: QWidget, splitters: Iterable[tuple[str, QSplitter]], settings: QSettings | None,
                case_id: int | None) -> None:
    """Remember the geometry of ``window``, its named ``splitters`` and the open case (``case_id``, when one is
    open)."""
    if settings is None:
        return
    settings.setValue("window/geometry", window.saveGeometry())
    for name, splitter in splitters:
        settings.setValue(f"window/{name}", splitter.saveState())
    if case_id is not None:
        settings.setValue("case/last", case_id)
    settings.sync()
