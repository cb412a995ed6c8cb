"""The results side of the Name cloze page: accuracy per book (filled in live) and the name-cloze runs.

Both tables are views the core builds for the page's choices (``workbench.probes.cloze.views``:
``accuracy_view`` for ``AccuracyChoices``, ``runs_view`` for ``RunsChoices``) on a worker; this panel only
shows them, with Continue and Retry failed for a chosen run where the view says it can be done.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QPushButton, QTabWidget, QVBoxLayout, QWidget

from ui.widgets.frame_table import Column, FrameTable
from workbench.probes.cloze.views import ACCURACY_VIEW_COLUMNS, RUNS_VIEW_COLUMNS, ViewColumn, run_actions

if TYPE_CHECKING:
    import pandas as pd


def columns(view_columns: list[ViewColumn]) -> list[Column]:
    """A core view's columns as the frame table shows them (the texts are written by the core already)."""
    return [Column(c.field, c.title, numeric=c.numeric, tooltip=c.tooltip, stretch=c.stretch, optional=c.optional)
            for c in view_columns]


class ResultsPanel(QTabWidget):
    continue_requested = Signal(int, bool)  # run id, retry failed only
    model_chosen = Signal(str)  # the model whose accuracy to show ('' for every model)
    flagged_changed = Signal(bool)  # leave out books with fewer passages than asked for

    def __init__(self, parent=None):
        super().__init__(parent)
        self.accuracy = FrameTable(columns(ACCURACY_VIEW_COLUMNS))
        self.accuracy_hint = QLabel("")
        self.accuracy_hint.setWordWrap(True)
        self.model_filter = QComboBox()
        self.model_filter.setToolTip("Show the accuracy of one model, or of every model")
        self.model_filter.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.model_filter.addItem("All models", "")
        self.model_filter.currentIndexChanged.connect(
            lambda _: self.model_chosen.emit(self.model_filter.currentData() or ""))
        self.flagged = QCheckBox("Leave out flagged books")
        self.flagged.setToolTip("Leave out books with fewer passages than were asked for")
        self.flagged.toggled.connect(self.flagged_changed.emit)
        filters = QHBoxLayout()
        filters.addWidget(QLabel("Show"))
        filters.addWidget(self.model_filter)
        filters.addWidget(self.flagged)
        filters.addStretch(1)
        accuracy_tab = QWidget()
        accuracy_layout = QVBoxLayout(accuracy_tab)
        accuracy_layout.addLayout(filters)
        accuracy_layout.addWidget(self.accuracy_hint)
        accuracy_layout.addWidget(self.accuracy, 1)
        self.addTab(accuracy_tab, "Accuracy per book")

        self.runs = FrameTable(columns(RUNS_VIEW_COLUMNS), key="id")
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

    def offer_models(self, labels: list[str], chosen: str | None = None) -> None:
        """The models the accuracy tab can show alone (the choice stays; no signal while they are filled in)."""
        if [self.model_filter.itemData(i) for i in range(1, self.model_filter.count())] == labels:
            return
        self.model_filter.blockSignals(True)
        self.model_filter.clear()
        self.model_filter.addItem("All models", "")
        for label in labels:
            self.model_filter.addItem(label, label)
        self.model_filter.setCurrentIndex(max(self.model_filter.findData(chosen or ""), 0))
        self.model_filter.blockSignals(False)

    def reset_filters(self) -> None:
        """Every model, flagged books kept (another project: its models are not these)."""
        self.offer_models([])
        self.flagged.blockSignals(True)
        self.flagged.setChecked(False)
        self.flagged.blockSignals(False)

    def show_accuracy(self, frame: pd.DataFrame, hint: str = "") -> None:
        self.accuracy.show_frame(frame)
        self.accuracy_hint.setText(hint)
        self.accuracy_hint.setVisible(bool(hint))

    def show_runs(self, frame: pd.DataFrame) -> None:
        self.runs.show_frame(frame)
        self._update_buttons()

    def selected_run(self) -> dict | None:
        """The chosen run's id and what can be done with it (``views.RUN_ACTIONS``), or None."""
        keys = self.runs.selected_keys()
        return run_actions(self.runs.frame, keys[0] if keys else None)

    def set_busy(self, busy: bool) -> None:
        self._busy = busy
        self._update_buttons()

    def _update_buttons(self) -> None:
        run = self.selected_run()
        free = run is not None and not self._busy
        self.continue_button.setEnabled(free and bool(run["can_continue"]))
        self.retry_button.setEnabled(free and bool(run["can_retry"]))

    def _request(self, retry_failed: bool) -> None:
        run = self.selected_run()
        if run is not None:
            self.continue_requested.emit(int(run["id"]), retry_failed)
