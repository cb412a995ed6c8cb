"""A tab's charts, side by side: each an interactive plot with an "Export figure…" button.

The frames come from the export registry's chart functions (the frames the publication figures draw), built
on a worker in this widget's operation slot; charts that share a frame function read it once. A click on
a point is handed on through ``picked``; the export writes the publication figure and its CSV."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd
from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from ui import dialogs
from ui.leakage.plot import LeakagePlot
from ui.widgets.combo import refill
from ui.widgets.figure_file import ask_figure_path
from workbench.probes.leakage.charts import SCORE_TITLES

SCORE_CHART = "membership-scores"
#: the charts drawn for the score chosen above the score chart
SCORE_CHARTS = (SCORE_CHART, "membership-roc")


def chart_frames(project, names: list[str], options: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """On the worker: each chart's frame, from the export registry (one read per frame function)."""
    from workbench.export import registry

    built: dict[Any, pd.DataFrame] = {}
    frames = {}
    for name in names:
        spec = registry.chart(name)
        if spec.frame not in built:
            built[spec.frame] = spec.frame(project, **options)
        frames[name] = built[spec.frame]
    return frames


class TabCharts(QWidget):
    picked = Signal(dict)  # the clicked point's passage or book
    saved = Signal(str)  # what an export wrote

    def __init__(self, ops, names: list[str], parent: QWidget | None = None):
        super().__init__(parent)
        self.ops = ops
        self.names = names
        self.drawing = ops.slot(self)
        self.project = None
        self.options: dict[str, Any] = {}
        self.frames: dict[str, pd.DataFrame] = {}
        self._waiting: list[str] = []  # charts still to draw from ``frames``, one a turn (``show_frames``)
        self.nothing = ""
        self.plots: dict[str, LeakagePlot] = {}
        self.export_buttons: dict[str, QPushButton] = {}
        self.score = QComboBox()
        refill(self.score, [(title, score) for score, title in SCORE_TITLES.items()])
        self.score.setToolTip("Which membership score to draw (the exported figure shows them all)")
        self.score.currentIndexChanged.connect(self._score_changed)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        for name in names:
            plot = LeakagePlot()
            plot.picked.connect(self.picked)
            button = QPushButton("Export figure…")
            button.setToolTip("The publication figure (PDF, SVG or 300-dpi PNG) and the CSV of what it shows")
            button.clicked.connect(partial(self.export_figure_dialog, name))
            button.setEnabled(False)
            top = QHBoxLayout()
            if name == SCORE_CHART:
                top.addWidget(self.score)
            top.addStretch(1)
            top.addWidget(button)
            column = QVBoxLayout()
            column.addLayout(top)
            column.addWidget(plot, 1)
            row.addLayout(column, 1)
            self.plots[name], self.export_buttons[name] = plot, button

    # ------------------------------------------------------------------ drawing
    def show_for(self, project, options: dict[str, Any] | None, nothing: str) -> None:
        """Draw the charts for ``options`` (built in the background); with None, or when a frame is empty,
        say ``nothing`` (what to do next) in the plot instead."""
        self.project, self.nothing = project, nothing
        if project is None or options is None:
            self.drawing.drop()
            self._say(nothing)
            return
        self.options = dict(options)
        names, chosen = list(self.names), dict(options)
        self.drawing.start(lambda state: chart_frames(project, names, chosen), label="Drawing the charts",
                           project=project, on_done=self._draw, on_error=self._failed)

    def show_frames(self, project, options: dict[str, Any], frame: pd.DataFrame, nothing: str) -> None:
        """Draw every chart from ``frame``, read already by the tab (its table shows the same frame: read once,
        not once for the table and again for the charts); ``nothing`` when it is empty. One chart a turn of
        the event loop, after the table's: at 57,000 passages each takes tens of milliseconds."""
        self.drawing.drop()
        self.project, self.nothing, self.options = project, nothing, dict(options)
        self.frames = {name: frame for name in self.names}
        self.score.setEnabled(False)
        self._waiting = list(self.names)
        QTimer.singleShot(0, self._draw_next)

    def _draw_next(self) -> None:
        if not self._waiting:
            return
        name = self._waiting.pop(0)
        self._draw_one(name, self.frames[name])
        if self._waiting:
            QTimer.singleShot(0, self._draw_next)

    def _say(self, text: str) -> None:
        self.frames, self._waiting = {}, []
        self.score.setEnabled(False)
        for name, plot in self.plots.items():
            plot.show_message(text)
            self.export_buttons[name].setEnabled(False)

    def _failed(self, message: str, _details: str) -> None:
        self._say(message)

    def _draw(self, frames: dict[str, pd.DataFrame]) -> None:
        self.frames, self._waiting = frames, []
        scores = frames.get(SCORE_CHART, pd.DataFrame())
        self.score.setEnabled(not scores.empty)
        if not scores.empty:  # the reference ratio only where a reference model read the passages
            refill(self.score, [(title, score) for score, title in SCORE_TITLES.items() if score in set(scores["score"])])
        for name, frame in frames.items():
            self._draw_one(name, frame)

    def _draw_one(self, name: str, frame: pd.DataFrame) -> None:
        plot = self.plots[name]
        self.export_buttons[name].setEnabled(not frame.empty)
        if frame.empty:
            plot.show_message(self.nothing)
        else:
            plot.show_chart(name, frame, self.score.currentData())

    def _score_changed(self, _index: int) -> None:
        for name in SCORE_CHARTS:
            frame = self.frames.get(name)
            if name in self.plots and frame is not None and not frame.empty:
                self.plots[name].show_chart(name, frame, self.score.currentData())

    # ------------------------------------------------------------------ exports
    def export_figure_dialog(self, name: str, *_: Any) -> None:
        if self.project is None:
            return
        out = ask_figure_path(self, self.project.path.parent / f"{name}.pdf")
        if out is not None:
            self.export_figure(name, out)

    def export_figure(self, name: str, out: str | Path):
        """Write the publication figure of ``name`` for the choices on screen, with its CSV (in the background)."""
        from workbench.export import registry

        project, options = self.project, dict(self.options)
        return self.ops.run(lambda state: registry.export_chart(project, name, out, **options),
                            label="Exporting the chart", project=project, on_done=self._exported,
                            on_error=self._export_failed)

    def _exported(self, paths) -> None:
        self.saved.emit("Saved " + " and ".join(str(p) for p in paths) + ".")

    def _export_failed(self, message: str, details: str) -> None:
        dialogs.show_error(self, message, details)
