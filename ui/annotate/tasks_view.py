"""The Tasks tab of the Annotate page: every task with its items and each annotator's progress, and the
buttons that create a task, add items to the chosen one, or delete it.

Shows ``workbench.annotation.views.tasks_table``; no book, author or model appears here (the tab
stays reachable during a session, and its buttons are off then).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
from workbench.annotation.views import KIND_NAMES, TASK_COLUMNS, plural  # noqa: F401 (plural: the page's)

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = TASK_COLUMNS
TASK, KIND, BLINDED, ITEMS, PER_ANNOTATOR, SHARED, SEED, PROGRESS = range(len(COLUMNS))
NUMERIC = {ITEMS, PER_ANNOTATOR, SHARED, SEED}
TASK_ID_ROLE = Qt.ItemDataRole.UserRole
NO_TASKS = "No tasks yet. Press New task… to create one; then add items to it."


def _cell(text: str, numeric: bool = False) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
    if numeric:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


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

    def load(self, tasks: pd.DataFrame, chosen: int | None) -> None:
        """``tasks``: ``workbench.annotation.views.tasks_table`` (texts, with each task's ``task_id``)."""
        self._loading = True
        self.frame = tasks
        with filling(self.table):
            self.table.setRowCount(len(tasks))
            for r, (task_id, *texts) in enumerate(tasks[["task_id", *COLUMNS]].itertuples(index=False)):
                for column, text in enumerate(texts):
                    item = _cell(str(text), numeric=column in NUMERIC)
                    if column == TASK:
                        item.setData(TASK_ID_ROLE, int(task_id))
                    self.table.setItem(r, column, item)
        self.select(chosen)
        self._loading = False
        if tasks.empty:
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
