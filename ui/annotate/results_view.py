"""The Results tab: the agreement table, the disputed items, adjudication and exports."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableView,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ui.table_filling import filling
from workbench.annotation.adjudication import adjudicate, disagreements
from workbench.annotation.agreement import agreement_table
from workbench.annotation.tasks import Task
from workbench.errors import UserError
from workbench.export.registry import export_table


AGREEMENT_HEADERS = {"statistic": "Statistic", "value": "Value", "ci": "95% CI", "p_value": "p", "items": "Items",
                     "annotators": "Annotators", "note": "Note"}
DISPUTE_HEADERS = {"item_id": "Item", "spread": "How far apart", "adjudicated": "Agreed value"}


def agreement_view(frame: pd.DataFrame) -> pd.DataFrame:
    """The agreement table with its interval as one cell ('0.41 – 0.78'); the CSV export keeps both ends."""
    if frame.empty or "ci_low" not in frame:
        return frame
    view = frame.copy()
    view.insert(list(view.columns).index("ci_low"), "ci", [
        "" if pd.isna(low) or pd.isna(high) else f"{low:.3f} – {high:.3f}"
        for low, high in zip(view["ci_low"], view["ci_high"])])
    return view.drop(columns=["ci_low", "ci_high"])


#: column names that never make a good title, as a reader would say them
PLAIN_HEADERS = {"item_id": "Item", "adjudicated": "Agreed value", "spread": "Spread", "n": "N", "p_value": "p",
                 "ci_low": "95% CI from", "ci_high": "95% CI to"}
LONGEST_COLUMN_PX = 420  # wider text is cut with … (the whole text is in the cell's tooltip)


def _title(column) -> str:
    name = str(column)
    if name in PLAIN_HEADERS:
        return PLAIN_HEADERS[name]
    if "_" in name and name == name.lower():  # a machine name: item_id -> Item id
        return name.replace("_", " ").capitalize()
    return name


@dataclass(frozen=True)
class TableCells:
    """What a table shows, as text: made from a frame off the GUI thread (``table_cells``), put in by ``fill_cells``."""

    headers: list[str]
    rows: list[list[tuple[str, bool]]]  # per cell: its text and whether it is right-aligned (a number)


def table_cells(frame: pd.DataFrame, headers: dict[str, str] | None = None) -> TableCells:
    """The texts of ``fill_table``'s cells. Touches no widget, so a worker can make them for a large table."""
    columns = list(frame.columns)
    titles = [(headers or {}).get(str(c)) or _title(c) for c in columns]
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
               for c in columns]
    rows = []
    for row in frame.itertuples(index=False):
        texts = [_cell(value, column) for value, column in zip(row, columns)]
        rows.append([(text, numeric[c] or _looks_numeric(text)) for c, text in enumerate(texts)])
    return TableCells(titles, rows)


def fill_table(table: QTableWidget, frame: pd.DataFrame, headers: dict[str, str] | None = None) -> None:
    """Show ``frame`` read-only: plain titles, numbers right-aligned, no row numbers, long text cut with a tooltip."""
    fill_cells(table, table_cells(frame, headers))


def fill_cells(table: QTableWidget, cells: TableCells) -> None:
    """Put ``table_cells``' texts in: the GUI thread only makes the items (columns measured once, at the end)."""
    table.clear()
    table.setRowCount(len(cells.rows))
    table.setColumnCount(len(cells.headers))
    table.setHorizontalHeaderLabels(cells.headers)
    table.verticalHeader().hide()
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 8)
    table.setAlternatingRowColors(True)
    table.setWordWrap(False)
    right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
    with filling(table):
        for r, row in enumerate(cells.rows):
            for c, (text, numeric) in enumerate(row):
                item = QTableWidgetItem(text)
                if numeric:
                    item.setTextAlignment(right)
                if len(text) > 40:
                    item.setToolTip(text)
                table.setItem(r, c, item)
    table.resizeColumnsToContents()
    for c in range(table.columnCount()):
        if table.columnWidth(c) > LONGEST_COLUMN_PX:
            table.setColumnWidth(c, LONGEST_COLUMN_PX)
    table.horizontalHeader().setStretchLastSection(True)  # a long last column (a note) uses the free width


def _looks_numeric(text: str) -> bool:
    """'12%', '3 of 5', '< 0.001', '1,204' read as numbers (right-aligned); words do not."""
    stripped = text.replace(",", "").replace("%", "").replace("<", "").replace(" of ", "").replace(" ", "")
    stripped = stripped.replace("–", "").replace(".", "").replace("-", "")
    return bool(stripped) and stripped.isdigit()


def _cell(value, column: str) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else ""
    if isinstance(value, float):
        if column == "p_value" and value < 0.001:
            return "< 0.001"
        return f"{value:.3f}"
    return str(value)


class _Text:
    """What ``CellsTable.item`` hands back: a cell's text, read like a ``QTableWidgetItem``'s."""

    def __init__(self, text: str):
        self._text = text

    def text(self) -> str:
        return self._text


_DISPLAY, _TOOLTIP = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole
_ROLES = (_DISPLAY, _TOOLTIP, Qt.ItemDataRole.TextAlignmentRole)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
#: rows measured for a column's width (Qt's default, 1,000, asked the model 45,000 times for 3,000 disputes)
MEASURED_ROWS = 200


class _CellsModel(QAbstractTableModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.cells = TableCells([], [])

    def set_cells(self, cells: TableCells) -> None:
        self.beginResetModel()
        self.cells = cells
        self.endResetModel()

    def set_text(self, row: int, column: int, text: str) -> None:
        numeric = self.cells.rows[row][column][1]
        self.cells.rows[row][column] = (text, numeric)
        index = self.index(row, column)
        self.dataChanged.emit(index, index)

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.cells.rows)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.cells.headers)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        # called for every role of every cell drawn or measured: the roles without an answer return first
        if role not in _ROLES or not index.isValid():
            return None
        text, numeric = self.cells.rows[index.row()][index.column()]
        if role == _DISPLAY:
            return text
        if role == _TOOLTIP:
            return text if len(text) > 40 else None
        return _RIGHT if numeric else None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.cells.headers[section] if section < len(self.cells.headers) else None
        return None


class CellsTable(QTableView):
    """A read-only table of ``table_cells`` that shows any number of rows at once: putting them in is one model
    reset, not an item per cell (3,000 disputed items took 0.1-0.3 s of the GUI thread as widget items).
    Read like a ``QTableWidget`` (``rowCount``, ``item(r, c).text()``, ``currentRow``)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._model = _CellsModel(self)
        self.setModel(self._model)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 10)
        self.horizontalHeader().setResizeContentsPrecision(MEASURED_ROWS)  # a column is measured on this many rows
        self.horizontalHeader().setStretchLastSection(True)

    def show_cells(self, cells: TableCells | None) -> None:
        self._model.set_cells(cells or TableCells([], []))
        self.horizontalHeader().setStretchLastSection(False)
        self.resizeColumnsToContents()  # Qt measures the first rows only (resizeContentsPrecision)
        for c in range(self._model.columnCount()):
            if self.columnWidth(c) > LONGEST_COLUMN_PX:
                self.setColumnWidth(c, LONGEST_COLUMN_PX)
        self.horizontalHeader().setStretchLastSection(True)

    def set_text(self, row: int, column: int, text: str) -> None:
        self._model.set_text(row, column, text)

    def rowCount(self) -> int:
        return self._model.rowCount()

    def columnCount(self) -> int:
        return self._model.columnCount()

    def item(self, row: int, column: int) -> _Text | None:
        if not (0 <= row < self.rowCount() and 0 <= column < self.columnCount()):
            return None
        return _Text(self._model.cells.rows[row][column][0])

    def horizontalHeaderItem(self, column: int) -> _Text | None:
        return _Text(self._model.cells.headers[column]) if 0 <= column < self.columnCount() else None

    def currentRow(self) -> int:
        index = self.currentIndex()
        return index.row() if index.isValid() else -1


class ResultsView(QWidget):
    def __init__(self, run_in_background: Callable, show_error: Callable[[str], None], parent: QWidget | None = None):
        super().__init__(parent)
        self.run_in_background = run_in_background
        self.show_error = show_error
        self.project = None
        self.task: Task | None = None

        self.refresh_button = QPushButton("Compute agreement")
        self.refresh_button.clicked.connect(self.refresh)
        self.export_answers = QPushButton("Export answers…")
        self.export_answers.clicked.connect(lambda: self._export("annotations", "annotations"))
        self.export_agreement = QPushButton("Export agreement…")
        self.export_agreement.clicked.connect(lambda: self._export("annotation-agreement", "agreement"))
        top = QHBoxLayout()
        top.addWidget(self.refresh_button)
        top.addStretch(1)
        top.addWidget(self.export_answers)
        top.addWidget(self.export_agreement)

        self.agreement = CellsTable()
        self.agreement.setObjectName("agreement-table")
        self.disputes = CellsTable()
        self.disputes.setObjectName("disagreements")
        self.disputes.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.disputes.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.value_field = QLineEdit()
        self.value_field.setObjectName("adjudicated-value")
        self.value_field.setPlaceholderText("agreed value for the selected item, e.g. 2 hours or a label")
        self.save_button = QPushButton("Save adjudication")
        self.save_button.clicked.connect(self._adjudicate)
        adjudication = QHBoxLayout()
        adjudication.addWidget(self.value_field, 1)
        adjudication.addWidget(self.save_button)
        self.value_field.returnPressed.connect(self._adjudicate)
        self.status = QLabel()
        self.status.setObjectName("results-status")
        self._generation = 0  # which computation's answer the tables wait for
        self._operation = None

        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(QLabel("<b>Agreement</b> (each statistic with the items and annotators it used)"))
        layout.addWidget(self.agreement, 1)
        layout.addWidget(QLabel("<b>Disagreements</b> (select one, type the agreed value; the answers are kept)"))
        layout.addWidget(self.disputes, 1)
        layout.addLayout(adjudication)
        layout.addWidget(self.status)

    def set_task(self, project, task: Task | None) -> None:
        same = (project is self.project and task is not None and self.task is not None and task.id == self.task.id)
        self.project, self.task = project, task
        if same:  # the page was reloaded: the tables stay until Compute agreement (or the tab) asks again
            return
        self._generation += 1  # a computation still running for the task before is not shown
        for table in (self.agreement, self.disputes):
            table.show_cells(None)
        self.status.clear()
        self.refresh_button.setEnabled(task is not None)
        if task is not None and self.isVisible():  # another task chosen while these tables are on screen
            self.refresh()

    def refresh(self) -> None:
        if self.project is None or self.task is None:
            return
        project, task = self.project, self.task
        self._generation += 1
        generation = self._generation
        if self._operation is not None and self._operation.running:
            self._operation.cancel()  # its answer would be dropped anyway
        self.refresh_button.setEnabled(False)
        self.status.setText(f"Computing agreement for '{task.name}'…")

        def work(state):
            # Everything but making the widgets' items happens here: the bootstrap, the disputed items, and
            # the texts of thousands of cells (which took half a second of the GUI thread on a large task).
            agreement = agreement_table(project, task.id)
            state.check()
            disputes = disagreements(project, task.id)
            state.check()
            return (agreement.empty, len(disputes), table_cells(agreement_view(agreement), AGREEMENT_HEADERS),
                    table_cells(disputes, DISPUTE_HEADERS))

        def ended():
            if generation == self._generation:
                self.refresh_button.setEnabled(self.task is not None)

        self._operation = self.run_in_background(
            work, label="Computing agreement", background_read=True,
            on_done=lambda result: self._show(result) if generation == self._generation else None,
            on_cancelled=lambda _message: None, on_end=ended)

    def _show(self, result) -> None:
        agreement_empty, disputed, agreement, disputes = result
        self.agreement.show_cells(agreement)
        self.disputes.show_cells(disputes)
        if agreement_empty:
            self.status.setText("Nothing to compare yet: agreement needs at least two annotators who answered the "
                                "same items (each task shares some items between all its annotators).")
        else:
            self.status.setText(f"{disputed} disputed item(s)." if disputed else "No disagreements.")

    def _adjudicate(self) -> None:
        row = self.disputes.currentRow()
        if row < 0 or self.task is None:
            self.show_error("Select a disputed item first.")
            return
        item_key = self.disputes.item(row, 0).text()
        try:
            saved = adjudicate(self.project, self.task.id, item_key, self.value_field.text())
        except UserError as exc:
            self.show_error(str(exc))
            return
        self.value_field.clear()
        # The answers and the agreement do not change: only this row's agreed value does. Show it in place
        # and move to the next disputed item, rather than computing everything again (seconds on a large
        # task) and losing the place in the list.
        agreed = self._agreed_column()
        if agreed is not None:
            self.disputes.set_text(row, agreed, str(saved["value"]))
        if row + 1 < self.disputes.rowCount():
            self.disputes.selectRow(row + 1)
            self.disputes.scrollTo(self.disputes.model().index(row + 1, 0))
        self.status.setText(f"Saved the agreed value of item {saved['item_id']}: {saved['value']}.")

    def _agreed_column(self) -> int | None:
        title = DISPUTE_HEADERS["adjudicated"]
        return next((c for c in range(self.disputes.columnCount())
                     if self.disputes.horizontalHeaderItem(c).text() == title), None)

    def _export(self, table: str, stem: str) -> None:
        if self.task is None:
            return
        folder = Path(self.project.path).parent
        path, _ = QFileDialog.getSaveFileName(self, "Export", str(folder / f"{stem}.csv"), "CSV files (*.csv)")
        if not path:
            return
        self.export_to(table, path)

    def export_to(self, table: str, path: str | Path):
        """Write one of the task's tables (agreement takes a moment: its intervals are bootstrapped)."""
        project, task_id = self.project, self.task.id
        return self.run_in_background(lambda state: export_table(project, table, path, task=task_id),
                                      label="Exporting", on_done=lambda written: self.status.setText(f"Wrote {written}."))
