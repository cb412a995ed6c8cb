"""The results table (``ui.widgets.frame_table.FrameTable``): each cell writes its value as its column says, read
from the frame's own arrays (no list made of each column), and a painted cell is asked for all its roles in one
call (``multiData``), not once per role."""

from __future__ import annotations

import pandas as pd
from PySide6.QtCore import QModelRoleData, QModelRoleDataSpan, Qt

from ui.widgets.frame_table import Column, FrameTable, _FrameModel, count, decimal, plain, share, yes_only

COLUMNS = [Column("book", "Book"), Column("tokens", "Tokens", count, numeric=True),
           Column("share", "Share", share, numeric=True), Column("score", "Score", decimal, numeric=True),
           Column("flag", "Flag", yes_only), Column("when", "When"), Column("book_id", "Id", numeric=True),
           Column("note", "Note", optional=True),
           Column("both", "Both", compose=lambda row: f"{row['book']} ({row.get('book_id')})")]


def frame() -> pd.DataFrame:
    return pd.DataFrame({
        "book": ["Emma", None, "Dracula"],
        "tokens": [1200, 35, 7],
        "share": [0.5, float("nan"), 1.0],
        "score": [0.123, 2.0, float("nan")],
        "flag": [True, False, True],
        "when": pd.to_datetime(["2024-01-02", "2025-03-04", None]),
        "book_id": pd.array([3, None, 11], dtype="Int64"),
        "note": [None, None, None],
    }, index=[7, 3, 5])  # not 0..n: shown in its order all the same


def written(data: pd.DataFrame, column: Column, row: int) -> str:
    """What the column writes for the row, from the frame turned into lists (the model's former reading)."""
    return column.write(data[column.field].tolist()[row])


def test_each_cell_writes_its_value_as_a_list_of_the_column_would(qtbot):
    table = FrameTable(COLUMNS, key="book_id")
    qtbot.addWidget(table)
    data = frame()
    table.show_frame(data)
    texts = [[table.item(row, column).text() for column in range(len(COLUMNS))] for row in range(3)]
    assert texts == [[written(data, c, row) for c in COLUMNS[:-1]]
                     + [f"{data['book'].tolist()[row]} ({data['book_id'].tolist()[row]})"] for row in range(3)]
    assert texts[0][:7] == ["Emma", "1,200", "50%", "0.12", "yes", "2024-01-02 00:00:00", "3"]
    assert texts[1][:7] == ["", "35", "", "2.00", "", "2025-03-04 00:00:00", ""]
    assert texts[2][5] == "" and texts[2][8] == "Dracula (11)"  # no date: blank, not "NaT"
    assert table.selected_keys() == [] and table._model.keys == [3, pd.NA, 11]
    assert table.isColumnHidden(7) and not table.isColumnHidden(4)  # the optional column with no value


def test_a_painted_cell_is_asked_once_for_all_its_roles(qtbot):
    calls = {"data": 0, "multiData": 0}

    class Counting(_FrameModel):
        def data(self, index, role=Qt.ItemDataRole.DisplayRole):
            calls["data"] += 1
            return super().data(index, role)

        def multiData(self, index, roles) -> None:  # noqa: N802
            calls["multiData"] += 1
            super().multiData(index, roles)

    table = FrameTable(COLUMNS, key="book_id")
    table._model = Counting(COLUMNS, table)
    table.setModel(table._model)
    qtbot.addWidget(table)
    table.resize(900, 300)
    table.show()
    qtbot.waitExposed(table)
    table.show_frame(frame())
    qtbot.wait(50)  # the view lays the new rows out in the event loop
    calls.update(data=0, multiData=0)
    table.viewport().repaint()
    assert calls["multiData"] >= 3 * 8  # every cell on screen (the hidden column's aside)
    assert calls["data"] == 0
    # what one call answers is what the roles one by one answer, with the roles' values handed on from cell to
    # cell as Qt's painting does (a right alignment of a number must not stay on the text after it)
    asked = {role: QModelRoleData(int(role.value)) for role in (Qt.ItemDataRole.DisplayRole,
                                                                Qt.ItemDataRole.TextAlignmentRole)}
    for row in range(3):
        for column in range(len(COLUMNS)):
            index = table._model.index(row, column)
            for role, data in asked.items():
                index.multiData(QModelRoleDataSpan(data))
                assert data.data() == table._model.data(index, role), (row, column, role)
    assert plain(None) == ""
