"""The results toolbar's camera filter: a button whose menu lists the cameras to tick; "All cameras" unticks
every one, and none or all ticked is no filter (``app.views.results`` places it)."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QToolButton, QWidget


class CameraFilterButton(QToolButton):
    """``choice()`` the cameras ticked (None: no filter); ``edited`` when the analyst changes them, never while
    ``rebuild`` or ``set_checked`` do."""

    edited = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.camera_menu = QMenu(self)
        self.setMenu(self.camera_menu)
        self.actions_by_name: dict[str, QAction] = {}
        self._quiet = False

    def checked(self) -> list[str]:
        """The cameras ticked, in the menu's order."""
        return [name for name, action in self.actions_by_name.items() if action.isChecked()]

    def choice(self) -> frozenset[str] | None:
        """The cameras ticked as a filter: None when none or every one is ticked."""
        checked = frozenset(self.checked())
        return checked if checked and len(checked) < len(self.actions_by_name) else None

    def rebuild(self, names: Iterable[str]) -> None:
        """List ``names`` (and every camera ticked now: ticks are kept by name)."""
        checked = set(self.checked())
        all_checked = not checked or len(checked) == len(self.actions_by_name)
        self.camera_menu.clear()
        self.actions_by_name = {}
        everyone = self.camera_menu.addAction("All cameras")
        everyone.triggered.connect(self._all_cameras)
        self.camera_menu.addSeparator()
        for name in sorted(set(names) | checked):
            action = self.camera_menu.addAction(name)
            action.setCheckable(True)
            action.setChecked(not all_checked and name in checked)
            action.toggled.connect(self._toggled)
            self.actions_by_name[name] = action
        self.setEnabled(bool(self.actions_by_name))
        self.refresh_label()

    def set_checked(self, wanted: frozenset[str] | None) -> None:
        """Tick exactly ``wanted`` (None: none) among the cameras listed."""
        self._quiet = True
        try:
            for name, action in self.actions_by_name.items():
                action.setChecked(wanted is not None and name in wanted)
        finally:
            self._quiet = False

    def refresh_label(self) -> None:
        checked = self.checked()
        if not checked or len(checked) == len(self.actions_by_name):
            text = "All cameras"
        else:
            names = ", ".join(checked[:2]) + (", …" if len(checked) > 2 else "")
            text = f"{len(checked)} of {len(self.actions_by_name)} cameras: {names}"
        self.setText(text)
        self.setMinimumWidth(self.fontMetrics().horizontalAdvance(text) + 34)

    def _all_cameras(self) -> None:
        self.set_checked(None)
        self.edited.emit()

    def _toggled(self, _checked: bool) -> None:
        if not self._quiet:
            self.edited.emit()
