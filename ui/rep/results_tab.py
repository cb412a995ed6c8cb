"""The Results tab: statistics table, interactive charts, the completions behind a clicked bar, exports.

The charts are those the export registry shows here (``page="rep.results"``), chosen by their titles, with
controls built from their options, each drawn by its own ``draw`` in a ``ChartView`` from the counts this tab
has made (handed to the chart's frame function, so nothing is counted twice)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from ui import wording
from ui.widgets.cells_table import fill_table
from ui.widgets.chart_controls import ChartControls
from ui.widgets.chart_view import ChartView
from ui.widgets.figure_file import ask_figure_path
from ui.widgets.page import ProjectView
from ui.widgets.table_filling import filling
from workbench.errors import UserError
from workbench.export.registry import charts_for, write_csv
from workbench.probes.rep import views
from workbench.probes.rep.classify import LEXICAL, classifier_choices
from workbench.probes.rep.views import RepCounts, ResultsChoices, ResultsShown

if TYPE_CHECKING:
    import pandas as pd

PAGE = "rep.results"  # the charts of the export registry shown here
TABLES = tuple(views.TABLES.values())  # as the table list offers them


class ResultsTab(ProjectView):
    """The page's choices are ``self.choices`` (a ``views.ResultsChoices``): each control updates it, and what
    is shown is what the core's queries give for it. With six decades and twenty roles the tests and trends
    take seconds (a hundred and more regressions): they are computed on a worker, once per count, and kept
    until the counts change."""

    def __init__(self, ops, parent: QWidget | None = None):
        super().__init__(ops, parent)
        self.counting = ops.slot(self)  # classify and count: a recount replaces the one under way
        self.table_work = ops.slot(self)  # one table computed for the counts on show
        self.counted = RepCounts()  # the counts on show (of ``counted.classifier``)
        # for the counts shown: table key -> (frame, view); chart key -> frame or why there is none
        self._tables: dict[tuple, tuple[pd.DataFrame, pd.DataFrame]] = {}
        self._charts: dict[tuple, pd.DataFrame | str] = {}
        self.specs = {spec.name: spec for spec in charts_for(PAGE)}
        self.classifier = QComboBox()
        self.classifier.setObjectName("rep-classifier")
        self.classifier.setToolTip("Where the labels come from: the word lists of each set (no model needed, see "
                                   "the Sets tab), or a judge model run on the Classify tab")
        self.classifier.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.classifier.currentIndexChanged.connect(self._classifier_chosen)
        self.chart = QComboBox()
        self.chart.setObjectName("rep-view")
        for name, spec in self.specs.items():
            self.chart.addItem(spec.short_title, name)
            self.chart.setItemData(self.chart.count() - 1, spec.description, Qt.ItemDataRole.ToolTipRole)
        self.chart.currentIndexChanged.connect(self._chart_chosen)
        self.controls = ChartControls()
        self.controls.changed.connect(self._option_chosen)
        self.table_choice = QComboBox()
        self.table_choice.setObjectName("rep-table-choice")
        for key, title in views.TABLES.items():
            self.table_choice.addItem(title, key)
        self.table_choice.currentIndexChanged.connect(self._table_chosen)
        self.export_figure_button = QPushButton("Export figure…")
        self.export_figure_button.clicked.connect(self.export_figure_dialog)
        self.export_table_button = QPushButton("Export table (CSV)…")
        self.export_table_button.clicked.connect(self.export_table_dialog)
        self.plot = ChartView(self.ops)
        self.plot.picked.connect(self.show_responses)
        self.plot.drawn.connect(self._drawn)
        self.table = QTableWidget()
        self.table.setObjectName("rep-stats-table")
        self.table_status = QLabel("")
        self.table_status.setObjectName("rep-table-status")
        self.table_status.setWordWrap(True)
        self.table_status.hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.responses = QTableWidget()
        self.responses.setObjectName("rep-responses")
        self.responses.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.responses_label = QLabel("Click a bar, point or cell to see the completions behind it.")
        self.summary = QLabel("")
        self.summary.setObjectName("rep-summary")
        self.summary.setWordWrap(True)

        controls = QHBoxLayout()
        for label, widget in ((QLabel("Labels from"), self.classifier), (QLabel("Chart"), self.chart)):
            controls.addWidget(label)
            controls.addWidget(widget)
        controls.addWidget(self.controls, 1)
        controls.addWidget(self.export_figure_button)
        table_controls = QHBoxLayout()
        table_controls.addWidget(QLabel("Table"))
        self.table_choice.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.table_choice.setMinimumContentsLength(14)
        table_controls.addWidget(self.table_choice, 1)
        table_controls.addWidget(self.export_table_button)
        table_side = QWidget()
        table_layout = QVBoxLayout(table_side)
        table_layout.setContentsMargins(0, 0, 0, 0)
        table_layout.addLayout(table_controls)
        table_layout.addWidget(self.table_status)
        table_layout.addWidget(self.table, 1)
        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.plot)
        top.addWidget(table_side)
        top.setSizes([620, 480])
        top.setStretchFactor(0, 3)  # the chart keeps room for its legend on a small screen
        top.setStretchFactor(1, 2)
        bottom = QWidget()
        bottom_layout = QVBoxLayout(bottom)
        bottom_layout.setContentsMargins(0, 0, 0, 0)
        bottom_layout.addWidget(self.responses_label)
        bottom_layout.addWidget(self.responses, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(bottom)
        split.setSizes([520, 130])
        # charts and tables take the room that is left; their preferred sizes would make the page taller
        # than the window (and, through the tab widget, every other tab too)
        split.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Ignored)
        split.setMinimumHeight(320)
        layout = QVBoxLayout(self)
        layout.addLayout(controls)
        layout.addWidget(self.summary)
        layout.addWidget(split, 1)
        self.choices = ResultsChoices(chart=self.chart.currentData() or next(iter(self.specs)))
        self._view_changed(redraw=False)

    # ------------------------------------------------------------------ the choices
    def _choose(self, **changes) -> None:
        self.choices = self.choices.replace(**changes)

    def _classifier_chosen(self, _index: int = -1) -> None:
        self._choose(classifier=self.classifier.currentData() or LEXICAL)
        self.compute()

    def _table_chosen(self, _index: int = -1) -> None:
        self._choose(table=self.table_choice.currentData() or "shares")
        self.show_table()

    def _chart_chosen(self, _index: int = -1) -> None:
        self._choose(chart=self.chart.currentData() or next(iter(self.specs)))
        self._view_changed()

    def _option_chosen(self) -> None:
        self._choose(chart_options=self.controls.values())
        self.redraw()

    # ------------------------------------------------------------------ computing
    @property
    def counts(self) -> pd.DataFrame:
        return self.counted.counts

    @property
    def classified(self) -> pd.DataFrame:
        return self.counted.classified

    @property
    def names(self) -> dict[tuple[str, str], str]:
        """(demographic, role) -> the role's name."""
        return self.counted.names

    @property
    def computed_for(self) -> str | None:
        """The classifier of the counts on show (None before any count)."""
        return self.counted.classifier if self.counted.key else None

    def classifier_key(self) -> str:
        """The chosen classifier as the core names it ('lexical', 'judge:MODEL')."""
        return self.choices.classifier

    def refresh(self) -> None:
        project = self.project
        current = self.choices.classifier
        self.classifier.blockSignals(True)
        self.classifier.clear()
        if project is not None:
            for key in classifier_choices(project):
                self.classifier.addItem(wording.classifier(key), key)
            if self.classifier.findData(current) >= 0:
                self.classifier.setCurrentIndex(self.classifier.findData(current))
        self.classifier.blockSignals(False)
        self._choose(classifier=self.classifier.currentData() or LEXICAL)
        self.compute()

    def choose_classifier(self, classifier: str) -> None:
        if self.classifier.findData(classifier) < 0:
            self.classifier.addItem(wording.classifier(classifier), classifier)
        self.classifier.setCurrentIndex(self.classifier.findData(classifier))

    def choose_table(self, key: str) -> None:
        """Show the table ``key`` (one of ``views.TABLES``: shares, tests, trends, spread)."""
        index = self.table_choice.findData(key)
        if index < 0:
            raise UserError(f"'{key}' is not one of the tables here.")
        self.table_choice.setCurrentIndex(index)

    def compute(self) -> None:
        """Classify and count in the background, with the table and chart on show; draw when done."""
        project = self.project
        if project is None:
            self.counting.drop()
            self.table_work.drop()
            self.table_status.hide()
            self.counted = RepCounts()
            self._tables, self._charts = {}, {}
            self.plot.show_message("Open a project to see REP results.")
            return
        choices = self.choices
        self.counting.start(lambda state: views.results_on_show(project, choices),
                            label="Counting REP results", project=project, background_read=True,
                            on_error=self.show_error, on_done=self._computed)

    def _computed(self, result: ResultsShown) -> None:
        self.table_work.drop()  # a table still computed for the counts before would not fit these
        self.counted = result.counted
        self._tables = {result.choices.table_key(): result.table}
        self._charts = {result.choices.chart_key(): result.chart_frame}
        self._fill_choices(result.choices.options if result.choices.chart == self.choices.chart else None)
        self.summary.setText(views.results_summary(result.counted))
        self.redraw()
        self.show_table()

    def _view_changed(self, redraw: bool = True) -> None:
        """Another chart: its own controls (what was chosen for the one before kept where it applies)."""
        self._fill_choices()
        if redraw:
            self.redraw()

    def _fill_choices(self, wanted: dict | None = None) -> None:
        context = views.chart_context(self.counted)
        self.controls.set_chart(self.specs[self.choices.chart].options, self.project,
                                self.choices.options if wanted is None else wanted, context=context)
        self._choose(chart_options=self.controls.values())

    def choose_chart(self, name: str) -> None:
        """Show the chart ``name`` (its title is what the list shows)."""
        index = self.chart.findData(name)
        if index < 0:
            raise UserError(f"'{name}' is not one of the charts here.")
        self.chart.setCurrentIndex(index)

    # ------------------------------------------------------------------ showing
    def chart_name(self) -> str:
        return self.choices.chart

    def chart_options(self) -> dict[str, str]:
        """The chart's options as chosen, and the classifier whose labels it draws."""
        return {"classifier": self.computed_for or LEXICAL, **self.choices.options}

    def redraw(self) -> None:
        if self.counted.empty:
            self.plot.show_message("No REP results yet: run the prompts on the Runs tab.")
            return
        name, options = self.chart_name(), self.chart_options()
        frame = self._charts.get(views.chart_key(name, options))
        if isinstance(frame, str):
            self.plot.show_message(frame)
            return
        data = {"counts": self.counted.counts, "role_names": self.counted.names}
        self.plot.show_chart(self.project, name, options, data=data, frame=frame)

    def _drawn(self, drawn) -> None:
        """Keep the frame drawn (or why there was none) for these counts, so showing it again computes nothing."""
        self._charts.setdefault(views.chart_key(drawn.name, drawn.options), drawn.message or drawn.frame)

    def table_frame(self) -> pd.DataFrame:
        """The chosen table as computed (computed here if the background has not done it yet)."""
        return self._table(self.choices)[0]

    def table_view(self) -> pd.DataFrame:
        """What the table shows: the chosen table in plain words (the CSV export keeps ``table_frame``)."""
        return self._table(self.choices)[1]

    def _table(self, choices: ResultsChoices) -> tuple[pd.DataFrame, pd.DataFrame]:
        key = choices.table_key()
        if key not in self._tables:
            self._tables[key] = views.results_tables_from(self.counted, choices)
        return self._tables[key]

    def show_table(self) -> None:
        """Show the chosen table: at once when it is computed, else after a worker has computed it."""
        choices, counted = self.choices, self.counted
        if choices.table_key() in self._tables or counted.empty or self.project is None:
            self.table_work.drop()  # the table on show is the one chosen last
            self._show_table(self._table(choices)[1])
            return
        self.table_status.setText(f"Computing “{choices.table_title}”…")
        self.table_status.show()
        self.table.setRowCount(0)  # not the previous table's rows under this table's name
        self.table_work.start(lambda state: (choices, views.results_tables_from(counted, choices)),
                              label="Computing REP statistics", project=self.project, background_read=True,
                              on_error=self.show_error, on_done=self._table_computed)

    def _table_computed(self, computed: tuple[ResultsChoices, tuple[pd.DataFrame, pd.DataFrame]]) -> None:
        choices, table = computed
        self._tables[choices.table_key()] = table
        self._show_table(table[1])

    def _show_table(self, view: pd.DataFrame) -> None:
        self.table_status.hide()
        with filling(self.table):
            fill_table(self.table, view)

    def show_responses(self, selection: dict) -> None:
        view = views.picked_responses(self.counted, selection)
        self.responses_label.setText(f"{len(view):,} completion(s): {self._describe(selection)}")
        with filling(self.responses):
            fill_table(self.responses, view)

    def _describe(self, selection: dict) -> str:
        """{'year': 1950, 'role': 'top_student', 'category': 'woman'} -> 'the 1950s, best student, woman'."""
        parts = []
        if "model" in selection:
            parts.append(f"model {selection['model']}")
        if "year" in selection:
            parts.append(f"the {int(selection['year'])}s")
        if "role" in selection:
            key = (selection.get("demographic"), selection["role"])
            parts.append(self.names.get(key) or wording.role_key(selection["role"]))
        if "category" in selection:
            category = selection["category"]
            parts.append("judge gave no label" if category == "unparsed" else f"category {category}")
        return ", ".join(parts)

    # ------------------------------------------------------------------ exporting
    def export_figure_dialog(self) -> None:
        project = self.require_project()
        if project is None:
            return
        out = ask_figure_path(self, project.path.parent / f"{self.chart_name()}.pdf")
        if out is not None:
            self.export_figure(str(out))

    def export_figure(self, path: str) -> None:
        """Write the chart on screen (the frame drawn, by the same ``draw``) and its CSV."""
        project = self.require_project()
        if project is None:
            return
        work = self.plot.export_work(path, project)
        if work is None:
            self.show_error("There is no chart on screen to export yet.")
            return
        self.ops.run(work, label="Exporting the figure", project=project, on_error=self.show_error,
                     on_done=self._figure_written)

    def _figure_written(self, paths) -> None:
        self.summary.setText("Wrote " + " and ".join(map(str, paths)) + ".")

    def export_table_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export the table", "rep-table.csv", "CSV (*.csv)")
        if path:
            self.export_table(path)

    def export_table(self, path: str) -> None:
        """Write the chosen table, as computed (shares as fractions, both interval ends), to a CSV file."""
        choices, counted = self.choices, self.counted
        if choices.table_key() in self._tables or counted.empty or self.project is None:
            self._write_table(self._table(choices)[0], path)
            return
        self.ops.run(lambda state: (views.results_frame_from(counted, choices), path),
                     label="Computing REP statistics", project=self.project, on_error=self.show_error,
                     on_done=self._table_for_file)

    def _table_for_file(self, result: tuple[pd.DataFrame, str]) -> None:
        self._write_table(*result)

    def _write_table(self, frame: pd.DataFrame, path: str) -> None:
        try:
            write_csv(frame, path)
        except UserError as exc:
            self.show_error(str(exc))
            return
        except OSError as exc:
            self.show_error(f"Could not write {path}: {exc.strerror or exc}. Choose another folder or name.")
            return
        self.summary.setText(f"Wrote {path}.")
