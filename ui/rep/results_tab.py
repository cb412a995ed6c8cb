"""The Results tab: statistics table, interactive charts, the completions behind a clicked bar, exports.

The charts are those the export registry shows here (``page="rep.results"``), chosen by their titles, with
controls built from their options, each drawn by its own ``draw`` in a ``ChartView`` from the counts this tab
has made (handed to the chart's frame function, so nothing is counted twice)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
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
from ui.rep import views
from ui.widgets.cells_table import fill_table
from ui.widgets.chart_controls import ChartControls
from ui.widgets.chart_view import ChartView
from ui.widgets.figure_file import ask_figure_path
from ui.widgets.page import ProjectView
from ui.widgets.table_filling import filling
from workbench.errors import UserError
from workbench.export.registry import chart, charts_for, chosen_options, write_csv
from workbench.probes.rep import stats
from workbench.probes.rep.classify import LEXICAL, classifier_choices, select_responses
from workbench.probes.rep.role_names import role_names

PAGE = "rep.results"  # the charts of the export registry shown here
TABLES = ("Shares with 95% intervals", "Tests across decades", "Quadratic trends", "Spread per demographic")


# ---------------------------------------------------------------------------------------------- off the GUI thread
# With six decades and twenty roles the tests and trends take seconds (a hundred and more regressions):
# they are computed on a worker, once per count, and kept until the counts change.
def table_frame_of(counts: pd.DataFrame, choice: str) -> pd.DataFrame:
    """The table ``choice`` (one of ``TABLES``) from a counts table, as computed (what the CSV export writes)."""
    if counts.empty:
        return pd.DataFrame()
    if choice == TABLES[0]:
        columns = ["model", "decade", "demographic", "role", "category", "count", "n", "share", "ci_low",
                   "ci_high", "unparsed", "failed", "small_sample"]
        return stats.with_shares(counts)[columns]
    if choice == TABLES[1]:
        return stats.decade_tests(counts)
    if choice == TABLES[2]:
        return stats.trends(counts)[0]
    return stats.spread(stats.with_shares(counts))


def table_view_of(frame: pd.DataFrame, choice: str, names: dict[tuple[str, str], str]) -> pd.DataFrame:
    """What the window shows of ``frame``: the table in plain words."""
    if frame.empty:
        return frame
    if choice == TABLES[0]:
        return views.shares_view(frame, names)
    if choice == TABLES[1]:
        return views.decade_tests_view(frame, names)
    if choice == TABLES[2]:
        return views.trends_view(frame, names)
    return views.spread_view(frame)


def table_of(counts: pd.DataFrame, choice: str, names: dict[tuple[str, str], str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the table as computed, the table as shown)."""
    frame = table_frame_of(counts, choice)
    return frame, table_view_of(frame, choice, names)


def chart_frame_of(project, name: str, options: dict, context: dict) -> pd.DataFrame | str:
    """What the chart ``name`` plots for ``options``, from the counts in ``context``; or why it cannot."""
    try:
        return chart(name).frame(project, **options, **context)
    except UserError as exc:
        return str(exc)


def chart_key(name: str, options: dict) -> tuple:
    """What a chart's frame is kept under: the chart and its options (the classifier among them)."""
    return (name, tuple(sorted((k, str(v)) for k, v in options.items())))


@dataclass
class Computed:
    """One background count: the classifier, the counts, the completions behind them, the role names, and
    the table and chart the tab was showing when it was asked for (so nothing heavy is left for the GUI
    thread)."""

    classifier: str
    counts: pd.DataFrame
    classified: pd.DataFrame
    names: dict[tuple[str, str], str]
    table_choice: str
    table: tuple[pd.DataFrame, pd.DataFrame]
    chart: str
    chart_options: dict
    chart_frame: pd.DataFrame | str


def compute_results(project, classifier: str, table_choice: str, name: str, wanted: dict) -> Computed:
    counts, classified = stats.counts_and_responses(project, classifier)
    names = role_names(classified)
    context = {"classifier": classifier, "counts": counts, "role_names": names}
    options = chosen_options(chart(name).options, project, wanted, context)
    return Computed(classifier, counts, classified, names, table_choice, table_of(counts, table_choice, names),
                    name, options, chart_frame_of(project, name, options, context))


@dataclass
class ComputedTable:
    """One table computed on a worker for the counts on show."""

    choice: str
    table: tuple[pd.DataFrame, pd.DataFrame]


def compute_table(counts: pd.DataFrame, choice: str, names: dict[tuple[str, str], str]) -> ComputedTable:
    return ComputedTable(choice, table_of(counts, choice, names))


class ResultsTab(ProjectView):
    def __init__(self, ops, parent: QWidget | None = None):
        super().__init__(ops, parent)
        self.counting = ops.slot(self)  # classify and count: a recount replaces the one under way
        self.table_work = ops.slot(self)  # one table computed for the counts on show
        self.counts = pd.DataFrame()
        self.classified = pd.DataFrame()
        self.names: dict[tuple[str, str], str] = {}  # (demographic, role) -> the role's name
        self.computed_for: str | None = None
        # for the counts shown: table choice -> (frame, view); chart_key -> frame or why there is none
        self._tables: dict[str, tuple[pd.DataFrame, pd.DataFrame]] = {}
        self._charts: dict[tuple, pd.DataFrame | str] = {}
        self.specs = {spec.name: spec for spec in charts_for(PAGE)}
        self.classifier = QComboBox()
        self.classifier.setObjectName("rep-classifier")
        self.classifier.setToolTip("Where the labels come from: the word lists of each set (no model needed, see "
                                   "the Sets tab), or a judge model run on the Classify tab")
        self.classifier.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.classifier.currentIndexChanged.connect(lambda _i: self.compute())
        self.chart = QComboBox()
        self.chart.setObjectName("rep-view")
        for name, spec in self.specs.items():
            self.chart.addItem(spec.short_title, name)
            self.chart.setItemData(self.chart.count() - 1, spec.description, Qt.ItemDataRole.ToolTipRole)
        self.chart.currentIndexChanged.connect(lambda _i: self._view_changed())
        self.controls = ChartControls()
        self.controls.changed.connect(self._choice_changed)
        self.table_choice = QComboBox()
        self.table_choice.setObjectName("rep-table-choice")
        self.table_choice.addItems(TABLES)
        self.table_choice.currentTextChanged.connect(lambda _t: self.show_table())
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
        self._view_changed(redraw=False)

    # ------------------------------------------------------------------ computing
    def classifier_key(self) -> str:
        """The chosen classifier as the core names it ('lexical', 'judge:MODEL')."""
        return self.classifier.currentData() or LEXICAL

    def refresh(self) -> None:
        project = self.project
        current = self.classifier.currentData()
        self.classifier.blockSignals(True)
        self.classifier.clear()
        if project is not None:
            for key in classifier_choices(project):
                self.classifier.addItem(wording.classifier(key), key)
            if current and self.classifier.findData(current) >= 0:
                self.classifier.setCurrentIndex(self.classifier.findData(current))
        self.classifier.blockSignals(False)
        self.compute()

    def choose_classifier(self, classifier: str) -> None:
        if self.classifier.findData(classifier) < 0:
            self.classifier.addItem(wording.classifier(classifier), classifier)
        self.classifier.setCurrentIndex(self.classifier.findData(classifier))

    def compute(self) -> None:
        """Classify and count in the background, with the table and chart on show; draw when done."""
        project = self.project
        if project is None:
            self.counting.drop()
            self.table_work.drop()
            self.table_status.hide()
            self.counts, self.classified = pd.DataFrame(), pd.DataFrame()
            self._tables, self._charts = {}, {}
            self.plot.show_message("Open a project to see REP results.")
            return
        classifier = self.classifier_key()
        choice, name, wanted = self.table_choice.currentText(), self.chart_name(), self.controls.values()
        self.counting.start(lambda state: compute_results(project, classifier, choice, name, wanted),
                            label="Counting REP results", project=project, background_read=True,
                            on_error=self.show_error, on_done=self._computed)

    def _computed(self, result: Computed) -> None:
        self.table_work.drop()  # a table still computed for the counts before would not fit these
        classifier, counts, classified = result.classifier, result.counts, result.classified
        self.counts, self.classified, self.computed_for = counts, classified, classifier
        self.names = result.names
        self._tables = {result.table_choice: result.table}
        self._charts = {chart_key(result.chart, {"classifier": classifier, **result.chart_options}): result.chart_frame}
        self._fill_choices(result.chart_options if result.chart == self.chart_name() else None)
        if classified.empty:
            self.summary.setText("No REP completions yet: tick models on the Runs tab and press Run the prompts.")
        else:
            outcomes = classified["outcome"].value_counts()
            parts = [f"{int(n):,} {views.OUTCOMES.get(o, o)}" for o, n in outcomes.items()]
            source = "the word lists" if classifier == LEXICAL else f"the judge {classifier.partition(':')[2]}"
            models = classified["model"].nunique()
            self.summary.setText(f"{len(classified):,} completions from {models} model(s), labels from {source}: "
                                 + ", ".join(parts) + "." + self._unparsed_hint(outcomes))
        self.redraw()
        self.show_table()

    @staticmethod
    def _unparsed_hint(outcomes: pd.Series) -> str:
        unparsed, total = int(outcomes.get("unparsed", 0)), int(outcomes.sum())
        if total and unparsed / total >= 0.5:
            return (" Most judge answers were not one of the labels: try another judge model, or the word lists, "
                    "before reading the shares.")
        return ""

    def _view_changed(self, redraw: bool = True) -> None:
        """Another chart: its own controls (what was chosen for the one before kept where it applies)."""
        self._fill_choices()
        if redraw:
            self.redraw()

    def _choice_changed(self) -> None:
        self.redraw()

    def _context(self) -> dict:
        """What the charts' frames and choices are made from: the classifier and the counts on show."""
        return {"classifier": self.computed_for or LEXICAL, "counts": self.counts, "role_names": self.names}

    def _fill_choices(self, wanted: dict | None = None) -> None:
        context = self._context()
        self.controls.set_chart(self.specs[self.chart_name()].options, self.project,
                                self.controls.values() if wanted is None else wanted, context=context)

    def choose_chart(self, name: str) -> None:
        """Show the chart ``name`` (its title is what the list shows)."""
        index = self.chart.findData(name)
        if index < 0:
            raise UserError(f"'{name}' is not one of the charts here.")
        self.chart.setCurrentIndex(index)

    # ------------------------------------------------------------------ showing
    def chart_name(self) -> str:
        return self.chart.currentData() or next(iter(self.specs))

    def chart_options(self) -> dict[str, str]:
        """The chart's options as chosen, and the classifier whose labels it draws."""
        return {"classifier": self.computed_for or LEXICAL, **self.controls.values()}

    def redraw(self) -> None:
        if self.counts.empty:
            self.plot.show_message("No REP results yet: run the prompts on the Runs tab.")
            return
        name, options = self.chart_name(), self.chart_options()
        frame = self._charts.get(chart_key(name, options))
        if isinstance(frame, str):
            self.plot.show_message(frame)
            return
        data = {"counts": self.counts, "role_names": self.names}
        self.plot.show_chart(self.project, name, options, data=data, frame=frame)

    def _drawn(self, drawn) -> None:
        """Keep the frame drawn (or why there was none) for these counts, so showing it again computes nothing."""
        self._charts.setdefault(chart_key(drawn.name, drawn.options), drawn.message or drawn.frame)

    def table_frame(self) -> pd.DataFrame:
        """The chosen table as computed (computed here if the background has not done it yet)."""
        return self._table(self.table_choice.currentText())[0]

    def table_view(self) -> pd.DataFrame:
        """What the table shows: the chosen table in plain words (the CSV export keeps ``table_frame``)."""
        return self._table(self.table_choice.currentText())[1]

    def _table(self, choice: str) -> tuple[pd.DataFrame, pd.DataFrame]:
        if choice not in self._tables:
            self._tables[choice] = table_of(self.counts, choice, self.names)
        return self._tables[choice]

    def show_table(self) -> None:
        """Show the chosen table: at once when it is computed, else after a worker has computed it."""
        choice = self.table_choice.currentText()
        if choice in self._tables or self.counts.empty or self.project is None:
            self.table_work.drop()  # the table on show is the one chosen last
            self._show_table(choice, self._table(choice)[1])
            return
        counts, names = self.counts, self.names
        self.table_status.setText(f"Computing “{choice}”…")
        self.table_status.show()
        self.table.setRowCount(0)  # not the previous table's rows under this table's name
        self.table_work.start(lambda state: compute_table(counts, choice, names), label="Computing REP statistics",
                              project=self.project, background_read=True, on_error=self.show_error,
                              on_done=self._table_computed)

    def _table_computed(self, computed: ComputedTable) -> None:
        self._tables[computed.choice] = computed.table
        self._show_table(computed.choice, computed.table[1])

    def _show_table(self, choice: str, view: pd.DataFrame) -> None:
        self.table_status.hide()
        with filling(self.table):
            fill_table(self.table, view)

    def show_responses(self, selection: dict) -> None:
        rows = select_responses(self.classified, **selection)
        self.responses_label.setText(f"{len(rows):,} completion(s): {self._describe(selection)}")
        with filling(self.responses):
            fill_table(self.responses, views.responses_view(rows, self.names))

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
        choice = self.table_choice.currentText()
        if choice in self._tables or self.counts.empty or self.project is None:
            self._write_table(self._table(choice)[0], path)
            return
        counts = self.counts
        self.ops.run(lambda state: (table_frame_of(counts, choice), path), label="Computing REP statistics",
                     project=self.project, on_error=self.show_error, on_done=self._table_for_file)

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
