"""How the app's list-like tables look: one line per row, rows chosen whole, no row numbers."""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractItemView, QTableView

ROW_PADDING_PX = 8  # above and below a row's line of text


def one_line_rows(table: QTableView) -> None:
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setAlternatingRowColors(True)
    table.setWordWrap(False)
    table.verticalHeader().hide()
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + ROW_PADDING_PX)
    table.horizontalHeader().setHighlightSections(False)
