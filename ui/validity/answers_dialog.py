"""The answers behind a point of a validity chart (a group, a book or a passage): the passage, the truth,
the model's raw answer, what it was read as, and why a value is missing. Rows of
``workbench.probes.validity.answers.task_answers``; the selected one is shown in full below the table."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from ui.widgets.frame_table import Column, is_missing
from ui.widgets.rows_dialog import RowsDialog, failed_call, one_line
from workbench.probes.validity.views import answers_summary

if TYPE_CHECKING:
    import pandas as pd


def _year(value) -> str:
    return "" if is_missing(value) else f"{float(value):.0f}"


def _minutes(value) -> str:
    from workbench.annotation.durations import describe_minutes

    return "" if is_missing(value) else describe_minutes(float(value))


def columns(task: str, unparsed: bool = False) -> list[Column]:
    """The dialog's columns; ``unparsed``: the rows are the answers without a value, from every group, so
    each says its group and none has a value to show."""
    truth = (Column("truth_year", "True year", _year, numeric=True) if task == "year"
             else Column("reference_minutes", "Reference", _minutes, numeric=True))
    value = (Column("value", "Year given", _year, numeric=True) if task == "year"
             else Column("value", "Time given", _minutes, numeric=True))
    if unparsed:
        return [Column("group", "Group"), Column("book", "Book"), Column("raw", "Raw answer", one_line),
                Column("reason", "Why missing"), truth, Column("passage", "Passage", one_line, stretch=True)]
    return [Column("book", "Book"), Column("passage", "Passage", one_line, stretch=True), truth,
            Column("raw", "Raw answer", one_line), value, Column("flag", "Read from"), Column("reason", "Why missing")]


class AnswersDialog(RowsDialog):
    EMPTY = "No answers here yet."

    def __init__(self, title: str, task: str, frame: pd.DataFrame, parent=None, *, unparsed: bool = False):
        super().__init__(f"Answers: {title}", f"<b>{html.escape(title)}</b> — {html.escape(answers_summary(task, frame))}",
                         columns(task, unparsed), (1000, 620), parent)
        self.task = task
        self.show_rows(frame)

    def row_html(self, row: pd.Series) -> str:
        if row["status"] != "ok":
            answer = failed_call(row)
        else:
            given = _year(row["value"]) if self.task == "year" else _minutes(row["value"])
            flag = str(row.get("flag") or "")
            how = f", the midpoint of a {flag}" if flag in ("range", "decade", "century") else (
                f", flagged: {flag}" if flag else "")
            read = (f"read as <b>{html.escape(given)}</b> (from “{html.escape(str(row['read']))}”{html.escape(how)})"
                    if given else f"<b>missing</b>: {html.escape(str(row['reason']))}")
            answer = f"Raw answer: <code>{html.escape(str(row['raw']))}</code> &nbsp;→&nbsp; {read}"
        truth = (f"True year: {_year(row['truth_year']) or 'unknown'}" if self.task == "year"
                 else f"Reference: {_minutes(row.get('reference_minutes')) or 'none'}")
        return f"<p>{html.escape(str(row['passage']))}</p><p>{answer}</p><p>{truth}</p>"
