"""The Tasks tab of the Annotate page: every task with its items and each annotator's progress, and the
buttons that create a task, add items to the chosen one, or delete it.

Shows ``workbench.annotation.overview.tasks_overview``; no book, author or model appears here (the tab
stays reachable during a session, and its buttons are off then).
"""

from __future__ import annotations

import pandas as pd
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ui.widgets.table_filling import filling
from ui.widgets.table_style import one_line_rows
from workbench.annotation.tasks import LABEL, SUMMARY_VALIDITY

COLUMNS = ["Task", "Annotators judge", "Blinded", "Items", "Per annotator", "Shared", "Seed",
           "Progress (answered of assigned)"]
TASK, KIND, BLINDED, ITEMS, PER_ANNOTATOR, SHARED, SEED, PROGRESS = range(len(COLUMNS))
KIND_NAMES = {"narrative-time": "narrative time", "summary-validity": "summary validity", "label": "labels",
              "name-cloze": "name cloze"}
TASK_ID_ROLE = Qt.ItemDataRole.UserRole
NO_TASKS = "No tasks yet. Press New task… to create one; then add items to it."


def plural(count, word: str) -> str:
    """'1 item', '3 items' (also for numpy numbers)."""
    count = int(count)
    return f"{count} {word}{'' if count == 1 else 's'}"


def _cell(text: str, numeric: bool = False) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
    if numeric:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


def items_text(row) -> str:
    if row.kind == SUMMARY_VALIDITY and row.ready != row.items:
        return f"{row.items} ({row.ready} ready)"
    return str(row.items)


class TasksView(QWidget):
    task_chosen = Signal(int)  # a task id
    new_requested = Signal()
    add_items_requested = Signal()
    delete_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.new_button = QPushButton("New task…")
        self.new_button.setObjectName("new-task")
        self.new_button.clicked.connect(self.new_requested.emit)
        self.add_button = QPushButton("Add items…")
        self.add_button.setObjectName("add-items")
        self.add_button.setToolTip("Add items to the chosen task: passages or scenes from books, or a file")
        self.add_button.clicked.connect(self.add_items_requested.emit)
        self.delete_button = QPushButton("Delete task…")
        self.delete_button.setObjectName("delete-task")
        self.delete_button.clicked.connect(self.delete_requested.emit)
        buttons = QHBoxLayout()
        buttons.addWidget(self.new_button)
        buttons.addWidget(self.add_button)
        buttons.addStretch(1)
        buttons.addWidget(self.delete_button)

        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("tasks")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        one_line_rows(self.table)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(PROGRESS, QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeaderItem(SHARED).setToolTip(
            "The share of each annotator's items that every annotator gets (agreement is measured on them)")
        self.table.itemSelectionChanged.connect(self._on_selection)
        self.status = QLabel()
        self.status.setObjectName("tasks-status")
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.PlainText)

        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.status)
        self._loading = False

    def load(self, overview: pd.DataFrame, chosen: int | None) -> None:
        self._loading = True
        with filling(self.table):
            self.table.setRowCount(len(overview))
            for r, row in enumerate(overview.itertuples()):
                name = _cell(row.name)
                name.setData(TASK_ID_ROLE, int(row.task_id))
                self.table.setItem(r, TASK, name)
                kind = KIND_NAMES.get(row.kind, row.kind) + (f" ({row.labels})" if row.kind == LABEL and row.labels else "")
                self.table.setItem(r, KIND, _cell(kind))
                self.table.setItem(r, BLINDED, _cell("yes" if row.blinded else "no"))
                self.table.setItem(r, ITEMS, _cell(items_text(row), numeric=True))
                limited = not pd.isna(row.per_annotator)
                self.table.setItem(r, PER_ANNOTATOR, _cell(str(int(row.per_annotator)) if limited else "all", numeric=True))
                self.table.setItem(r, SHARED, _cell(f"{row.overlap:.0%}" if limited else "", numeric=True))
                self.table.setItem(r, SEED, _cell(str(row.seed), numeric=True))
                self.table.setItem(r, PROGRESS, _cell(row.progress or "nobody has started"))
        self.select(chosen)
        self._loading = False
        if overview.empty:
            self.status.setText(NO_TASKS)
        elif self.status.text() == NO_TASKS:
            self.status.clear()

    def select(self, task_id: int | None) -> None:
        self._loading, was = True, self._loading
        self.table.clearSelection()
        for r in range(self.table.rowCount()):
            if self.table.item(r, TASK).data(TASK_ID_ROLE) == task_id:
                self.table.selectRow(r)
                break
        self._loading = was

    def set_enabled(self, project_open: bool, task_chosen: bool) -> None:
        self.new_button.setEnabled(project_open)
        self.add_button.setEnabled(project_open and task_chosen)
        self.delete_button.setEnabled(project_open and task_chosen)
        self.table.setEnabled(project_open)

    def _on_selection(self) -> None:
        if self._loading:
            return
        rows = self.table.selectionModel().selectedRows()
        if rows:
            self.task_chosen.emit(int(self.table.item(rows[0].row(), TASK).data(TASK_ID_ROLE)))
