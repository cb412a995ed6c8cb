"""The Charts page: the name-cloze charts of the export registry, interactive, and their exports.

The chart's frame is built by the registry's own ``frame(project, **options)`` in the background and
drawn with pyqtgraph; the caption's statistics come from ``workbench.probes.cloze.chart_notes``.
Hovering names a book, clicking it lists its passages. Export writes the publication figure through
the registry (matplotlib: PDF, SVG or 300-dpi PNG, chosen by the file's ending) with the CSV of what
it plots, and the per-passage and per-book tables as CSV.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
)

from ui import dialogs
from ui.background import Operation
from ui.charts.cloze_plot import ChartView
from ui.charts.passages_dialog import PassagesDialog
from ui.widgets.figure_file import ask_figure_path
from ui.widgets.page import Page
from workbench.errors import UserError
from workbench.export import registry
from workbench.probes.cloze.charts import DEFAULT_TOP_N, MAX_LABELLED_BOOKS, MAX_TOP_N

PREFIX = "cloze"
VIEW_SETTING = "charts.cloze.view"  # the chart and its choices, kept in the project
ALL_MODELS = "all"
NO_COLOUR = ""
BUILT_IN_GROUPS = ["decade", "source"]
#: which controls each chart uses (besides "leave out flagged books", which all use)
CONTROLS = {
    "cloze-accuracy": ("model", "colour_by", "top_n"),
    "cloze-categories": ("model", "group_by"),
    "cloze-models": ("model", "model_b"),
    "cloze-year": ("model",),
}
#: registered tables offered by Export table, and what they hold
TABLES = {
    "cloze-passage-results": "Answers per passage (CSV)…",
    "cloze-book-accuracy": "Accuracy per book (CSV)…",
}
CSV_FILES = "CSV tables (*.csv)"
NO_RESULTS = ("No name-cloze results yet. Run the probe on the Probes page, or import published results there; "
              "the charts appear here.")
HOVER_HINT = "Hover over a point to see its book; click it to read the passages and the model's answers."


def _combo(tooltip: str) -> QComboBox:
    combo = QComboBox()
    combo.setToolTip(tooltip)
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
    return combo


class ChartsPage(Page):
    def __init__(self, ops, parent=None):
        super().__init__(ops, parent)
        self.frame = None
        self.passages_dialog: PassagesDialog | None = None
        self.export_op: Operation | None = None
        self.last_export: list[Path] = []
        self.drawing = ops.slot(self)  # the chart asked for last: a newer request replaces one under way
        self._loading_controls = False
        self._project_loaded = None
        self._build()
        self.refresh()

    # ------------------------------------------------------------------ layout
    def _build(self) -> None:
        self.chart = _combo("Which chart")
        for name, spec in registry.charts().items():
            if name.startswith(PREFIX):
                self.chart.addItem(spec.title.split(": ", 1)[-1].capitalize(), name)
                self.chart.setItemData(self.chart.count() - 1, spec.description, Qt.ItemDataRole.ToolTipRole)
        self.model = _combo("The model whose results are drawn")
        self.model_b_label = QLabel("against")
        self.model_b = _combo("The second model (horizontal axis)")
        self.colour_label = QLabel("Colour by")
        self.colour_by = _combo("Colour the books by a tag (set tags on the Library page)")
        self.group_label = QLabel("Group by")
        self.group_by = _combo("Average the books of each value of a tag")
        self.top_n_label = QLabel("Name")
        self.top_n = QSpinBox()
        self.top_n.setRange(1, MAX_TOP_N)
        self.top_n.setValue(DEFAULT_TOP_N)
        self.top_n.setSuffix(" best and worst")
        self.top_n.setKeyboardTracking(False)  # typing 20 draws once, not for 2 and then 20
        self.top_n.setToolTip(f"With more than {MAX_LABELLED_BOOKS} books the chart names this many of the best and "
                              "of the worst books beside the full ranking (hover over any point to name its book)")
        self.exclude_flagged = QCheckBox("Leave out flagged books")
        self.exclude_flagged.setToolTip("Books with fewer passages than asked for (the paper drops them)")

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
        controls.addSpacing(8)
        controls.addWidget(QLabel("Model"))
        controls.addWidget(self.model)
        controls.addWidget(self.model_b_label)
        controls.addWidget(self.model_b)
        controls.addSpacing(8)
        controls.addWidget(self.colour_label)
        controls.addWidget(self.colour_by)
        controls.addWidget(self.group_label)
        controls.addWidget(self.group_by)
        controls.addWidget(self.top_n_label)
        controls.addWidget(self.top_n)
        controls.addSpacing(8)
        controls.addWidget(self.exclude_flagged)
        controls.addStretch(1)

        self.view = ChartView()
        self.view.book_clicked.connect(self.open_passages)
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

        for combo in (self.chart, self.model, self.model_b, self.colour_by, self.group_by):
            combo.currentIndexChanged.connect(self._controls_changed)
        self.exclude_flagged.toggled.connect(self._controls_changed)
        self.top_n.valueChanged.connect(self._controls_changed)

    # ------------------------------------------------------------------ controls
    def chart_name(self) -> str:
        return self.chart.currentData() or "cloze-accuracy"

    def choose(self, *, chart: str | None = None, model: str | None = None, model_b: str | None = None,
               colour_by: str | None = None, group_by: str | None = None, exclude_flagged: bool | None = None,
               top_n: int | None = None) -> None:
        """Set several controls at once and draw once (tests and the command line use this too)."""
        self._loading_controls = True
        if chart is not None and chart != self.chart_name():
            index = self.chart.findData(chart)
            if index < 0:
                self._loading_controls = False
                raise UserError(f"'{chart}' is not one of the choices here.")
            self.chart.setCurrentIndex(index)
            self._load_controls()  # the choices depend on the chart ("all models" for categories)
            self._loading_controls = True
        for combo, value in ((self.model, model), (self.model_b, model_b),
                             (self.colour_by, colour_by), (self.group_by, group_by)):
            if value is not None:
                index = combo.findData(value)
                if index < 0:
                    self._loading_controls = False
                    raise UserError(f"'{value}' is not one of the choices here.")
                combo.setCurrentIndex(index)
        if exclude_flagged is not None:
            self.exclude_flagged.setChecked(exclude_flagged)
        if top_n is not None:
            self.top_n.setValue(top_n)
        self._loading_controls = False
        self._controls_changed()

    def options(self) -> dict[str, Any]:
        """The registry options of the chart as the controls set them."""
        name = self.chart_name()
        options: dict[str, Any] = {"exclude_flagged": self.exclude_flagged.isChecked()}
        if name == "cloze-models":
            options.update(model_a=self.model.currentData(), model_b=self.model_b.currentData())
        else:
            options["model"] = self.model.currentData()
        if name == "cloze-accuracy":
            options["color_by"] = self.colour_by.currentData() or None
            options["top_n"] = self.top_n.value()
        if name == "cloze-categories":
            options["tag"] = self.group_by.currentData()
        return options

    def models_shown(self) -> list[str] | None:
        """The models the chart draws (None: all), for the passages dialog and table exports."""
        options = self.options()
        if "model_a" in options:
            return [m for m in (options["model_a"], options["model_b"]) if m]
        model = options.get("model")
        return None if model in (None, ALL_MODELS) else [model]

    @staticmethod
    def _fill_combo(combo: QComboBox, items: list[tuple[str, Any]], *wanted: Any) -> None:
        """Refill ``combo`` and choose the first of ``wanted`` it offers (else its first item)."""
        combo.clear()
        for text, data in items:
            combo.addItem(text, data)
        for value in wanted:
            index = combo.findData(value)
            if value is not None and index >= 0:
                combo.setCurrentIndex(index)
                return

    def _load_controls(self, saved: dict | None = None) -> None:
        """Fill the choices from the project; ``saved`` (a project just opened) wins over what is shown."""
        from workbench.corpus.library import tag_keys
        from workbench.probes.cloze.analysis import model_labels
        from workbench.probes.cloze.model_choice import models_by_preference

        self._loading_controls = True
        saved = saved or {}
        if saved.get("chart") is not None and self.chart.findData(saved["chart"]) >= 0:
            self.chart.setCurrentIndex(self.chart.findData(saved["chart"]))
        if "exclude_flagged" in saved:
            self.exclude_flagged.setChecked(bool(saved["exclude_flagged"]))
        if saved.get("top_n") is not None:
            self.top_n.setValue(int(saved["top_n"]))

        def wanted(combo: QComboBox, key: str, *fallbacks: Any) -> tuple:
            current = combo.currentData()
            return (saved.get(key), current, *fallbacks) if saved else (current, *fallbacks)

        labels = model_labels(self.project) if self.project is not None else []
        tags = tag_keys(self.project) if self.project is not None else []
        model_items = [(m, m) for m in labels]
        if self.chart_name() == "cloze-categories" and len(labels) > 1:
            model_items = [("all models", ALL_MODELS)] + model_items
        chosen = [m for m in wanted(self.model, "model") if m in {data for _, data in model_items}]
        # nothing chosen yet (or no longer there): the default model (model_choice), not the first label
        order = labels if chosen else models_by_preference(self.project) if self.project is not None else []
        self._fill_combo(self.model, model_items, *chosen, *order)
        others = [m for m in order if m != self.model.currentData()]
        self._fill_combo(self.model_b, [(m, m) for m in labels], *wanted(self.model_b, "model_b"),
                         others[0] if others else None)
        if self.model_b.currentData() == self.model.currentData() and others:
            self.model_b.setCurrentIndex(self.model_b.findData(others[0]))
        groups = [(t, t) for t in tags] + [(g, g) for g in BUILT_IN_GROUPS if g not in tags]
        self._fill_combo(self.colour_by, [("one colour", NO_COLOUR)] + groups, *wanted(self.colour_by, "colour_by"))
        self._fill_combo(self.group_by, groups, *wanted(self.group_by, "group_by"), tags[0] if tags else "decade")
        uses = CONTROLS.get(self.chart_name(), ("model",))
        for widgets, used in (((self.model_b_label, self.model_b), "model_b" in uses),
                              ((self.colour_label, self.colour_by), "colour_by" in uses),
                              ((self.group_label, self.group_by), "group_by" in uses),
                              ((self.top_n_label, self.top_n), "top_n" in uses)):
            for widget in widgets:
                widget.setVisible(used)
        self._loading_controls = False

    def _controls_changed(self, *_) -> None:
        if self._loading_controls:
            return
        self._load_controls()  # the model list depends on the chart (all models for categories)
        self._remember()
        self.redraw()

    def _remember(self) -> None:
        """Keep the chart's settings in the project, so it opens on the same view next time."""
        if self.project is None:
            return
        view = {"chart": self.chart_name(), "model": self.model.currentData(), "model_b": self.model_b.currentData(),
                "colour_by": self.colour_by.currentData(), "group_by": self.group_by.currentData(),
                "exclude_flagged": self.exclude_flagged.isChecked(), "top_n": self.top_n.value()}
        if view != self.project.get_setting(VIEW_SETTING):
            self.project.set_setting(VIEW_SETTING, view)

    # ------------------------------------------------------------------ drawing
    def refresh(self) -> None:
        opened = self.project is not self._project_loaded
        self._project_loaded = self.project
        saved = self.project.get_setting(VIEW_SETTING, {}) if opened and self.project is not None else None
        self._load_controls(saved)
        has_results = self.project is not None and self.model.count() > 0
        for widget in (self.export_button, self.table_button):
            widget.setEnabled(has_results)
        if self.isVisible():
            self.redraw()

    def on_shown(self) -> None:
        self.refresh()
        if not self.isVisible():  # the window itself is not shown yet (a screenshot being prepared)
            self.redraw()

    def redraw(self) -> Operation | None:
        """Build the chart's frame (and its caption) in the background, then draw it."""
        if self.project is None:
            self.drawing.drop()
            self.view.show_message("Open or create a project (File menu) to see its charts.")
            return None
        if self.model.count() == 0:
            self.drawing.drop()
            self.view.show_message(NO_RESULTS)
            return None
        from workbench.probes.cloze.chart_notes import chart_note, empty_note

        project, name, options = self.project, self.chart_name(), self.options()
        spec = registry.chart(name)

        def work(state):
            frame = spec.frame(project, **options)
            note = chart_note(project, name, frame, **options) if not frame.empty else \
                empty_note(project, name, **options)
            return name, options, frame, note

        return self.drawing.start(work, label="Drawing the chart", project=project, on_done=self._draw,
                                  on_error=self._draw_failed)

    def _draw_failed(self, message: str, _details: str) -> None:
        self.view.show_message(message)

    def _draw(self, result) -> None:
        name, options, frame, note = result
        self.frame = frame
        for widget in (self.export_button, self.table_button):  # an export of nothing would only fail
            widget.setEnabled(not frame.empty)
        if frame.empty:
            self.view.show_message(note)
            return
        if name == "cloze-accuracy":
            self.view.show_accuracy(frame, options.get("color_by"))
            self.top_n.setEnabled(len(frame) > MAX_LABELLED_BOOKS)  # a few books are all named anyway
        elif name == "cloze-categories":
            self.view.show_categories(frame)
        elif name == "cloze-models":
            self.view.show_models(frame)
        else:
            self.view.show_year(frame)
        self.view.set_caption(note)

    # ------------------------------------------------------------------ passages of a book
    def open_passages(self, picked: dict) -> Operation | None:
        if self.project is None:
            return None
        from workbench.probes.cloze.analysis import passage_results

        project, book_id, models = self.project, int(picked["book_id"]), picked.get("models") or None

        book = picked["book"]

        def work(state):
            frame = passage_results(project, models)
            return book, frame[frame["book_id"] == book_id]

        return self.ops.run(work, label="Reading the passages", project=project, on_done=self._show_passages,
                            on_error=self.show_error)

    def _show_passages(self, result: tuple) -> None:
        book, frame = result
        if self.passages_dialog is not None:
            self.passages_dialog.close()
        self.passages_dialog = PassagesDialog(book, frame, self)
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
        project, name, options = self.project, self.chart_name(), self.options()
        return self._export(lambda state: registry.export_chart(project, name, out, **options), "Exporting the chart")

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
                   "exclude_flagged": self.exclude_flagged.isChecked()}
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
