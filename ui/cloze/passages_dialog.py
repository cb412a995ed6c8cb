"""The passages behind one book's point: passage, true name, the model's raw answer, its parse, correct.

Shows rows of ``workbench.probes.cloze.analysis.passage_results`` (one per model and passage). A
filter keeps right, wrong or failed answers; the selected row is shown in full below the table, with
the hidden name written into the gap.
"""

from __future__ import annotations

import html

import pandas as pd
from PySide6.QtWidgets import QComboBox, QLabel

from ui.widgets.frame_table import Column, is_missing
from ui.widgets.rows_dialog import RowsDialog, failed_call, one_line
from workbench.probes.cloze import MASK
from workbench.probes.cloze.analysis import answers_summary


def _correct(value) -> str:
    return "" if is_missing(value) else ("right" if bool(value) else "wrong")


COLUMNS = [
    Column("model", "Model"),
    Column("passage", "Passage", one_line, stretch=True),
    Column("gold", "True name"),
    Column("raw", "Raw response", one_line),
    Column("parsed", "Parsed answer", one_line),
    Column("correct", "Correct", _correct),
]
FILTERS = {
    "All answers": lambda f: f,
    "Right": lambda f: f[f["correct"].fillna(False).astype(bool)],
    "Wrong": lambda f: f[(f["status"] == "ok") & ~f["correct"].fillna(False).astype(bool)],
    "Failed calls": lambda f: f[f["status"] != "ok"],
}


class PassagesDialog(RowsDialog):
    EMPTY = "No passages of this kind."

    def __init__(self, book: str, frame: pd.DataFrame, parent=None):
        rows = frame.reset_index(drop=True)
        super().__init__(f"Passages of {book}", f"<b>{html.escape(book)}</b> — {html.escape(answers_summary(rows))}",
                         COLUMNS, (1000, 640), parent, table_share=3)
        self.all_rows = rows
        self.filter = QComboBox()
        self.filter.addItems(list(FILTERS))
        self.filter.currentTextChanged.connect(self.apply_filter)
        self.add_to_heading(QLabel("Show"))
        self.add_to_heading(self.filter)
        self.apply_filter(self.filter.currentText())

    def apply_filter(self, name: str) -> None:
        self.show_rows(FILTERS[name](self.all_rows))

    def row_html(self, row: pd.Series) -> str:
        gap = f"<b style='background:#fff2a8;'>[{html.escape(str(row['gold']))}]</b>"
        passage = html.escape(one_line(row["passage"])).replace(html.escape(MASK), gap)
        if row["status"] != "ok":
            answer = failed_call(row)
        else:
            verdict = "right" if bool(row["correct"]) else "wrong"
            answer = (f"Raw response: <code>{html.escape(str(row['raw']))}</code> &nbsp;→&nbsp; parsed: "
                      f"<b>{html.escape(str(row['parsed']))}</b> ({verdict})")
        return f"<p>{passage}</p><p>{html.escape(str(row['model']))}. {answer}</p>"
