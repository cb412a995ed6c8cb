"""The answers behind a point of a validity chart (a group, a book or a passage): the passage, the truth,
the model's raw answer, what it was read as, and why a value is missing. Rows of
``workbench.probes.validity.answers.task_answers``; the selected one is shown in full below the table."""

from __future__ import annotations

import html

import pandas as pd
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QLabel, QSplitter, QTextBrowser, QVBoxLayout

from ui.widgets.frame_table import Column, FrameTable, is_missing
from ui.widgets.screen_fit import resize_to_fit


def _one_line(value) -> str:
    return "" if is_missing(value) else " ".join(str(value).split())


def _year(value) -> str:
    return "" if is_missing(value) else f"{float(value):.0f}"


def _minutes(value) -> str:
    from workbench.annotation.durations import describe_minutes

    return "" if is_missing(value) else describe_minutes(float(value))


def columns(task: str) -> list[Column]:
    truth = (Column("truth_year", "True year", _year, numeric=True) if task == "year"
             else Column("reference_minutes", "Reference", _minutes, numeric=True))
    value = (Column("value", "Year given", _year, numeric=True) if task == "year"
             else Column("value", "Time given", _minutes, numeric=True))
    return [Column("book", "Book"), Column("passage", "Passage", _one_line, stretch=True), truth,
            Column("raw", "Raw answer", _one_line), value, Column("reason", "Why missing")]


def summary(task: str, frame: pd.DataFrame) -> str:
    answered = frame[frame["status"] == "ok"]
    missing = int(answered["value"].isna().sum())
    failed = len(frame) - len(answered)
    what = "year" if task == "year" else "time"
    text = f"{len(answered)} answer(s), {len(answered) - missing} with a {what}, {missing} missing"
    return text + (f", {failed} failed call(s)" if failed else "") + "."


class AnswersDialog(QDialog):
    def __init__(self, title: str, task: str, frame: pd.DataFrame, parent=None):
        super().__init__(parent)
        self.task = task
        self.setWindowTitle(f"Answers: {title}")
        resize_to_fit(self, 1000, 620)
        self.heading = QLabel(f"<b>{html.escape(title)}</b> — {html.escape(summary(task, frame))}")
        self.heading.setWordWrap(True)
        self.table = FrameTable(columns(task))
        self.table.itemSelectionChanged.connect(self._show_selected)
        self.detail = QTextBrowser()
        self.detail.setOpenLinks(False)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(splitter, 1)
        self.table.show_frame(frame)
        if self.table.rowCount():
            self.table.selectRow(0)
        else:
            self.detail.setHtml("<i>No answers here yet.</i>")

    def _show_selected(self) -> None:
        rows = sorted({index.row() for index in self.table.selectedIndexes()})
        if not rows:
            return
        row = self.table.frame.iloc[rows[0]]
        if row["status"] != "ok":
            answer = f"<span style='color:#b00020;'>The call failed: {html.escape(str(row['error'] or ''))}</span>"
        else:
            given = _year(row["value"]) if self.task == "year" else _minutes(row["value"])
            read = (f"read as <b>{html.escape(given)}</b> (from “{html.escape(str(row['read']))}”)" if given
                    else f"<b>missing</b>: {html.escape(str(row['reason']))}")
            answer = f"Raw answer: <code>{html.escape(str(row['raw']))}</code> &nbsp;→&nbsp; {read}"
        truth = (f"True year: {_year(row['truth_year']) or 'unknown'}" if self.task == "year"
                 else f"Reference: {_minutes(row.get('reference_minutes')) or 'none'}")
        self.detail.setHtml(f"<p>{html.escape(str(row['passage']))}</p><p>{answer}</p><p>{truth}</p>")
