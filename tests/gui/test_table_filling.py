"""Filling a table with its columns frozen: afterwards each column is sized as it was asked to be, sorting
is as it was, and the table repaints again."""

from PySide6.QtWidgets import QHeaderView, QTableWidget, QTableWidgetItem

from ui.widgets.table_filling import filling

CONTENTS, STRETCH = QHeaderView.ResizeMode.ResizeToContents, QHeaderView.ResizeMode.Stretch


def test_columns_are_sized_to_the_filled_contents_and_settings_come_back(qtbot):
    table = QTableWidget(0, 3)
    qtbot.addWidget(table)
    header = table.horizontalHeader()
    header.setSectionResizeMode(CONTENTS)
    header.setSectionResizeMode(2, STRETCH)
    table.setSortingEnabled(True)
    table.resize(900, 400)
    table.show()
    long_text = "a rather long title that needs room " * 2
    with filling(table):
        assert not table.isSortingEnabled() and not table.updatesEnabled()
        table.setRowCount(50)
        for row in range(50):
            for column in range(3):
                table.setItem(row, column, QTableWidgetItem(long_text if (row, column) == (49, 0) else str(row)))
    assert [header.sectionResizeMode(c) for c in range(3)] == [CONTENTS, CONTENTS, STRETCH]
    assert table.isSortingEnabled() and table.updatesEnabled()
    assert header.sectionSize(0) >= table.fontMetrics().horizontalAdvance(long_text)
    assert header.sectionSize(1) < header.sectionSize(0)


def test_settings_come_back_when_filling_fails(qtbot):
    table = QTableWidget(0, 2)
    qtbot.addWidget(table)
    table.horizontalHeader().setSectionResizeMode(CONTENTS)
    try:
        with filling(table):
            raise ValueError("a bad row")
    except ValueError:
        pass
    assert table.horizontalHeader().sectionResizeMode(1) == CONTENTS and table.updatesEnabled()
