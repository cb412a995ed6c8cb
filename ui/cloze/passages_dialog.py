"""The passages behind one book's point: passage, true name, the model's raw answer, its parse, correct.

Shows ``workbench.probes.cloze.views.passages_view`` for the dialog's ``PassagesChoices`` (the book, the models,
which answers): the answers are read once for the book, and the filter (right, wrong or failed answers) keeps
rows of them with the core's ``answer_rows``. The selected row is shown in full below the table, with the
hidden name written into the gap.
"""

from __future__ import annotations

import html
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QComboBox, QLabel

from ui.widgets.frame_table import Column
from ui.widgets.rows_dialog import RowsDialog, failed_call, one_line
from workbench.probes.cloze import MASK
from workbench.probes.cloze.analysis import answers_summary
from workbench.probes.cloze.views import ANSWER_FILTERS, PassagesChoices, answer_rows

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = [
    Column("model", "Model"),
    Column("passage", "Passage", one_line, stretch=True),
    Column("gold", "True name"),
    Column("raw", "Raw response", one_line),
    Column("parsed", "Parsed answer", one_line),
    Column("verdict", "Correct"),
]


class PassagesDialog(RowsDialog):
    EMPTY = "No passages of this kind."

    def __init__(self, book: str, frame: pd.DataFrame, choices: PassagesChoices, parent=None):
        """``frame``: ``passages_view`` of the book for every answer (``choices`` with ``show='all'``)."""
        rows = frame.reset_index(drop=True)
        super().__init__(f"Passages of {book}", f"<b>{html.escape(book)}</b> — {html.escape(answers_summary(rows))}",
                         COLUMNS, (1000, 640), parent, table_share=3)
        self.all_rows = rows
        self.choices = choices
        self.filter = QComboBox()
        for key, text in ANSWER_FILTERS.items():
            self.filter.addItem(text, key)
        self.filter.setCurrentIndex(max(self.filter.findData(choices.show), 0))
        self.filter.currentIndexChanged.connect(lambda _: self.choose(self.filter.currentData()))
        self.add_to_heading(QLabel("Show"))
        self.add_to_heading(self.filter)
        self.choose(self.filter.currentData())

    def choose(self, show: str) -> None:
        """Show the answers of one kind ('all', 'right', 'wrong', 'failed')."""
        self.choices = replace(self.choices, show=show)
        self.show_rows(answer_rows(self.all_rows, show))

    def row_html(self, row: pd.Series) -> str:
        gap = f"<b style='background:#fff2a8;'>[{html.escape(str(row['gold']))}]</b>"
        passage = html.escape(one_line(row["passage"])).replace(html.escape(MASK), gap)
        if row["status"] != "ok":
            answer = failed_call(row)
        else:
            answer = (f"Raw response: <code>{html.escape(str(row['raw']))}</code> &nbsp;→&nbsp; parsed: "
                      f"<b>{html.escape(str(row['parsed']))}</b> ({row['verdict']})")
        return f"<p>{passage}</p><p>{html.escape(str(row['model']))}. {answer}</p>"
