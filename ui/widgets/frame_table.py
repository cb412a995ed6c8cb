"""A read-only table that shows a pandas frame through a list of plain column specs.

A ``Column`` names the frame column, the header, how a value is written, and where it aligns. The
table keeps each row's identity (``key`` column) under ``Qt.UserRole`` so selections survive reloads.

Showing a frame is one model reset: a cell's text is written when Qt first asks for it (the rows on
screen, and the first ``MEASURED_ROWS`` when a column is sized), never a widget item per cell. Refilling
1,142 rows of per-book accuracy as items took 0.3-0.4 s of the GUI thread after every batch of a run.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd
from PySide6.QtCore import QAbstractTableModel, QItemSelection, QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from ui.widgets.cells_table import MEASURED_ROWS

KEY_ROLE = Qt.ItemDataRole.UserRole
CELL_PADDING_PX = 14  # room around a cell's text (Qt's style margins), as its own sizing leaves
TITLE_PADDING_PX = 24
MEASURED_LONGEST = 8  # texts of a column measured with the font: its longest by characters  # room around a column title (and for a sort arrow)


def is_missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
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


def longest_texts(texts: set[str], keep: int = MEASURED_LONGEST) -> list[str]:
    """The ``keep`` texts with the most characters: the widest is nearly always among them, a
    few pixels aside (measuring each of 200 rows'
    texts with the font took 33 ms of the window's time per 5,700-row table, more while a worker ran)."""
    return heapq.nlargest(keep, texts, key=len)


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


def column_values(series: pd.Series) -> Any:
    """A column's values as the model reads them, one cell at a time: the frame's own array, not a list (turning
    57,000 rows of text into lists took 22 ms of the window's thread at each showing)."""
    plain_numbers = isinstance(series.dtype, np.dtype) and series.dtype.kind not in "mM"  # not dates: Timestamps
    return series.to_numpy() if plain_numbers else series.array


def cell(values: Any, row: int) -> Any:
    """One value of a column, as ``tolist`` would give it: numpy's scalars as Python's."""
    value = values[row]
    return value.item() if isinstance(value, np.generic) else value


class _Row:
    """One row of the shown frame, read like the pandas row a ``compose`` function expects."""

    __slots__ = ("_values", "_index")

    def __init__(self, values: dict[str, Any], index: int):
        self._values, self._index = values, index

    def __getitem__(self, field: str) -> Any:
        return cell(self._values[field], self._index)

    def get(self, field: str, default: Any = None) -> Any:
        column = self._values.get(field)
        return default if column is None else cell(column, self._index)


class _Text:
    """What ``FrameTable.item`` hands back: a cell's text and key, read like a ``QTableWidgetItem``'s."""

    def __init__(self, text: str, key: Any = None):
        self._text, self._key = text, key

    def text(self) -> str:
        return self._text

    def data(self, role: int) -> Any:
        return self._key if role == KEY_ROLE else None


_DISPLAY, _TOOLTIP, _ALIGN = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.TextAlignmentRole
_DISPLAY_INT, _ALIGN_INT = int(_DISPLAY.value), int(_ALIGN.value)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


class _FrameModel(QAbstractTableModel):
    def __init__(self, columns: list[Column], parent=None):
        super().__init__(parent)
        self.columns = columns
        self.values: dict[str, Any] = {}  # the frame's columns (``column_values``)
        self.frame = pd.DataFrame()
        self.keys: list[Any] = []
        self.rows = 0
        self._texts: dict[tuple[int, int], str] = {}

    def set_frame(self, frame: pd.DataFrame, key: str | None) -> None:
        self.beginResetModel()
        self.frame = frame
        self.values = {str(name): column_values(frame[name]) for name in frame.columns}
        self.rows = len(frame)
        if key:
            self.keys = frame[key].tolist() if key in frame.columns else [None] * self.rows
        else:
            self.keys = list(range(self.rows))
        self._texts = {}
        self.endResetModel()

    def text(self, row: int, column: int) -> str:
        cached = self._texts.get((row, column))
        if cached is None:
            spec = self.columns[column]
            if spec.compose is not None:
                cached = spec.compose(_Row(self.values, row))
            else:
                values = self.values.get(spec.field)
                cached = spec.write(None if values is None else cell(values, row))
            self._texts[(row, column)] = cached
        return cached

    def column_empty(self, column: int) -> bool:
        """Whether every cell of ``column`` writes as nothing (only rows with a value are written out)."""
        spec = self.columns[column]
        if spec.compose is not None or spec.field not in self.values:
            rows: Any = range(self.rows)
        else:
            rows = np.flatnonzero(self.frame[spec.field].notna().to_numpy()).tolist()
        return all(not self.text(row, column) for row in rows)

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802 (Qt's name)
        return 0 if parent.isValid() else self.rows

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: N802 (Qt's name)
        return 0 if parent.isValid() else len(self.columns)

    def multiData(self, index, roles) -> None:  # noqa: N802 (Qt's name)
        """Every role a painted cell asks for, in one call: Qt's delegate asks for seven, and each call into
        Python waits for the interpreter's lock, taken by a worker between two calls (a 57,000-row table painted
        in 100-500 ms beside a worker reading, one call per role; one per cell now)."""
        row, column = index.row(), index.column()
        for asked in roles:  # Qt hands the same roles' values from cell to cell: each one is set or cleared
            role = asked.role()
            if role == _DISPLAY_INT:
                asked.setData(self.text(row, column))
            elif role == _ALIGN_INT and self.columns[column].numeric:
                asked.setData(_RIGHT)
            else:
                asked.clearData()

    def data(self, index, role=_DISPLAY):
        # called for every role of every cell drawn or measured: the roles without an answer return first
        if role == _DISPLAY:
            return self.text(index.row(), index.column())
        if role == KEY_ROLE:
            return self.keys[index.row()]
        if role == _ALIGN:
            return _RIGHT if self.columns[index.column()].numeric else None
        if role == _TOOLTIP:
            text = self.text(index.row(), index.column())
            return text if len(text) > 40 else None
        return None

    def headerData(self, section, orientation, role=_DISPLAY):  # noqa: N802 (Qt's name)
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self.columns):
            return None
        if role == _DISPLAY:
            return self.columns[section].title
        if role == _TOOLTIP:
            return self.columns[section].tooltip or None
        return None


class FrameTable(QTableView):
    """Read like a ``QTableWidget`` (``rowCount``, ``item(r, c).text()``, ``itemSelectionChanged``)."""

    itemSelectionChanged = Signal()  # noqa: N815 (the QTableWidget signals it stands in for)
    cellDoubleClicked = Signal(int, int)  # noqa: N815 (row, column)

    def __init__(self, columns: list[Column], key: str | None = None, parent=None):
        super().__init__(parent)
        self.columns = columns
        self.key = key
        self.frame = pd.DataFrame()
        self._model = _FrameModel(columns, self)
        self.setModel(self._model)
        self.selectionModel().selectionChanged.connect(self.itemSelectionChanged)
        self.doubleClicked.connect(self._double_clicked)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        header = self.horizontalHeader()
        header.setHighlightSections(False)
        # widths are set from the texts when a frame is shown (``_fit_columns``): Qt's own sizing to contents
        # asks the model for every role of 200 rows of every column again at each reload (50 ms for the runs)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self._stretch_columns()

    def _stretch_columns(self) -> None:
        header = self.horizontalHeader()
        for index, column in enumerate(self.columns):
            mode = QHeaderView.ResizeMode.Stretch if column.stretch else QHeaderView.ResizeMode.Interactive
            header.setSectionResizeMode(index, mode)

    def set_columns(self, columns: list[Column]) -> None:
        """Show other columns (emptied: ``show_frame`` fills them), in the same table widget."""
        self.columns = self._model.columns = columns
        self._model.set_frame(pd.DataFrame(), self.key)  # a model reset: the view asks for the new columns
        self.frame = pd.DataFrame()
        for index in range(len(columns)):
            self.setColumnHidden(index, False)
        self._stretch_columns()

    def show_frame(self, frame: pd.DataFrame) -> None:
        """Replace the rows with ``frame``'s, keeping the selected keys selected."""
        selected = self.selected_keys()
        self.frame = frame.reset_index(drop=True)
        self._model.set_frame(self.frame, self.key)
        for index, column in enumerate(self.columns):
            if column.optional:
                self.setColumnHidden(index, self._model.column_empty(index))
        self._fit_columns()
        if selected:
            self.select_keys(selected)

    def show_nothing(self) -> None:
        """No rows (the columns stay): for pages that import no pandas."""
        self.show_frame(pd.DataFrame(columns=[c.field for c in self.columns]))

    def _fit_columns(self) -> None:
        """Each column (but a stretching one) as wide as its title and the texts of its first ``MEASURED_ROWS``
        rows, as sizing to contents would make it."""
        metrics, header = self.fontMetrics(), self.horizontalHeader()
        title_metrics = header.fontMetrics()
        rows = range(min(self._model.rows, MEASURED_ROWS))
        for index, column in enumerate(self.columns):
            if column.stretch or self.isColumnHidden(index):
                continue
            texts = {self._model.text(row, index) for row in rows}
            widest = max(map(metrics.horizontalAdvance, longest_texts(texts)), default=0)
            self.setColumnWidth(index, max(widest + CELL_PADDING_PX, title_metrics.horizontalAdvance(column.title)
                                           + TITLE_PADDING_PX))

    def _double_clicked(self, index) -> None:
        self.cellDoubleClicked.emit(index.row(), index.column())

    def rowCount(self) -> int:  # noqa: N802 (QTableWidget's name)
        return self._model.rows

    def columnCount(self) -> int:  # noqa: N802 (QTableWidget's name)
        return len(self.columns)

    def item(self, row: int, column: int) -> _Text | None:
        if not (0 <= row < self._model.rows and 0 <= column < len(self.columns)):
            return None
        return _Text(self._model.text(row, column), self._model.keys[row])

    def horizontalHeaderItem(self, column: int) -> _Text | None:  # noqa: N802 (QTableWidget's name)
        return _Text(self.columns[column].title) if 0 <= column < len(self.columns) else None

    def selected_keys(self) -> list[Any]:
        rows = sorted({index.row() for index in self.selectionModel().selectedRows()})
        return [self._model.keys[row] for row in rows if row < self._model.rows]

    def select_keys(self, keys: list[Any]) -> None:
        """Select the rows of ``keys`` in one selection change."""
        wanted = set(keys)
        selection = QItemSelection()
        last = self._model.columnCount() - 1
        for row, key in enumerate(self._model.keys):
            if key in wanted:
                selection.select(self._model.index(row, 0), self._model.index(row, last))
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        self.selectionModel().select(selection, flags)

    def column_texts(self, title: str) -> list[str]:
        """What the column headed ``title`` shows, top to bottom (for tests and copy)."""
        index = [c.title for c in self.columns].index(title)
        return [self._model.text(row, index) for row in range(self._model.rows)]
