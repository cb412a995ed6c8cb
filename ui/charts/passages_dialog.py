"""The passages behind one book's point: passage, true name, the model's raw answer, its parse, correct.

Shows rows of ``workbench.probes.cloze.analysis.passage_results`` (one per model and passage). A
filter keeps right, wrong or failed answers; the selected row is shown in full below the table, with
the hidden name written into the gap.
"""

from __future__ import annotations

import html

import pandas as pd
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QDialog, QHBoxLayout, QLabel, QSplitter, QTextBrowser, QVBoxLayout

from ui.widgets.frame_table import Column, FrameTable, is_missing
from ui.widgets.screen_fit import resize_to_fit
from workbench.probes.cloze import MASK


def _correct(value) -> str:
    return "" if is_missing(value) else ("right" if bool(value) else "wrong")


def _one_line(value) -> str:
    return "" if is_missing(value) else " ".join(str(value).split())


COLUMNS = [
    Column("model", "Model"),
    Column("passage", "Passage", _one_line, stretch=True),
    Column("gold", "True name"),
    Column("raw", "Raw response", _one_line),
    Column("parsed", "Parsed answer", _one_line),
    Column("correct", "Correct", _correct),
]
FILTERS = {
    "All answers": lambda f: f,
    "Right": lambda f: f[f["correct"].fillna(False).astype(bool)],
    "Wrong": lambda f: f[(f["status"] == "ok") & ~f["correct"].fillna(False).astype(bool)],
    "Failed calls": lambda f: f[f["status"] != "ok"],
}


def summary_line(frame: pd.DataFrame) -> str:
    parts = []
    for model, rows in frame.groupby("model", sort=False):
        answered = rows[rows["status"] == "ok"]
        right = int(answered["correct"].fillna(False).astype(bool).sum())
        failed = len(rows) - len(answered)
        parts.append(f"{model}: {right} of {len(answered)} right" + (f", {failed} failed" if failed else ""))
    return "; ".join(parts)


class PassagesDialog(QDialog):
    def __init__(self, book: str, frame: pd.DataFrame, parent=None):
        super().__init__(parent)
        self.setWindowTitle(f"Passages of {book}")
        resize_to_fit(self, 1000, 640)
        self.all_rows = frame.reset_index(drop=True)
        self.heading = QLabel(f"<b>{html.escape(book)}</b> — {html.escape(summary_line(self.all_rows))}")
        self.heading.setWordWrap(True)
        self.filter = QComboBox()
        self.filter.addItems(list(FILTERS))
        self.filter.currentTextChanged.connect(self.apply_filter)
        top = QHBoxLayout()
        top.addWidget(self.heading, 1)
        top.addWidget(QLabel("Show"))
        top.addWidget(self.filter)

        self.table = FrameTable(COLUMNS)
        self.table.itemSelectionChanged.connect(self._show_selected)
        self.detail = QTextBrowser()
        self.detail.setOpenLinks(False)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)

        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)
        self.apply_filter(self.filter.currentText())

    def apply_filter(self, name: str) -> None:
        self.table.show_frame(FILTERS[name](self.all_rows))
        if self.table.rowCount():
            self.table.selectRow(0)
        else:
            self.detail.setHtml("<i>No passages of this kind.</i>")

    def _show_selected(self) -> None:
        rows = sorted({index.row() for index in self.table.selectedIndexes()})
        if not rows:
            return
        row = self.table.frame.iloc[rows[0]]
        gap = f"<b style='background:#fff2a8;'>[{html.escape(str(row['gold']))}]</b>"
        passage = html.escape(_one_line(row["passage"])).replace(html.escape(MASK), gap)
        if row["status"] != "ok":
            answer = f"<span style='color:#b00020;'>The call failed: {html.escape(str(row['error'] or ''))}</span>"
        else:
            verdict = "right" if bool(row["correct"]) else "wrong"
            answer = (f"Raw response: <code>{html.escape(str(row['raw']))}</code> &nbsp;→&nbsp; parsed: "
                      f"<b>{html.escape(str(row['parsed']))}</b> ({verdict})")
        self.detail.setHtml(f"<p>{passage}</p><p>{html.escape(str(row['model']))}. {answer}</p>")
