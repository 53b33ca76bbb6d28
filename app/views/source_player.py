"""The detail pane's source player: the item's source around the item (``seconds`` either side, default
``DEFAULT_SECONDS`` or the ``LINEUP_PLAYER_SECONDS`` setting), frame by frame, with the boxes of the item's
sighting drawn (the selected item's in amber, the sighting's other items in blue, thin where interpolated
between two items of a track); for an image of a folder, the neighbouring images of its sequence.

Previous / next frame (buttons, or , and . while the pane has focus) move by exactly one frame; Space plays
and pauses. Under the picture: the frame number, the video time and the wall-clock time of the camera. A
source that cannot be played is said, naming the file. Frames are decoded by ``app.state.source_feed`` on its
own thread; the UI only paints the images it hands over, and a new item cancels the decoding of the last."""

from __future__ import annotations

import math
import os

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QImage, QKeySequence, QPalette, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from app.state.source_feed import DEFAULT_SECONDS, ClipInfo, FrameFacts, FrameFeed
from app.views.detail_loading import render_frame
from app.views.detail_widgets import ImageView
from app.views.results_model import format_time

SECONDS_VARIABLE = "LINEUP_PLAYER_SECONDS"
#: Milliseconds an image of a folder stays on screen while playing (folders have no frame rate).
IMAGE_INTERVAL_MS = 500
#: The fastest play timer (milliseconds): a 200 fps clip plays at the rate the decoder keeps up with.
MIN_INTERVAL_MS = 15


def player_seconds() -> float:
    """``LINEUP_PLAYER_SECONDS`` when set to a number of seconds ≥ 0, else ``DEFAULT_SECONDS``."""
    value = os.environ.get(SECONDS_VARIABLE, "").strip()
    if not value:
        return DEFAULT_SECONDS
    try:
        seconds = float(value)
    except ValueError:
        raise ValueError(f"{SECONDS_VARIABLE}={value!r} is not a number of seconds") from None
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"{SECONDS_VARIABLE}={value!r} must be a number of seconds ≥ 0")
    return seconds


def _video_time(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)}:{rest:06.3f}"


class SourcePlayer(QWidget):
    """Plays an item's source. ``open(item, gallery)`` / ``close()``; ``step(±1)``, ``play()``, ``pause()``,
    ``toggle()``; ``install_keys(widget)`` answers , . and Space while ``widget`` (or a child) has focus.
    Signals: ``opened(info)``, ``failed(message)``, ``frame_shown(position)``."""

    opened = Signal(object)
    failed = Signal(str)
    frame_shown = Signal(int)

    def __init__(self, parent: QWidget | None = None, *, seconds: float | None = None) -> None:
        super().__init__(parent)
        self._seconds = player_seconds() if seconds is None else seconds
        self._feed = FrameFeed(render_frame, self)
        self._feed.opened.connect(self._opened, Qt.ConnectionType.QueuedConnection)
        self._feed.failed.connect(self._failed, Qt.ConnectionType.QueuedConnection)
        self._feed.frame_ready.connect(self._arrived, Qt.ConnectionType.QueuedConnection)
        self._feed.frame_failed.connect(self._frame_failed, Qt.ConnectionType.QueuedConnection)
        self._generation = 0
        self._info: ClipInfo | None = None
        self._facts: FrameFacts | None = None
        self._wanted: int | None = None  # the position asked of the feed and not yet shown
        self._message = ""
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._tick)

        self.view = ImageView("", self, max_zoom=2.0)
        self.view.setMinimumSize(60, 120)
        # tool buttons: a push button's style minimum width would make the narrow detail column scroll sideways
        self.previous_button = QToolButton(self)
        self.play_button = QToolButton(self)
        self.next_button = QToolButton(self)
        for button, text in ((self.previous_button, "◀"), (self.play_button, "Play"), (self.next_button, "▶")):
            button.setText(text)
        for button, tip in ((self.previous_button, "Previous frame  (,)"), (self.play_button, "Play / pause  (Space)"),
                            (self.next_button, "Next frame  (.)")):
            button.setToolTip(tip)
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # Space stays the player's key, never a button's
            button.setSizePolicy(QSizePolicy.Policy.Minimum, QSizePolicy.Policy.Fixed)
        self.previous_button.clicked.connect(lambda: self.step(-1))
        self.next_button.clicked.connect(lambda: self.step(1))
        self.play_button.clicked.connect(self.toggle)
        self.position_label = QLabel(self)
        self.position_label.setWordWrap(True)
        self.position_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.position_label.setForegroundRole(QPalette.ColorRole.PlaceholderText)

        controls = QHBoxLayout()
        controls.setSpacing(4)
        for button in (self.previous_button, self.play_button, self.next_button):
            controls.addWidget(button)
        controls.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.view, 1)
        layout.addLayout(controls)
        layout.addWidget(self.position_label)
        self.close_clip()

    # ---------------------------------------------------------------------------------------- commands

    def install_keys(self, widget: QWidget) -> None:
        """, / . step a frame back / forward and Space plays or pauses while ``widget`` or a child has focus."""
        for key, slot in ((",", lambda: self.step(-1)), (".", lambda: self.step(1)), ("Space", self.toggle)):
            shortcut = QShortcut(QKeySequence(key), widget)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(slot)

    def set_seconds(self, seconds: float) -> None:
        """Seconds played either side of the item (from the next ``open``)."""
        if not isinstance(seconds, int | float) or not math.isfinite(seconds) or seconds < 0:
            raise ValueError(f"the player's seconds either side must be a number ≥ 0, got {seconds!r}")
        self._seconds = float(seconds)

    def open(self, item, gallery=None) -> None:
        """Play ``item``'s source around it; ``gallery`` (the item's) gives the boxes of its sighting."""
        self.pause()
        self._info = self._facts = None
        self._wanted = None
        self._message = ""
        self._generation = self._feed.open(item, gallery, self._seconds)
        self.view.set_image(None, "Loading the source…")
        self.position_label.setText("")
        self._enable(False)

    def close_clip(self) -> None:
        """Show nothing and stop decoding."""
        self.pause()
        self._info = self._facts = None
        self._wanted = None
        self._message = ""
        self._generation = self._feed.cancel()
        self.view.set_image(None, "")
        self.position_label.setText("")
        self._enable(False)

    def step(self, delta: int) -> None:
        """Show the frame ``delta`` frames from the one shown (or asked for), kept inside the clip."""
        if self._info is None:
            return
        self.pause()
        base = self._wanted if self._wanted is not None else self.position()
        self._ask(min(self._info.last, max(self._info.first, base + delta)))

    def play(self) -> None:
        if self._info is None or self._timer.isActive():
            return
        if self.position() >= self._info.last:  # at the end: play again from the first frame
            self._ask(self._info.first)
        fps = self._info.fps
        self._timer.start(IMAGE_INTERVAL_MS if not fps else max(MIN_INTERVAL_MS, round(1000 / fps)))
        self.play_button.setText("Pause")

    def pause(self) -> None:
        self._timer.stop()
        self.play_button.setText("Play")

    def toggle(self) -> None:
        self.pause() if self._timer.isActive() else self.play()

    def shutdown(self) -> None:
        """End the decoding thread (the pane is going away)."""
        self._timer.stop()
        self._feed.stop()

    # ---------------------------------------------------------------------------------------- queries

    def info(self) -> ClipInfo | None:
        return self._info

    def position(self) -> int:
        """The position shown (a video's frame number, an image's index in its sequence); -1 when none."""
        return -1 if self._facts is None else self._facts.position

    def facts(self) -> FrameFacts | None:
        """What the shown frame is: position, file, times, boxes drawn."""
        return self._facts

    def image(self) -> QImage | None:
        return self.view.image()

    def message(self) -> str:
        """Why the source cannot be played ('' when it can)."""
        return self._message

    def is_playing(self) -> bool:
        return self._timer.isActive()

    def busy(self) -> bool:
        """Whether a frame asked for has not arrived yet."""
        return self._wanted is not None

    def decoded(self) -> int:
        """Frames the decoding thread has read so far."""
        return self._feed.decoded

    # ---------------------------------------------------------------------------------------- internals

    def _enable(self, on: bool) -> None:
        for button in (self.previous_button, self.play_button, self.next_button):
            button.setEnabled(on)

    def _ask(self, position: int) -> None:
        self._wanted = position
        self._feed.show(self._generation, position)

    def _tick(self) -> None:
        if self._info is None or self._wanted is not None:
            return  # the decoder is behind: this tick is skipped, never queued
        if self.position() >= self._info.last:
            self.pause()
            return
        self._ask(self.position() + 1)

    def _opened(self, generation: int, info: ClipInfo) -> None:
        if generation != self._generation:
            return
        self._info = info
        self._enable(True)
        self._ask(info.start)
        self.opened.emit(info)

    def _failed(self, generation: int, message: str) -> None:
        if generation != self._generation:
            return
        self._message = f"Cannot play the source: {message}"
        self.view.set_image(None, self._message)
        self.position_label.setText("")
        self.failed.emit(self._message)

    def _frame_failed(self, generation: int, position: int, message: str) -> None:
        if generation != self._generation:
            return
        self._wanted = None
        self.pause()
        if self._info is not None and position > self._info.start and self._facts is not None:
            self.position_label.setText(f"{self._label(self._facts)} · the source ends here")
            return
        self._failed(generation, message)

    def _arrived(self, generation: int, image: QImage, facts: FrameFacts) -> None:
        if generation != self._generation or facts.position != self._wanted:
            return
        self._wanted = None
        self._facts = facts
        self.view.set_image(image)
        self.position_label.setText(self._label(facts))
        self.frame_shown.emit(facts.position)

    def _label(self, facts: FrameFacts) -> str:
        info = self._info
        if info is not None and info.kind == "images":
            where = f"Image {facts.position - info.first + 1} of {info.last - info.first + 1} · {facts.file.name}"
        else:
            offset = "" if info is None else f" ({facts.position - info.start:+d})"
            where = f"Frame {facts.position}{offset} · {_video_time(facts.video_time)}"
        return f"{where} · {format_time(facts.wall_time)}"
