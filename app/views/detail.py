"""Detail pane: one gallery item large — its crop, its metadata (source, frame, time, camera, box, track,
resolution, SHA-256) and the source frame with the box drawn — plus confirm / reject / find similar, and why
the item ranked where it did (``set_explanation``: similarity vs attribute contribution, the network behind the
similarity, and each attribute the query states with what each evidence source says, networks and sources named
by ``app.provenance``; ``StepResult.explain``), in words (``app.state.explanation``), with how far the
ranking sources are trusted on the item's gallery.

Laid out for a narrow side column (about 230 pixels at 1366 × 768): the actions and the facts first, the full
pane width for the facts, the crop beside its source frame below; a short pane scrolls, never sideways.

Crop and source frame are read off the UI thread (a video is opened with OpenCV and sought to the item's
frame); when the source cannot be read the pane says why instead of showing a frame. Below them the source
player (``app.views.source_player``) plays the source around the item with its sighting's boxes; once it shows
a frame it stands in for the still source frame."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QThreadPool, Signal
from PySide6.QtGui import QFont, QImage, QKeySequence, QPalette, QShortcut
from PySide6.QtWidgets import (
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.state.explanation import RankingTrust, explanation_trust, explanation_words
from app.views.detail_loading import (  # noqa: F401 - the pane's drawing rules, importable from here
    BOX_COLOR,
    OUTSIDE_DIM,
    LoadRelay,
    LoadTask,
    draw_box,
    read_source_frame,
)
from app.views.detail_widgets import ElidedLabel, ImageView, split_hash
from app.views.flow_layout import FlowLayout
from app.views.results_model import (
    CLEAR,
    CONFIRMED,
    MARK_COLORS,
    OUTFIT_CHANGE_TIP,
    REJECTED,
    format_score,
    format_time,
)
from app.views.source_player import SourcePlayer


class DetailInputError(ValueError):
    """The detail pane received an unusable item."""


#: Evidence that agrees (or says otherwise) takes the colour of a confirm (or a reject).
_MARK_KINDS = {True: CONFIRMED, False: REJECTED}
#: The colour of the warning that scores on real footage are weak.
WARNING_COLOR = "#b45309"


def _html(text: object) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


#: The explanation's share of the pane (pixels); more scrolls.
EXPLANATION_MAX_HEIGHT = 170
#: The crop's and the source frame's smallest size, and the crop's widest (pixels): small enough that the
#: pane fits the side column of a 1366 × 768 window, where it is about 230 pixels wide.
CROP_MIN_SIZE = (60, 150)
CROP_MAX_WIDTH = 140
IMAGE_MAX_HEIGHT = 320

def explanation_html(explanation: dict, ranked_by: str | None = None, trust: RankingTrust | None = None) -> str:
    """Rich text for an explanation, in words (``app.state.explanation``): the score's parts, which network the
    similarity comes from (``ranked_by``, ``app.provenance.similarity_line``), how far the ranking sources are
    trusted on the gallery (``trust``; its warning stands out), then one line per stated attribute with its mark,
    what each source read and what the description (or the example) says."""
    words = explanation_words(explanation)
    lines = [f"<b>{_html(words.score)}</b>" + (f" (view {_html(words.view)})" if words.view else "")]
    if words.likeness:
        lines.append(words.likeness)
    if ranked_by:
        lines.append(_html(ranked_by))
    if trust is not None:
        lines.append(_html(trust.sentence))
        if trust.warning:
            lines.append(f"<b style='color:{WARNING_COLOR}'>{_html(trust.warning)}</b>")
    if words.filtered:
        lines.append("<i>Removed by this step's filters.</i>")
    if words.evidence is not None:
        lines.append(_html(words.evidence))
    for line in words.attributes:
        kind = _MARK_KINDS.get(line.agrees)
        colored = f"<span style='color:{MARK_COLORS[kind].name()}'>{line.mark}</span>" if kind else line.mark
        lines.append(f"{colored} {_html(line.sentence)}")
    if words.legend is not None:
        lines.append("<i>" + _html(words.legend) + "</i>")
    if words.network is not None:
        name, note = words.network
        lines.append(f"<i>{_html(name)}</i>: {_html(note)}")
    return "<br>".join(lines)


class DetailPane(QWidget):
    """One item in full. Setters: ``set_item``, ``set_explanation``, ``set_mark``, ``clear``. Signals:
    ``marks_changed(ids, mark)`` (same form as ``ResultsView.marks_changed``), ``find_similar_requested(id)``,
    ``loaded(status)`` when the crop and source frame have been read. Keys while the pane has focus: C, R, U (F is
    the main window's Find similar, which takes the pane's item when the pane has focus)."""

    marks_changed = Signal(list, str)
    find_similar_requested = Signal(str)
    find_similar_across_outfits_requested = Signal(str)
    loaded = Signal(str)

    FIELDS = ("Score", "Camera", "Time", "Source", "Frame", "Box", "Track", "Resolution", "Modality", "Identity",
              "Crop SHA-256", "Crop check", "Source SHA-256")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._item = None
        self._crop_path: Path | None = None
        self._mark: str | None = None
        self._generation = 0
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._relay = LoadRelay(self)
        self._relay.loaded.connect(self._arrived, Qt.ConnectionType.QueuedConnection)

        self.title = QLabel(self)
        title_font = QFont(self.title.font())
        title_font.setPointSizeF(title_font.pointSizeF() + 2)
        title_font.setBold(True)
        self.title.setFont(title_font)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)  # a long id never widens
        self.mark_chip = QLabel(self)
        self.mark_chip.setContentsMargins(8, 2, 8, 2)

        self.crop_view = ImageView("No crop", self)
        self.crop_view.setMinimumSize(CROP_MIN_SIZE[0], CROP_MIN_SIZE[1])
        self.crop_view.setMaximumSize(CROP_MAX_WIDTH, IMAGE_MAX_HEIGHT)
        self.frame_view = ImageView("", self, max_zoom=2.0)
        self.frame_view.setMinimumSize(CROP_MIN_SIZE[0], CROP_MIN_SIZE[1])
        self.frame_view.setMaximumHeight(IMAGE_MAX_HEIGHT)
        self.frame_status = QLabel(self)
        self.frame_status.setWordWrap(True)
        self.frame_status.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.player = SourcePlayer(self)  # the source around the item; once it plays, it stands for the still
        self.player.setMinimumHeight(CROP_MIN_SIZE[1])
        self.player.setMaximumHeight(IMAGE_MAX_HEIGHT + 60)
        self.player.install_keys(self)
        self.player.frame_shown.connect(lambda _position: self.frame_view.setVisible(False))
        self.player.failed.connect(lambda _message: self.frame_view.setVisible(True))

        self.why = QLabel(self)
        self.why.setWordWrap(True)
        self.why.setTextFormat(Qt.TextFormat.RichText)
        self.why.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._explanation: dict | None = None
        self._gallery = None  # the item's gallery, when it came with one: its domain decides the trust shown
        self._trust: RankingTrust | None = None

        self.values: dict[str, QLabel] = {}
        self.captions: dict[str, QLabel] = {}
        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        form.setHorizontalSpacing(8)
        form.setVerticalSpacing(3)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        mono = QFont("DejaVu Sans Mono")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        for name in self.FIELDS:
            value = QLabel(self) if "SHA" in name else ElidedLabel(self)  # hashes wrap; the rest elide to fit
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            value.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            caption = QLabel(name, self)
            caption.setForegroundRole(QPalette.ColorRole.PlaceholderText)
            if "SHA" in name:  # a hash under its caption, across the pane, in groups that wrap
                mono.setPointSizeF(value.font().pointSizeF() - 1)
                value.setFont(mono)
                value.setWordWrap(True)
                value.setContentsMargins(12, 0, 0, 0)
                form.addRow(caption)
                form.addRow(value)
            else:
                form.addRow(caption, value)
            self.values[name] = value
            self.captions[name] = caption

        self.confirm_button = QPushButton("Confirm  (C)", self)
        self.reject_button = QPushButton("Reject  (R)", self)
        self.clear_button = QPushButton("Clear mark  (U)", self)
        self.similar_button = QPushButton("Find similar  (F)", self)
        self.other_clothes_button = QPushButton("Similar, other clothes  (Shift+F)", self)
        self.other_clothes_button.setToolTip(OUTFIT_CHANGE_TIP)
        self.confirm_button.clicked.connect(lambda: self._request_mark(CONFIRMED))
        self.reject_button.clicked.connect(lambda: self._request_mark(REJECTED))
        self.clear_button.clicked.connect(lambda: self._request_mark(CLEAR))
        self.action_buttons = (self.confirm_button, self.reject_button, self.clear_button, self.similar_button,
                               self.other_clothes_button)
        self.similar_button.clicked.connect(self._find_similar)
        self.other_clothes_button.clicked.connect(self._find_similar_across_outfits)
        # F is the window's "Find similar" action (one shortcut for the grid, the pane and the menu)
        for key, slot in (("C", lambda: self._request_mark(CONFIRMED)), ("R", lambda: self._request_mark(REJECTED)),
                          ("U", lambda: self._request_mark(CLEAR))):
            shortcut = QShortcut(QKeySequence(key), self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(slot)

        header = QHBoxLayout()
        header.addWidget(self.title, 1)
        header.addWidget(self.mark_chip)
        buttons = FlowLayout(spacing=6)  # wraps in a narrow pane: every button stays on screen
        for button in self.action_buttons:
            buttons.addWidget(button)
        images = QHBoxLayout()  # the crop beside its source frame: the facts get the pane's whole width
        images.setSpacing(8)
        images.addWidget(self.crop_view, 1)
        images.addWidget(self.frame_view, 2)

        self.why_scroll = QScrollArea(self)  # a long explanation scrolls instead of pushing the facts away
        self.why_scroll.setWidget(self.why)
        self.why_scroll.setWidgetResizable(True)
        self.why_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.why_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.why_scroll.setMaximumHeight(EXPLANATION_MAX_HEIGHT)
        self.why_scroll.setVisible(False)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(6)
        layout.addLayout(header)  # the actions and the facts first: a short pane scrolls to the pictures
        layout.addLayout(buttons)
        layout.addLayout(form)
        layout.addWidget(self.why_scroll)
        layout.addLayout(images)
        layout.addWidget(self.frame_status)
        layout.addWidget(self.player)
        layout.addStretch(1)
        self.clear()

    # ---------------------------------------------------------------------------------------- setters

    def set_item(self, item, crop_path: str | Path | None = None, *, score: float | None = None,
                 mark: str | None = None) -> None:
        """Show a ``GalleryItem`` (``crop_path`` is its crop file, e.g. ``gallery.root / item.crop``); None
        clears the pane. The crop and source frame load in the background; ``loaded`` says when; the player
        opens the source around the item."""
        self._set_item(item, crop_path, score, mark, None)

    def _set_item(self, item, crop_path: str | Path | None, score: float | None, mark: str | None, gallery) -> None:
        if item is None:
            self.clear()
            return
        for name in ("id", "source", "box"):
            if not hasattr(item, name):
                raise DetailInputError(f"set_item needs a GalleryItem, got {type(item).__name__} without {name!r}")
        self._gallery = None
        self.set_explanation(None)
        self._item = item
        self._crop_path = None if crop_path is None else Path(crop_path)
        self._generation += 1
        self.title.setText(item.id)
        self.title.setToolTip(item.id)
        self._show_metadata(item, score)
        self.set_mark(mark)
        self.crop_view.set_image(None, "Loading crop…" if self._crop_path else "This item has no crop file.")
        self.frame_view.set_image(None, "Loading source frame…")
        self.frame_status.setText("")
        for button in self.action_buttons:
            button.setEnabled(True)
        self._pool.start(LoadTask(self._relay, self._generation, self._crop_path, item.source, item.frame,
                                   item.box, item.source_sha256))
        self.frame_view.setVisible(True)
        self.player.open(item, gallery)

    def set_gallery_item(self, gallery, item_id: str, *, score: float | None = None, mark: str | None = None) -> None:
        """``set_item`` for an item of a gallery (``AppState.gallery``; crop path resolved in its folder)."""
        item = gallery.item(item_id)
        self._set_item(item, None if item.crop is None else Path(gallery.root) / item.crop, score, mark, gallery)
        self._gallery = gallery

    def set_mark(self, mark: str | None) -> None:
        """Show the item's mark (CONFIRMED, REJECTED, or None/CLEAR for none); emits nothing."""
        self._mark = None if mark == CLEAR else mark
        if self._mark in MARK_COLORS:
            color = MARK_COLORS[self._mark].name()
            self.mark_chip.setText(self._mark.capitalize())
            self.mark_chip.setStyleSheet(f"QLabel {{ background: {color}; color: white; border-radius: 9px; "
                                         f"font-weight: bold; }}")
            self.mark_chip.show()
        else:
            self.mark_chip.hide()

    def set_explanation(self, explanation: dict | None, ranked_by: str | None = None) -> None:
        """Show why the item ranked where it did (``StepResult.explain``), or nothing (None); ``ranked_by``: the
        sentence naming the network behind the similarity (``app.provenance.similarity_line``). For an item of
        a gallery (``set_gallery_item``) it also says how far its ranking sources are trusted on that gallery
        (``app.state.explanation.explanation_trust``: reads the small shipped calibration once)."""
        self._explanation = explanation
        self._trust = None if explanation is None or self._gallery is None else \
            explanation_trust(explanation, self._gallery)
        self.why.setText("" if explanation is None else explanation_html(explanation, ranked_by, self._trust))
        self.why.setVisible(explanation is not None)
        self.why_scroll.setVisible(explanation is not None)

    def clear(self) -> None:
        self._gallery = None
        self.set_explanation(None)
        self._item = None
        self._crop_path = None
        self._generation += 1
        self.title.setText("No item selected")
        self.title.setToolTip("")
        for value in self.values.values():
            if isinstance(value, ElidedLabel):
                value.set_full_text("")
            value.setText("")
            value.setToolTip("")
        self.set_mark(None)
        self.crop_view.set_image(None, "Select a result to see it here.")
        self.frame_view.set_image(None, "")
        self.frame_view.setVisible(True)
        self.frame_status.setText("")
        self.player.close_clip()
        for button in self.action_buttons:
            button.setEnabled(False)

    # ---------------------------------------------------------------------------------------- queries

    def item_id(self) -> str | None:
        return None if self._item is None else self._item.id

    def explanation(self) -> dict | None:
        return self._explanation

    def trust(self) -> RankingTrust | None:
        """How far the shown explanation's sources are trusted on the item's gallery (None: not known)."""
        return self._trust

    def mark(self) -> str | None:
        return self._mark

    def metadata(self) -> dict[str, str]:
        """Field name -> the full text shown (hashes without their line break)."""
        return {name: label.full_text() if isinstance(label, ElidedLabel) else
                (label.text().replace(" ", "") if "SHA" in name and label.text() != "—" else label.text())
                for name, label in self.values.items()}

    def source_image(self) -> QImage | None:
        """The source frame as shown (box drawn), or None when it is loading or unavailable."""
        return self.frame_view.image()

    def source_status(self) -> str:
        return self.frame_status.text()

    def crop_image(self) -> QImage | None:
        return self.crop_view.image()

    def wait(self, msecs: int = 5000) -> bool:
        """Block until the background load ends (tests); its result still arrives as an event."""
        return self._pool.waitForDone(msecs)

    # ---------------------------------------------------------------------------------------- internals

    def _show_metadata(self, item, score: float | None) -> None:
        box = item.box
        shown = {
            "Score": format_score(score),
            "Camera": item.camera or "—",
            "Time": format_time(item.time),
            "Source": item.source,
            "Frame": "—" if item.frame is None else str(item.frame),
            "Box": "—" if box is None else f"x {box[0]:.0f}, y {box[1]:.0f}, {box[2]:.0f} × {box[3]:.0f} px",
            "Track": "—" if item.track is None else str(item.track),
            "Resolution": item.resolution or "—",
            "Modality": item.modality or "—",
            "Identity": item.identity or "unknown",
            "Crop SHA-256": item.crop_sha256 or "—",
            "Crop check": "checking…" if self._crop_path is not None and item.crop_sha256 else "—",
            "Source SHA-256": item.source_sha256 or "—",
        }
        for name, text in shown.items():
            label = self.values[name]
            label.setStyleSheet("")
            if isinstance(label, ElidedLabel):
                label.set_full_text(text)
            else:
                label.setText(split_hash(text) if "SHA" in name else text)
                label.setToolTip("")

    def _arrived(self, generation: int, crop: QImage | None, frame: QImage | None, crop_sha: str | None,
                 status: str) -> None:
        if generation != self._generation or self._item is None:
            return
        item = self._item
        if crop is not None:
            self.crop_view.set_image(crop)
            level = f"{item.resolution} · " if item.resolution else ""
            self.values["Resolution"].setText(f"{level}{crop.width()} × {crop.height()} px crop")
        elif self._crop_path is not None:
            self.crop_view.set_image(None, f"Crop not available:\n{self._crop_path.name}")
        if self._crop_path is not None and item.crop_sha256 is not None:
            check = self.values["Crop check"]
            if crop_sha is None:
                check.setText("✗ crop file missing or unreadable")
                color = MARK_COLORS[REJECTED]
            elif crop_sha == item.crop_sha256:
                check.setText("✓ file matches its SHA-256")
                color = MARK_COLORS[CONFIRMED]
            else:
                check.setText(f"✗ file differs (its SHA-256 is {crop_sha[:12]}…)")
                check.setToolTip(f"recorded {item.crop_sha256}\nfile     {crop_sha}")
                color = MARK_COLORS[REJECTED]
            check.setStyleSheet(f"color: {color.name()};")
        self.frame_view.set_image(frame, status)
        self.frame_status.setText(status)
        self.frame_status.setVisible(frame is not None)
        self.loaded.emit(status)

    def _request_mark(self, mark: str) -> None:
        if self._item is None:
            return
        self.set_mark(mark)
        self.marks_changed.emit([self._item.id], mark)

    def _find_similar(self) -> None:
        if self._item is not None:
            self.find_similar_requested.emit(self._item.id)

    def _find_similar_across_outfits(self) -> None:
        if self._item is not None:
            self.find_similar_across_outfits_requested.emit(self._item.id)
