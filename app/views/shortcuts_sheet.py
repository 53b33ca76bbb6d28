"""Help → Keyboard shortcuts: every key the window answers to, read from the menus' own actions (so the sheet,
the menus and the tooltips cannot disagree) plus the keys of the results grid and the detail pane."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QHeaderView, QTableWidget, QTableWidgetItem, QVBoxLayout

#: Keys answered by a focused widget rather than a menu action.
WIDGET_KEYS: tuple[tuple[str, str], ...] = (
    ("Enter", "Run the step (in the description); open the item in the detail pane (in the results)"),
    ("Shift+Enter", "New line in the description"),
    ("C / R / U", "Confirm / reject / clear the mark of the selected items (results or detail pane)"),
    (", / . / Space", "Previous / next frame, play / pause the item's source (detail pane)"),
    ("Ctrl+C", "Copy the selected item ids (results)"),
    ("Ctrl+Z", "In the sketch canvas: undo the last stroke (elsewhere: undo the last step)"),
)


def action_rows(actions: Iterable[QAction]) -> list[tuple[str, str]]:
    """(keys, what) of every action with a shortcut, in menu order."""
    rows = []
    for action in actions:
        keys = [key.toString(QKeySequence.SequenceFormat.NativeText) for key in action.shortcuts()]
        if keys:
            rows.append((" or ".join(keys), action.text().replace("&", "").rstrip("…")))
    return rows


class ShortcutsSheet(QDialog):
    def __init__(self, rows: list[tuple[str, str]], parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.table = QTableWidget(len(rows), 2, self)
        self.table.setHorizontalHeaderLabels(["Keys", "Does"])
        for index, (keys, what) in enumerate(rows):
            self.table.setItem(index, 0, QTableWidgetItem(keys))
            self.table.setItem(index, 1, QTableWidgetItem(what))
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(620, 460)

    def rows(self) -> list[tuple[str, str]]:
        return [(self.table.item(r, 0).text(), self.table.item(r, 1).text()) for r in range(self.table.rowCount())]
