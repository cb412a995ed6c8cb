"""A dialog of result rows: a heading, a table of rows, and the selected row in full below it. The charts'
passages and the validity answers are both this; a subclass says how one row reads in full."""

from __future__ import annotations

import html

import pandas as pd
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QSplitter, QTextBrowser, QVBoxLayout, QWidget

from ui.widgets.frame_table import Column, FrameTable, is_missing
from ui.widgets.screen_fit import resize_to_fit


def one_line(value) -> str:
    """A cell's text on one line (a passage's line breaks and runs of spaces become single spaces)."""
    return "" if is_missing(value) else " ".join(str(value).split())


def failed_call(row: pd.Series) -> str:
    return f"<span style='color:#b00020;'>The call failed: {html.escape(str(row['error'] or ''))}</span>"


class RowsDialog(QDialog):
    #: what the lower pane says when there are no rows to show
    EMPTY = "Nothing to show."

    def __init__(self, title: str, heading: str, columns: list[Column], size: tuple[int, int], parent=None,
                 *, table_share: int = 2):
        super().__init__(parent)
        self.setWindowTitle(title)
        resize_to_fit(self, *size)
        self.heading = QLabel(heading)
        self.heading.setWordWrap(True)
        self.top = QHBoxLayout()
        self.top.addWidget(self.heading, 1)
        self.table = FrameTable(columns)
        self.table.itemSelectionChanged.connect(self._show_selected)
        self.detail = QTextBrowser()
        self.detail.setOpenLinks(False)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, table_share)
        splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(self.top)
        layout.addWidget(splitter, 1)

    def add_to_heading(self, widget: QWidget) -> None:
        self.top.addWidget(widget)

    def show_rows(self, frame: pd.DataFrame) -> None:
        self.table.show_frame(frame)
        if self.table.rowCount():
            self.table.selectRow(0)
        else:
            self.detail.setHtml(f"<i>{html.escape(self.EMPTY)}</i>")

    def row_html(self, row: pd.Series) -> str:
        """The selected row in full, as HTML."""
        raise NotImplementedError

    def _show_selected(self) -> None:
        rows = sorted({index.row() for index in self.table.selectedIndexes()})
        if rows:
            self.detail.setHtml(self.row_html(self.table.frame.iloc[rows[0]]))
