"""A read-only table widget that shows a pandas frame through a list of plain column specs.

A ``Column`` names the frame column, the header, how a value is written, and where it aligns. The
table keeps each row's identity (``key`` column) under ``Qt.UserRole`` so selections survive reloads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import pandas as pd
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from ui.widgets.cells_table import MEASURED_ROWS
from ui.widgets.table_filling import filling

KEY_ROLE = Qt.ItemDataRole.UserRole


def is_missing(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)


def plain(value: Any) -> str:
    return "" if is_missing(value) else str(value)


def share(value: Any) -> str:
    return "" if is_missing(value) else f"{float(value):.0%}"


def count(value: Any) -> str:
    return "" if is_missing(value) else f"{int(value):,}"


def decimal(value: Any) -> str:
    return "" if is_missing(value) else f"{float(value):.2f}"


def yes_no(value: Any) -> str:
    return "" if is_missing(value) else ("yes" if bool(value) else "no")


def yes_only(value: Any) -> str:
    """'yes' where true, blank otherwise: the exceptions stand out in a long column."""
    return "yes" if not is_missing(value) and bool(value) else ""


@dataclass(frozen=True)
class Column:
    field: str
    title: str
    write: Callable[[Any], str] = plain
    numeric: bool = False
    tooltip: str = ""
    stretch: bool = False
    #: a function of the whole row, used instead of ``field`` (e.g. a CI written as one cell)
    compose: Callable[[pd.Series], str] | None = None
    #: hidden while every cell of the column is empty (e.g. log-probabilities before any such run)
    optional: bool = False


class FrameTable(QTableWidget):
    def __init__(self, columns: list[Column], key: str | None = None, parent=None):
        super().__init__(0, len(columns), parent)
        self.columns = columns
        self.key = key
        self.frame = pd.DataFrame()
        self.setHorizontalHeaderLabels([c.title for c in columns])
        for index, column in enumerate(columns):
            if column.tooltip:
                self.horizontalHeaderItem(index).setToolTip(column.tooltip)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        header = self.horizontalHeader()
        header.setHighlightSections(False)
        header.setResizeContentsPrecision(MEASURED_ROWS)  # a column's width is measured on its first rows
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        for index, column in enumerate(columns):
            if column.stretch:
                header.setSectionResizeMode(index, QHeaderView.ResizeMode.Stretch)

    def show_frame(self, frame: pd.DataFrame) -> None:
        """Replace the rows with ``frame``'s, keeping the selected keys selected."""
        selected = self.selected_keys()
        self.frame = frame.reset_index(drop=True)
        with filling(self):
            self._fill()
        for index, column in enumerate(self.columns):
            if column.optional:
                empty = all(not self.item(row, index).text() for row in range(self.rowCount()))
                self.setColumnHidden(index, empty)
        if selected:
            self.select_keys(selected)

    def _fill(self) -> None:
        self.setRowCount(len(self.frame))
        for row, record in self.frame.iterrows():
            key = record[self.key] if self.key else row
            for index, column in enumerate(self.columns):
                text = column.compose(record) if column.compose else column.write(record.get(column.field))
                item = QTableWidgetItem(text)
                item.setData(KEY_ROLE, key)
                if column.numeric:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if len(text) > 40:
                    item.setToolTip(text)
                self.setItem(row, index, item)

    def selected_keys(self) -> list[Any]:
        rows = sorted({index.row() for index in self.selectedIndexes()})
        return [self.item(row, 0).data(KEY_ROLE) for row in rows if self.item(row, 0) is not None]

    def select_keys(self, keys: list[Any]) -> None:
        wanted = set(keys)
        self.clearSelection()
        mode = self.selectionMode()
        self.setSelectionMode(QAbstractItemView.SelectionMode.MultiSelection)
        for row in range(self.rowCount()):
            if self.item(row, 0).data(KEY_ROLE) in wanted:
                self.selectRow(row)
        self.setSelectionMode(mode)

    def column_texts(self, title: str) -> list[str]:
        """What the column headed ``title`` shows, top to bottom (for tests and copy)."""
        index = [c.title for c in self.columns].index(title)
        return [self.item(row, index).text() for row in range(self.rowCount())]
