"""A tab's charts, side by side: the charts the export registry shows on that tab (``ChartSpec.page``), each in a
``ChartView`` with an "Export figure…" button, and the controls of their options above them.

Each view builds its chart's frame with the registry's own frame function and draws it with the chart's own
``draw`` on a worker; a tab that has read the frame already (the overlap tab's table shows the same frame) hands
it over instead (``show_frames``). A click on a point is handed on through ``picked``; the export writes the chart
on screen and its CSV."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from ui import dialogs
from ui.widgets.chart_controls import ChartControls
from ui.widgets.chart_view import ChartView
from ui.widgets.figure_file import ask_figure_path

if TYPE_CHECKING:
    import threading

    import pandas as pd


class Drawing:
    """The charts' drawings together: busy while one is, dropped all at once."""

    def __init__(self, views: list[ChartView]):
        self.views = views

    @property
    def busy(self) -> bool:
        return any(view.busy for view in self.views)

    def drop(self) -> None:
        for view in self.views:
            view.drawing.drop()


class TabCharts(QWidget):
    picked = Signal(dict)  # the clicked point's passage or book
    saved = Signal(str)  # what an export wrote

    def __init__(self, ops, page: str, parent: QWidget | None = None):
        from workbench.export import registry

        super().__init__(parent)
        self.ops = ops
        self.specs = registry.charts_for(page)
        self.names = [spec.name for spec in self.specs]
        self.project = None
        self.options: dict[str, Any] | None = None  # the tab's choices (corpus, model ...)
        self.frame: "pd.DataFrame | None" = None  # the frame the tab read, when it hands it over
        self.nothing = ""
        self.plots: dict[str, ChartView] = {}
        self.export_buttons: dict[str, QPushButton] = {}
        shared = {}  # the charts' options, one control for options of one name
        for spec in self.specs:
            for option in spec.options:
                shared.setdefault(option.key, option)
        self.controls = ChartControls()
        self.controls.changed.connect(self.redraw)
        self.chart_options = tuple(shared.values())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        if self.chart_options:
            top = QHBoxLayout()
            top.addWidget(self.controls)
            top.addStretch(1)
            layout.addLayout(top)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        for spec in self.specs:
            plot = ChartView(ops)
            plot.picked.connect(self.picked)
            plot.drawn.connect(self._drawn)
            button = QPushButton("Export figure…")
            button.setToolTip("The figure on screen for a paper (PDF, SVG or 300-dpi PNG) and the CSV of what it shows")
            button.clicked.connect(partial(self.export_figure_dialog, spec.name))
            button.setEnabled(False)
            top = QHBoxLayout()
            top.addStretch(1)
            top.addWidget(button)
            column = QVBoxLayout()
            column.addLayout(top)
            column.addWidget(plot, 1)
            row.addLayout(column, 1)
            self.plots[spec.name], self.export_buttons[spec.name] = plot, button
        layout.addLayout(row, 1)
        self.drawing = Drawing(list(self.plots.values()))

    # ------------------------------------------------------------------ drawing
    def show_for(self, project, options: dict[str, Any] | None, nothing: str,
                 after: "threading.Event | None" = None) -> None:
        """Draw the charts for ``options`` (built in the background; ``after``: once it is set); with None, or
        when a frame is empty, say ``nothing`` (what to do next) in the plot instead."""
        self.project, self.nothing, self.frame = project, nothing, None
        self.options = None if options is None else dict(options)
        self.redraw(after=after)

    def show_frames(self, project, options: dict[str, Any], frame: "pd.DataFrame", nothing: str,
                    after: "threading.Event | None" = None) -> None:
        """Draw every chart from ``frame``, read already by the tab (its table shows the same frame: read once,
        not once for the table and again for the charts); ``nothing`` when it is empty; ``after``: the drawings
        wait on their workers until it is set."""
        self.project, self.nothing, self.options, self.frame = project, nothing, dict(options), frame
        self.redraw(after=after)

    def redraw(self, *, after: "threading.Event | None" = None) -> None:
        if self.project is None or self.options is None:
            self._say(self.nothing)
            return
        self.controls.set_chart(self.chart_options, self.project, self.controls.values(), context=self.options)
        chosen = self.controls.values()
        for spec in self.specs:
            self.export_buttons[spec.name].setEnabled(False)
            if self.frame is not None and self.frame.empty:
                self.plots[spec.name].show_message(self.nothing)
                continue
            own = {option.name: chosen.get(option.name) for option in spec.options}
            self.plots[spec.name].show_chart(self.project, spec.name, {**self.options, **own}, frame=self.frame,
                                             nothing=self.nothing, after=after)

    def _say(self, text: str) -> None:
        for name, plot in self.plots.items():
            plot.show_message(text)
            self.export_buttons[name].setEnabled(False)

    def _drawn(self, _drawn) -> None:
        for name, plot in self.plots.items():
            self.export_buttons[name].setEnabled(plot.has_chart())

    # ------------------------------------------------------------------ exports
    def export_figure_dialog(self, name: str, *_: Any) -> None:
        if self.project is None:
            return
        out = ask_figure_path(self, self.project.path.parent / f"{name}.pdf")
        if out is not None:
            self.export_figure(name, out)

    def export_figure(self, name: str, out: str | Path):
        """Write the chart ``name`` as it is on screen, with its CSV (in the background)."""
        work = self.plots[name].export_work(out, self.project)
        if work is None:
            return None
        return self.ops.run(work, label="Exporting the chart", project=self.project, on_done=self._exported,
                            on_error=self._export_failed)

    def _exported(self, paths) -> None:
        self.saved.emit("Saved " + " and ".join(str(p) for p in paths) + ".")

    def _export_failed(self, message: str, details: str) -> None:
        dialogs.show_error(self, message, details)
