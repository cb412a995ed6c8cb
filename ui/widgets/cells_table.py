"""Read-only tables of a frame's values written out for reading: plain titles, numbers right-aligned,
long text cut with a tooltip. ``table_cells`` makes the texts (off the GUI thread when the table is
large); ``fill_cells`` / ``fill_table`` put them in a ``QTableWidget``; ``CellsTable`` shows any number
of rows through one model reset.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtWidgets import QAbstractItemView, QTableView, QTableWidget, QTableWidgetItem, QWidget

from ui.widgets.table_filling import filling

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
    table.horizontalHeader().setResizeContentsPrecision(MEASURED_ROWS)
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
