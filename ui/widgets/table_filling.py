"""Filling a QTableWidget with many rows at once without the window freezing.

A column sized to its contents is measured again after every cell put in, and every re-measure can
lay the whole page out again: filling a few hundred rows then took seconds on the GUI thread. While the
rows go in, columns keep their width and the table does not repaint; both are restored afterwards, which
measures each column once.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

from PySide6.QtWidgets import QHeaderView, QTableWidget


@contextlib.contextmanager
def filling(table: QTableWidget) -> Iterator[None]:
    header = table.horizontalHeader()
    modes = [header.sectionResizeMode(column) for column in range(table.columnCount())]
    sorting = table.isSortingEnabled()
    table.setSortingEnabled(False)  # otherwise rows move while they are being filled
    table.setUpdatesEnabled(False)
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    try:
        yield
    finally:
        for column, mode in enumerate(modes):
            header.setSectionResizeMode(column, mode)
        table.setSortingEnabled(sorting)
        table.setUpdatesEnabled(True)
