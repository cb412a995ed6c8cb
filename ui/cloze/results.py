"""The results side of the Name cloze page: accuracy per book (filled in live) and the name-cloze runs.

The accuracy table shows ``workbench.probes.cloze.analysis.book_accuracy``; the runs table
``workbench.probes.cloze.overview.cloze_runs``, with Continue and Retry failed for a chosen run.
"""

from __future__ import annotations

import pandas as pd
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QTabWidget, QVBoxLayout, QWidget

from ui import wording
from ui.widgets.frame_table import Column, FrameTable, count, decimal, is_missing, share, yes_only
from workbench.jobs import RESUMABLE_STATUSES
from workbench.probes.cloze.kinds import CLOZE_KIND, LOGPROB_KIND, MLM_KIND

KIND_NAMES = {CLOZE_KIND: "name cloze", MLM_KIND: "masked-LM baseline", LOGPROB_KIND: "log-probability"}


def _ci(row: pd.Series) -> str:
    if is_missing(row["ci_low"]) or is_missing(row["ci_high"]):
        return ""
    return f"{row['ci_low']:.0%} – {row['ci_high']:.0%}"


def _kind(value) -> str:
    return KIND_NAMES.get(value, str(value))


ACCURACY_COLUMNS = [
    Column("model", "Model"),
    Column("kind", "Run", _kind),
    Column("book", "Book", stretch=True),
    Column("n", "Answered", count, numeric=True, tooltip="Passages the model answered (failures not counted)"),
    Column("correct", "Correct", count, numeric=True),
    Column("accuracy", "Accuracy", share, numeric=True, tooltip="Correct / answered"),
    Column("ci_low", "95% CI", numeric=True, compose=_ci, tooltip="Wilson 95% confidence interval"),
    Column("failed", "Failed", count, numeric=True, tooltip="Calls that failed; 'Retry failed only' asks again"),
    Column("flagged", "Flagged", yes_only, tooltip="Fewer passages than asked for: charts can leave these books out",
           optional=True),
    Column("mean_logprob", "Mean log-prob", decimal, numeric=True, optional=True,
           tooltip="Mean log-probability of the true name (log-probability runs; higher = more expected)"),
]


def _progress(row: pd.Series) -> str:
    return f"{int(row['ok']) + int(row['failed'])} of {int(row['total'])}"


RUN_COLUMNS = [
    Column("id", "Run", count, numeric=True),
    Column("kind", "Kind", _kind),
    Column("model", "Model"),
    Column("template", "Prompt"),
    Column("status", "Status"),
    Column("total", "Done", numeric=True, compose=_progress),
    Column("failed", "Failed", count, numeric=True),
    Column("created_at", "Started", wording.when),
    Column("note", "Note", stretch=True, compose=lambda row: _note(row)),
]
def _note(row: pd.Series) -> str:
    """The run's own note, else where its answers came from (imported runs otherwise look all alike)."""
    note = "" if is_missing(row.get("note")) else str(row["note"])
    about = "" if is_missing(row.get("about")) else str(row["about"])
    return "; ".join(x for x in (note, about) if x)


class ResultsPanel(QTabWidget):
    continue_requested = Signal(int, bool)  # run id, retry failed only

    def __init__(self, parent=None):
        super().__init__(parent)
        self.accuracy = FrameTable(ACCURACY_COLUMNS)
        self.accuracy_hint = QLabel("")
        self.accuracy_hint.setWordWrap(True)
        accuracy_tab = QWidget()
        accuracy_layout = QVBoxLayout(accuracy_tab)
        accuracy_layout.addWidget(self.accuracy_hint)
        accuracy_layout.addWidget(self.accuracy, 1)
        self.addTab(accuracy_tab, "Accuracy per book")

        self.runs = FrameTable(RUN_COLUMNS, key="id")
        self.runs.itemSelectionChanged.connect(self._update_buttons)
        self.continue_button = QPushButton("Continue run")
        self.continue_button.setToolTip("Ask the passages this run has not answered yet (e.g. after a cancel or crash)")
        self.continue_button.clicked.connect(lambda: self._request(False))
        self.retry_button = QPushButton("Retry failed only")
        self.retry_button.clicked.connect(lambda: self._request(True))
        buttons = QHBoxLayout()
        resumable = QLabel("Runs are resumable: nothing answered is ever asked again.")
        resumable.setWordWrap(True)
        buttons.addWidget(resumable, 1)
        buttons.addWidget(self.continue_button)
        buttons.addWidget(self.retry_button)
        runs_tab = QWidget()
        runs_layout = QVBoxLayout(runs_tab)
        runs_layout.addWidget(self.runs, 1)
        runs_layout.addLayout(buttons)
        self.addTab(runs_tab, "Runs")
        self._busy = False
        self._update_buttons()

    def show_accuracy(self, frame: pd.DataFrame, hint: str = "") -> None:
        self.accuracy.show_frame(frame)
        self.accuracy_hint.setText(hint)
        self.accuracy_hint.setVisible(bool(hint))

    def show_runs(self, frame: pd.DataFrame) -> None:
        self.runs.show_frame(frame)
        self._update_buttons()

    def selected_run(self) -> pd.Series | None:
        keys = self.runs.selected_keys()
        if not keys or self.runs.frame.empty:
            return None
        rows = self.runs.frame[self.runs.frame["id"] == keys[0]]
        return rows.iloc[0] if len(rows) else None

    def set_busy(self, busy: bool) -> None:
        self._busy = busy
        self._update_buttons()

    def _update_buttons(self) -> None:
        run = self.selected_run()
        resumable = run is not None and not run["imported"] and run["status"] in RESUMABLE_STATUSES and not self._busy
        self.continue_button.setEnabled(bool(resumable) and int(run["ok"]) + int(run["failed"]) < int(run["total"]))
        self.retry_button.setEnabled(bool(resumable) and int(run["failed"]) > 0)

    def _request(self, retry_failed: bool) -> None:
        run = self.selected_run()
        if run is not None:
            self.continue_requested.emit(int(run["id"]), retry_failed)
