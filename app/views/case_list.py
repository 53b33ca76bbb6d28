"""Case → Open: the case database's cases in a sortable table (name, created, last change, steps, status) with a
search box over names and descriptions. ``choose_case`` returns the chosen case id, or None."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QSortFilterProxyModel, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLineEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.store import CaseSummary

COLUMNS = ("Name", "Created", "Last change", "Steps recorded", "Status")
#: What the step counts count, here and in the main window's case line: every step recorded, undone ones included.
STEPS_TIP = "Steps recorded in the case, undone ones included"
ID_ROLE = Qt.ItemDataRole.UserRole + 1


def steps_recorded(count: int, steps: Sequence = ()) -> str:
    """``count`` (``CaseSummary.step_count``, as the case list shows it) as "5 steps recorded", with how many
    of ``steps`` (the case's ``StepState``s, when known) are undone: "5 steps recorded (1 undone)"."""
    undone = sum(1 for step in steps if step.undone)
    return (f"{count} step{'s' if count != 1 else ''} recorded"
            + (f" ({undone} undone)" if undone else ""))


def _when(value) -> str:
    return value.astimezone().strftime("%Y-%m-%d %H:%M")


class CaseListDialog(QDialog):
    """See the module docstring. ``current``: the open case, selected first."""

    def __init__(self, cases: Sequence[CaseSummary], current: int | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Open case")
        self.resize(640, 380)
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Search names and descriptions")
        self.search.setClearButtonEnabled(True)
        self.model = QStandardItemModel(0, len(COLUMNS), self)
        self.model.setHorizontalHeaderLabels(list(COLUMNS))
        self.model.horizontalHeaderItem(COLUMNS.index("Steps recorded")).setToolTip(STEPS_TIP)
        for case in cases:
            name = QStandardItem(case.title)
            name.setData(case.id, ID_ROLE)
            name.setData(f"{case.title}\n{case.description}", Qt.ItemDataRole.UserRole + 2)
            name.setToolTip(case.description or case.title)
            created, changed = QStandardItem(_when(case.created_at)), QStandardItem(_when(case.updated_at))
            steps = QStandardItem()
            steps.setData(case.step_count, Qt.ItemDataRole.DisplayRole)
            steps.setToolTip(STEPS_TIP)
            row = [name, created, changed, steps, QStandardItem(case.status)]
            for item in row:
                item.setEditable(False)
            self.model.appendRow(row)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setFilterKeyColumn(0)
        self.proxy.setFilterRole(Qt.ItemDataRole.UserRole + 2)
        self.table = QTableView(self)
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(2, Qt.SortOrder.DescendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.doubleClicked.connect(lambda _index: self.accept())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.open_button = buttons.button(QDialogButtonBox.StandardButton.Open)
        layout = QVBoxLayout(self)
        layout.addWidget(self.search)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.search.textChanged.connect(self._filter)
        self.table.selectionModel().selectionChanged.connect(self._refresh)
        self._select(current)
        self._refresh()

    def _filter(self, text: str) -> None:
        self.proxy.setFilterFixedString(text)
        if not self.table.selectionModel().hasSelection() and self.proxy.rowCount():
            self.table.selectRow(0)
        self._refresh()

    def _select(self, case_id: int | None) -> None:
        for row in range(self.proxy.rowCount()):
            if self.proxy.index(row, 0).data(ID_ROLE) == case_id:
                self.table.selectRow(row)
                return
        if self.proxy.rowCount():
            self.table.selectRow(0)

    def _refresh(self, *_args) -> None:
        self.open_button.setEnabled(self.chosen_id() is not None)

    def visible_names(self) -> list[str]:
        return [self.proxy.index(row, 0).data() for row in range(self.proxy.rowCount())]

    def chosen_id(self) -> int | None:
        rows = self.table.selectionModel().selectedRows(0)
        return rows[0].data(ID_ROLE) if rows else None


def choose_case(cases: Sequence[CaseSummary], current: int | None, parent: QWidget | None) -> int | None:
    dialog = CaseListDialog(cases, current, parent)
    return dialog.chosen_id() if dialog.exec() == QDialog.DialogCode.Accepted else None
