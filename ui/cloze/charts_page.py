"""The Charts page: the charts the export registry shows here (``page="charts"``), interactive, and their exports.

The page names no chart: it lists the registry's charts for this page, builds each one's controls from its
options (``ChartControls``) and shows it in a ``ChartView``, which builds the frame, caption and figure in the
background with the chart's own ``frame``, ``caption`` and ``draw``. Hovering names a book, clicking it lists
its passages. Export writes the figure on screen through the registry (PDF, SVG or 300-dpi PNG, chosen by the
file's ending) with the CSV of what it plots, and the per-passage and per-book tables as CSV.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFileDialog, QHBoxLayout, QLabel, QMenu, QPushButton, QVBoxLayout

from ui import dialogs
from ui.background import Operation
from ui.cloze.passages_dialog import PassagesDialog
from ui.widgets.chart_controls import ChartControls
from ui.widgets.chart_view import ChartView
from ui.widgets.figure_file import ask_figure_path
from ui.widgets.page import Page
from workbench.errors import UserError
from workbench.export import registry

PAGE = "charts"  # the charts of the registry shown here
VIEW_SETTING = "charts.cloze.view"  # the chart and its choices, kept in the project
#: names the choices were kept under before they were the charts' own option names
OLD_NAMES = {"colour_by": "color_by", "group_by": "tag"}
MODEL_OPTIONS = ("model", "model_a", "model_b")  # the options naming a model whose answers a table holds
ALL_MODELS = "all"
#: registered tables offered by Export table, and what they hold
TABLES = {
    "cloze-passage-results": "Answers per passage (CSV)…",
    "cloze-book-accuracy": "Accuracy per book (CSV)…",
}
CSV_FILES = "CSV tables (*.csv)"
NO_RESULTS = ("No name-cloze results yet. Run the probe on the Name cloze page, or import published results there; "
              "the charts appear here.")
HOVER_HINT = "Hover over a point to see its book; click it to read the passages and the model's answers."


class ChartsPage(Page):
    def __init__(self, ops, parent=None):
        super().__init__(ops, parent)
        self.specs = {spec.name: spec for spec in registry.charts_for(PAGE)}
        self.passages_dialog: PassagesDialog | None = None
        self.export_op: Operation | None = None
        self.last_export: list[Path] = []
        self.remembered: dict[str, Any] = {}  # every choice made, by the name charts share it under
        self._loading_controls = False
        self._project_loaded = None
        self._build()
        self.refresh()

    # ------------------------------------------------------------------ layout
    def _build(self) -> None:
        self.chart = QComboBox()
        self.chart.setToolTip("Which chart")
        self.chart.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        for name, spec in self.specs.items():
            self.chart.addItem(spec.short_title, name)
            self.chart.setItemData(self.chart.count() - 1, spec.description, Qt.ItemDataRole.ToolTipRole)
        self.controls = ChartControls()

        self.export_button = QPushButton("Export figure…")
        self.export_button.setToolTip("Save the chart for a paper (PDF, SVG or 300-dpi PNG) and the CSV of what it shows")
        self.export_button.clicked.connect(self.export_figure_dialog)
        self.table_button = QPushButton("Export table")
        menu = QMenu(self.table_button)
        for name, text in TABLES.items():
            menu.addAction(text, lambda n=name: self.export_table_dialog(n))
        self.table_button.setMenu(menu)

        controls = QHBoxLayout()
        controls.addWidget(QLabel("Chart"))
        controls.addWidget(self.chart)
        controls.addWidget(self.controls)
        controls.addStretch(1)

        self.view = ChartView(self.ops)
        self.view.picked.connect(self.open_passages)
        self.view.drawn.connect(self._drawn)
        self.status = QLabel(HOVER_HINT)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(self.export_button)
        bottom.addWidget(self.table_button)

        layout = QVBoxLayout(self)
        layout.addLayout(controls)
        layout.addWidget(self.view, 1)
        layout.addLayout(bottom)

        self.chart.currentIndexChanged.connect(self._chart_changed)
        self.controls.changed.connect(self._controls_changed)

    # ------------------------------------------------------------------ controls
    def chart_name(self) -> str:
        return self.chart.currentData() or next(iter(self.specs), "")

    @property
    def spec(self) -> registry.ChartSpec:
        return self.specs[self.chart_name()]

    @property
    def frame(self):
        """What the chart on show plots (the registry's frame for its options)."""
        return self.view.frame

    def choose(self, *, chart: str | None = None, **values: Any) -> None:
        """Choose a chart and values of its options (by option name) at once, and draw once (tests and the
        benchmarks use this too)."""
        self._loading_controls = True
        try:
            if chart is not None and chart != self.chart_name():
                index = self.chart.findData(chart)
                if index < 0:
                    raise UserError(f"'{chart}' is not one of the choices here.")
                self.chart.setCurrentIndex(index)
            self._load_controls({**self.remembered, **{k: v for k, v in values.items() if v is not None}})
            for name, value in values.items():
                if value is not None:
                    self.controls.set_value(name, value)
                    self.controls.fill()  # the choices after it may depend on it
        finally:
            self._loading_controls = False
        self._controls_changed()

    def options(self) -> dict[str, Any]:
        """The registry options of the chart as the controls set them."""
        return self.controls.values()

    def models_shown(self) -> list[str] | None:
        """The models the chart draws (None: all), for the table exports."""
        models = [v for k, v in self.options().items() if k in MODEL_OPTIONS and v]
        return None if not models or ALL_MODELS in models else models

    def _load_controls(self, wanted: dict[str, Any] | None = None) -> None:
        """The chart's controls, filled from the project with ``wanted`` (what was chosen before) where offered."""
        self.controls.set_chart(self.spec.options, self.project, dict(self.remembered if wanted is None else wanted))

    def _chart_changed(self, *_) -> None:
        if self._loading_controls:
            return
        self._load_controls()
        self._controls_changed()

    def _controls_changed(self, *_) -> None:
        if self._loading_controls:
            return
        self.remembered.update(self.controls.remembered())
        self._remember()
        self.redraw()

    def _remember(self) -> None:
        """Keep the chart's settings in the project, so it opens on the same view next time."""
        if self.project is None:
            return
        view = {"chart": self.chart_name(), **self.remembered}
        if view != self.project.get_setting(VIEW_SETTING):
            self.project.set_setting(VIEW_SETTING, view)

    # ------------------------------------------------------------------ drawing
    def refresh(self) -> None:
        opened = self.project is not self._project_loaded
        self._project_loaded = self.project
        if opened:
            saved = self.project.get_setting(VIEW_SETTING, {}) if self.project is not None else {}
            saved = {OLD_NAMES.get(k, k): v for k, v in (saved or {}).items()}
            self.remembered = {k: v for k, v in saved.items() if k != "chart"}
            index = self.chart.findData(saved.get("chart"))
            if index >= 0:
                self._loading_controls = True
                self.chart.setCurrentIndex(index)
                self._loading_controls = False
        self._load_controls()
        self.remembered.update(self.controls.remembered())
        has_results = self.project is not None and not self.controls.empty_choices()
        for widget in (self.export_button, self.table_button):
            widget.setEnabled(has_results)
        if self.isVisible():
            self.redraw()

    def on_shown(self) -> None:
        self.refresh()
        if not self.isVisible():  # the window itself is not shown yet (a screenshot being prepared)
            self.redraw()

    def redraw(self) -> Operation | None:
        """Draw the chart for the choices on show (its frame, caption and figure are made in the background)."""
        if self.project is None:
            self.view.show_message("Open or create a project (File menu) to see its charts.")
            return None
        if self.controls.empty_choices():
            self.view.show_message(NO_RESULTS)
            return None
        for widget in (self.export_button, self.table_button):
            widget.setEnabled(False)  # until the chart shows something: an export of nothing would only fail
        return self.view.show_chart(self.project, self.chart_name(), self.options())

    def _drawn(self, drawn) -> None:
        for widget in (self.export_button, self.table_button):
            widget.setEnabled(self.view.has_chart())
        if self.view.has_chart():
            self.controls.show_what_matters(drawn.frame)

    # ------------------------------------------------------------------ passages of a book
    def open_passages(self, picked: dict) -> Operation | None:
        """List the passages of the book clicked, with the answers of the model(s) the chart draws: the core's
        ``passages_view`` for ``PassagesChoices(book_id, models)``, read on a worker."""
        if self.project is None:
            return None
        from workbench.probes.cloze.views import PassagesChoices, passages_view

        project, book = self.project, picked["book"]
        choices = PassagesChoices(book_id=int(picked["book_id"]), models=tuple(picked.get("models") or ()))

        def work(state):
            return book, passages_view(project, choices), choices

        return self.ops.run(work, label="Reading the passages", project=project, on_done=self._show_passages,
                            on_error=self.show_error)

    def _show_passages(self, result: tuple) -> None:
        book, frame, choices = result
        if self.passages_dialog is not None:
            self.passages_dialog.close()
        self.passages_dialog = PassagesDialog(book, frame, choices, self)
        dialogs.show_window(self.passages_dialog)  # waits while a blinded session is on screen

    # ------------------------------------------------------------------ exports
    def export_figure_dialog(self) -> None:
        if self.require_project() is None:
            return
        out = ask_figure_path(self, self.project.path.parent / f"{self.chart_name()}.pdf")
        if out is not None:
            self.export_figure(out)

    def export_figure(self, out: str | Path) -> Operation | None:
        """Write the figure (its format from the file's ending) and the CSV beside it, in the background."""
        if self.require_project() is None:
            return None
        work = self.view.export_work(out, self.project)
        if work is None:
            self.status.setText("There is no chart on show to export.")
            return None
        return self._export(work, "Exporting the chart")

    def export_table_dialog(self, name: str) -> None:
        if self.require_project() is None:
            return
        suggested = str(self.project.path.parent / f"{name}.csv")
        path, _ = QFileDialog.getSaveFileName(self, "Export the table", suggested, CSV_FILES)
        if path:
            out = Path(path) if Path(path).suffix.lower() == ".csv" else Path(path + ".csv")
            self.export_table(name, out)

    def export_table(self, name: str, out: str | Path) -> Operation | None:
        """Write a registered table as CSV for the model(s) on screen (all models when several)."""
        if self.require_project() is None:
            return None
        models = self.models_shown()
        options = {"model": models[0] if models and len(models) == 1 else None,
                   "exclude_flagged": bool(self.options().get("exclude_flagged"))}
        project = self.project

        def work(state):
            return [registry.export_table(project, name, out, **options)]

        return self._export(work, "Exporting the table")

    def _export(self, work, label: str) -> Operation:
        self.status.setText(f"{label}…")
        self.export_op = self.ops.run(work, label=label, project=self.project, on_done=self._exported,
                                      on_error=self._export_failed)
        return self.export_op

    def _exported(self, paths: list[Path]) -> None:
        self.last_export = [Path(p) for p in paths]
        self.status.setText("Saved " + " and ".join(str(p) for p in self.last_export) + ".")

    def _export_failed(self, message: str, details: str) -> None:
        self.status.setText(message)
        self.show_error(message, details)
