"""The Validity page: does what a model has memorized bias the answers a study would use?

1. Passages: tick books and sample passages of whole sentences from them, or import passages (with the
   year of publication and reference minutes) from a file; make a blinded annotation task of them.
2. Ask: choose the task (year of first publication, narrative time) and a model, and run it in the
   background (progress, Cancel; paid APIs first say what the run costs and ask), or import answers.
3. Analyse: choose whose answers, which model's name-cloze accuracy groups the books (top and bottom
   decile or quintile) and, for narrative time, the reference; or the name-cloze error analysis. The
   tables and the chart come back together; clicking a point or a row opens the answers behind it, and
   the figure (PDF, SVG, PNG) and tables export through the export registry.

Every action is a call into ``workbench.probes.validity`` (and, for the error analysis, the name-cloze
probe's ``errors``), run through the page's operation slot.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ui.background import Operation
from ui.validity.answers_dialog import AnswersDialog
from ui.validity.books import PassagesBox
from ui.widgets.chart_view import ChartView
from ui.widgets.combo import refill
from ui.widgets.figure_file import ask_figure_path
from ui.widgets.frame_table import Column, FrameTable, count, decimal, is_missing, share, yes_only
from ui.widgets.one_operation import OneOperation
from ui.widgets.page import Page
from ui.work_op import WorkOp
from workbench.corpus.book_sets import DEFAULT_DRAWS
from workbench.probes.validity.views import (
    ERRORS,
    NARRATIVE,
    TASKS,
    YEAR,
    ValidityChoices,
    imported_answers_text,
    imported_passages_text,
    sampled_text,
)

if TYPE_CHECKING:
    import pandas as pd

#: what to do about failed passages, on this page
RETRY_HERE = "tick 'Failed only' and run again to retry them"
PAGE = "validity"  # the charts of the export registry shown here (each analysis brings the frames of its own)
CHOICES_SETTING = "validity.choices"
CSV_FILES = "CSV tables (*.csv)"
TABLE_FILES = "Tables (*.tsv *.csv *.txt);;All files (*)"
NO_PROJECT = "Open or create a project (File menu) to test whether memorization biases a model's answers."


def _p(value: Any) -> str:
    return "" if is_missing(value) else (f"{float(value):.2g}" if float(value) < 0.001 else f"{float(value):.3f}")


def _interval(low: str, high: str):
    def write(row: pd.Series) -> str:
        return "" if is_missing(row.get(low)) else f"{float(row[low]):.2f} – {float(row[high]):.2f}"
    return write


def _parse_rate(row: pd.Series) -> str:
    if is_missing(row.get("parse_rate")):
        return ""
    if is_missing(row.get("answers")):  # the difference row: top minus bottom
        return f"{float(row['parse_rate']) * 100:+.0f} points"
    text = f"{float(row['parse_rate']):.0%} of {int(row['answers'])}"
    return text + (f" ({float(row['parse_ci_low']):.0%}–{float(row['parse_ci_high']):.0%})"
                   if not is_missing(row.get("parse_ci_low")) else "")


PARSE_TABLE_COLUMNS = [Column("parse_rate", "Answers read (95% CI)", compose=_parse_rate, numeric=True),
                       Column("approximate", "Read from a span", count, numeric=True)]
SPANS = {"decade": "ranges and decades as their midpoint; centuries missing (default)",
         "century": "ranges, decades and centuries as their midpoint",
         "missing": "single years only; every span missing"}


def _over_draws(low: str, high: str):
    """The 5th-95th percentile over tie draws, or blank when the ties were not drawn."""
    def write(row: pd.Series) -> str:
        if is_missing(row.get("draws")) or not int(row["draws"]) or is_missing(row.get(low)):
            return ""
        return f"{float(row[low]):.2f} – {float(row[high]):.2f}"
    return write


def _names(value: Any) -> str:
    return "" if is_missing(value) else (str(value) if str(value) == "all" else f"{int(value):,}")


def _missing_share(row: pd.Series) -> str:
    if is_missing(row.get("missing_share")):
        return ""
    text = f"{float(row['missing_share']):.0%}"
    return text + (f" ({float(row['missing_ci_low']):.0%}–{float(row['missing_ci_high']):.0%})"
                   if not is_missing(row.get("missing_ci_low")) else "")


TABLE_COLUMNS = {
    YEAR: [Column("group", "Group"), Column("books", "Books", count, numeric=True),
           Column("missing", "Missing", count, numeric=True),
           Column("missing_share", "Missing share (95% CI)", compose=_missing_share, numeric=True),
           Column("mae", "Mean abs. error (years)", decimal, numeric=True),
           Column("mae_ci_low", "95% CI", compose=_interval("mae_ci_low", "mae_ci_high"), numeric=True),
           Column("p_value", "p (permutation)", _p, numeric=True),
           Column("missing_p_value", "p (missing, Fisher)", _p, numeric=True),
           Column("spearman_rho", "Spearman ρ (accuracy, error)", decimal, numeric=True),
           Column("spearman_p", "p", _p, numeric=True),
           Column("mae_p5", "MAE over tie draws (5–95%)", compose=_over_draws("mae_p5", "mae_p95"), numeric=True,
                  optional=True),
           *PARSE_TABLE_COLUMNS, Column("note", "Note", stretch=True)],
    NARRATIVE: [Column("group", "Group"), Column("items", "Passages", count, numeric=True),
                Column("missing", "Missing", count, numeric=True),
                Column("spearman_rho", "Spearman ρ", decimal, numeric=True),
                Column("ci_low", "95% CI", compose=_interval("ci_low", "ci_high"), numeric=True),
                Column("p_value", "p", _p, numeric=True),
                Column("spearman_rho_p5", "ρ over tie draws (5–95%)",
                       compose=_over_draws("spearman_rho_p5", "spearman_rho_p95"), numeric=True, optional=True),
                *PARSE_TABLE_COLUMNS, Column("note", "Note", stretch=True)],
    ERRORS: [Column("grouped_by", "Grouped by"), Column("set_size", "Names per set", _names, numeric=True),
             Column("seen_names", "Names in S", count, numeric=True),
             Column("unseen_names", "Names in U", count, numeric=True), Column("errors", "Errors", count, numeric=True),
             Column("in_seen", "Naming S", count, numeric=True), Column("in_unseen", "Naming U", count, numeric=True),
             Column("log_odds", "Log-odds o", decimal, numeric=True),
             Column("log_odds_p5", "o over tie draws (5–95%)", compose=_over_draws("log_odds_p5", "log_odds_p95"),
                    numeric=True, optional=True),
             Column("p_value", "p", _p, numeric=True),
             Column("permutations", "Deals", count, numeric=True), Column("held_out_books", "Held-out books", count,
                                                                          numeric=True),
             Column("note", "Note", stretch=True)],
}
ROW_COLUMNS = {
    YEAR: [Column("book", "Book", stretch=True), Column("group", "Group"), Column("accuracy", "Accuracy", share,
                                                                                  numeric=True),
           Column("year", "Year", numeric=True), Column("answer", "Answer"), Column("predicted", "Year given",
                                                                                     lambda v: "" if is_missing(v) else f"{float(v):.0f}", numeric=True),
           Column("abs_error", "Abs. error", lambda v: "" if is_missing(v) else f"{float(v):.0f}", numeric=True),
           Column("flag", "Read from"), Column("reason", "Why missing")],
    NARRATIVE: [Column("book", "Book", stretch=True), Column("group", "Group"),
                Column("accuracy", "Accuracy", share, numeric=True),
                Column("reference_minutes", "Reference (min)", decimal, numeric=True), Column("answer", "Answer"),
                Column("predicted_minutes", "Given (min)", decimal, numeric=True), Column("flag", "Read from"),
                Column("reason", "Why missing"),
                Column("source", "Reference from")],
    ERRORS: [Column("set", "Set"), Column("rank", "Rank", numeric=True), Column("name", "Name"),
             Column("pmi", "PMI", decimal, numeric=True), Column("book", "Most associated book", stretch=True),
             Column("passages", "Passages there", count, numeric=True),
             Column("predicted_in_errors", "Offered in errors", count, numeric=True),
             Column("tied_at_cut", "Tied at the set size", yes_only, optional=True)],
}


def _combo(tooltip: str) -> QComboBox:
    combo = QComboBox()
    combo.setToolTip(tooltip)
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(14)
    return combo


class ValidityPage(Page, OneOperation):
    key = "validity"
    title = "Validity"

    def __init__(self, ops, parent=None):
        super().__init__(ops, parent)
        self.work = ops.slot(self)  # sampling, importing, running, analysing: one at a time
        self.work.busy_changed.connect(self._update_busy)
        self.report: dict[str, Any] | None = None
        self.choices = ValidityChoices()  # every option of the analysis, kept as the widgets change
        self.answers_dialog: AnswersDialog | None = None
        self.last_export: list[Path] = []
        self._project_shown = None
        self._pending_analysis = False
        self._build()
        self.refresh()

    # ------------------------------------------------------------------ layout
    def _build(self) -> None:
        self.passages = PassagesBox()
        self.passages.sample_requested.connect(self.sample)
        self.passages.import_requested.connect(self.import_passages_dialog)
        self.passages.annotate_requested.connect(self.annotation_task_dialog)

        self.task = _combo("What the model is asked, or the name-cloze error analysis")
        for key, text in TASKS.items():
            self.task.addItem(text, key)
        self.task.currentIndexChanged.connect(self._task_changed)
        self.ask_model = _combo("The model to ask (paid APIs say what the run costs first)")
        self.ask_model.setPlaceholderText("none yet (Models page)")
        self.run_button = QPushButton("Run")
        self.run_button.setToolTip("Ask the model about every passage of the ticked books (a stopped run continues)")
        self.run_button.clicked.connect(lambda: self.start_run())
        self.retry = QCheckBox("Failed only")
        self.retry.setToolTip("Ask again only where a call failed")
        self.import_button = QPushButton("Import answers…")
        self.import_button.setToolTip("Answers made elsewhere: a TSV/CSV file with columns book, answer (optional "
                                      "passage_id)")
        self.import_button.clicked.connect(self.import_answers_dialog)
        ask_row = QHBoxLayout()
        ask_row.addWidget(self.ask_model, 1)
        ask_row.addWidget(self.retry)
        ask_row.addWidget(self.run_button)
        ask_row.addWidget(self.import_button)
        self.ask_widget = QWidget()
        self.ask_widget.setLayout(ask_row)
        ask_row.setContentsMargins(0, 0, 0, 0)

        self.model = _combo("Whose answers are analysed")
        self.model.setPlaceholderText("none yet: run or import")
        self.by = _combo("Whose name-cloze accuracy ranks the books into top and bottom groups")
        self.by.setPlaceholderText("no name cloze yet (Name cloze page)")
        self.groups = _combo("The top and bottom tenth or fifth of the books")
        self.groups.addItem("deciles (10%)", "decile")
        self.groups.addItem("quintiles (20%)", "quintile")
        self.reference = _combo("The true narrative times: minutes imported with the passages, or an annotation task")
        self.spans = _combo("What an answer naming a range, a decade or a century of years counts as")
        for key, text in SPANS.items():
            self.spans.addItem(text, key)
        self.ties = _combo("Books with the same accuracy at the edge of a group (and, in the error analysis, names with "
                           "the same PMI at the set size): all of them go in, or they are drawn at random many times "
                           "and the result is shown with its spread over the draws")
        self.ties.addItem("all tied books in", "all")
        self.ties.addItem(f"drawn at random ({DEFAULT_DRAWS} draws)", "draw")
        self.set_size = QSpinBox()
        self.set_size.setRange(0, 100_000)
        self.set_size.setSpecialValueText("as many as possible")
        self.set_size.setToolTip("Names in each of S and U (0: as many as both sides allow)")
        self.permutations = QSpinBox()
        self.permutations.setRange(100, 1_000_000)
        self.permutations.setSingleStep(1000)
        self.permutations.setValue(10_000)
        self.permutations.setToolTip("Random deals of the names in the randomization test")
        self.seed = QSpinBox()
        self.seed.setRange(0, 999_999)
        self.seed.setToolTip("Seed of the bootstrap, of the randomization test and of the tie draws")
        self.analyse_button = QPushButton("Analyse")
        self.analyse_button.setToolTip("Compute the tables and the chart (in the background)")
        self.analyse_button.clicked.connect(lambda: self.analyse())
        self.form = QFormLayout()
        self.form.addRow("Task", self.task)
        self.form.addRow("Ask", self.ask_widget)
        self.form.addRow("Answers of", self.model)
        self.form.addRow("Grouped by", self.by)
        self.form.addRow("Groups", self.groups)
        self.form.addRow("Ties at the cut", self.ties)
        self.form.addRow("Reference", self.reference)
        self.form.addRow("Spans of years", self.spans)
        self.form.addRow("Names per set", self.set_size)
        self.form.addRow("Deals", self.permutations)
        self.form.addRow("Seed", self.seed)
        self.form.addRow("", self.analyse_button)
        analysis = QGroupBox("2. Ask and analyse")
        analysis.setLayout(self.form)

        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.passages)
        top.addWidget(analysis)
        top.setStretchFactor(0, 3)
        top.setStretchFactor(1, 2)
        top.setSizes([600, 500])  # the book list gets room even beside the wide model choosers
        top.setChildrenCollapsible(False)

        self.table = FrameTable(TABLE_COLUMNS[YEAR])
        self.table.setMaximumHeight(self.table.verticalHeader().defaultSectionSize() * 5 + 8)
        self.rows = FrameTable(ROW_COLUMNS[YEAR])
        self.rows.doubleClicked.connect(self._row_opened)
        self.rows_label = QLabel("Books")
        self.chart = _combo("Which chart")
        self.chart.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)  # room enough beside the buttons
        self.chart.currentIndexChanged.connect(self._show_chart)
        self.plot = ChartView(self.ops)
        self.plot.picked.connect(self.open_answers)
        self.export_figure_button = QPushButton("Export figure…")
        self.export_figure_button.setToolTip("The chart for a paper (PDF, SVG or 300-dpi PNG) and the CSV of what it shows")
        self.export_figure_button.clicked.connect(self.export_figure_dialog)
        self.export_table_button = QPushButton("Export tables…")
        self.export_table_button.setToolTip("Both tables as CSV files")
        self.export_table_button.clicked.connect(self.export_tables_dialog)
        self.unparsed_button = QPushButton("Answers without a value…")
        self.unparsed_button.setToolTip("Every answer the analysis counts that gave no year or time: its book, group, "
                                        "passage, raw answer and why")
        self.unparsed_button.clicked.connect(self.show_unparsed)
        chart_row = QHBoxLayout()
        chart_row.addWidget(QLabel("Chart"))
        chart_row.addWidget(self.chart)
        chart_row.addStretch(1)
        chart_row.addWidget(self.unparsed_button)
        chart_row.addWidget(self.export_figure_button)
        chart_row.addWidget(self.export_table_button)
        chart_side = QWidget()
        chart_layout = QVBoxLayout(chart_side)
        chart_layout.setContentsMargins(0, 0, 0, 0)
        chart_layout.addLayout(chart_row)
        chart_layout.addWidget(self.plot, 1)
        rows_side = QWidget()
        self.rows_layout = QVBoxLayout(rows_side)
        self.rows_layout.setContentsMargins(0, 0, 0, 0)
        self.rows_layout.addWidget(self.rows_label)
        self.rows_layout.addWidget(self.rows, 1)
        lower = QSplitter(Qt.Orientation.Horizontal)
        lower.addWidget(rows_side)
        lower.addWidget(chart_side)
        lower.setStretchFactor(0, 2)
        lower.setStretchFactor(1, 3)
        lower.setChildrenCollapsible(False)
        results = QWidget()
        results_layout = QVBoxLayout(results)
        results_layout.setContentsMargins(0, 0, 0, 0)
        results_layout.addWidget(self.table)
        results_layout.addWidget(lower, 1)

        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(top)
        self.splitter.addWidget(results)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 5)
        self.splitter.setSizes([320, 560])
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Ignored)

        self.lay_out_work(NO_PROJECT, self.splitter)
        for combo, field in ((self.model, "model"), (self.by, "by"), (self.groups, "groups"),
                             (self.reference, "reference"), (self.spans, "spans"), (self.ties, "ties")):
            combo.currentIndexChanged.connect(partial(self._combo_chosen, field, combo))
        self.set_size.valueChanged.connect(lambda value: self._choose(set_size=value or None))
        self.permutations.valueChanged.connect(lambda value: self._choose(permutations=value))
        self.seed.valueChanged.connect(lambda value: self._choose(seed=value))
        self.choices = ValidityChoices(
            task=self.current_task(), groups=self.groups.currentData(), ties=self.ties.currentData(),
            spans=self.spans.currentData(), set_size=self.set_size.value() or None,
            permutations=self.permutations.value(), seed=self.seed.value())
        self._task_changed()

    # ------------------------------------------------------------------ choices
    def current_task(self) -> str:
        return self.task.currentData() or YEAR

    def _combo_chosen(self, field: str, combo: QComboBox, *_) -> None:
        self._choose(**{field: combo.currentData()})

    def _choose(self, **changed) -> None:
        """A widget changed: the choices follow it (the analysis reads ``self.choices``, never the widgets)."""
        self.choices = replace(self.choices, **changed)
        self._choices_changed()

    def _task_changed(self, *_) -> None:
        task = self.current_task()
        self.choices = replace(self.choices, task=task)
        for widget, shown in ((self.ask_widget, task != ERRORS), (self.reference, task == NARRATIVE),
                              (self.spans, task == YEAR),
                              (self.set_size, task == ERRORS), (self.permutations, task == ERRORS)):
            widget.setVisible(shown)
            self.form.labelForField(widget).setVisible(shown)
        self.rows_label.setText({YEAR: "Books (double-click for the answer)", NARRATIVE: "Passages (double-click "
                                 "for the answer)", ERRORS: "The names of S (seen) and U (unseen)"}[task])
        self._load_models()
        self._choices_changed()

    def _choices_changed(self, *_) -> None:
        """Results shown for other choices are cleared, so a table never sits beside the wrong choices."""
        if self.report is not None and self.report["choices"] != self.choices:
            self._clear_results("Press Analyse for these choices.")

    def _load_models(self) -> None:
        if self.project is None:
            for combo in (self.ask_model, self.model, self.by, self.reference):
                refill(combo, [])
            self._synced()
            return
        from workbench.models.catalog import choice_text, list_models
        from workbench.probes.cloze.analysis import model_labels
        from workbench.probes.validity.answers import answered_models
        from workbench.probes.validity.references import reference_choices

        task = self.current_task()
        cloze = model_labels(self.project)
        refill(self.ask_model, [(choice_text(s), s.label) for s in list_models(self.project) if s.backend != "external"])
        answered = cloze if task == ERRORS else answered_models(self.project, task)
        refill(self.model, [(m, m) for m in answered])
        refill(self.by, [(m, m) for m in cloze])
        references = [("minutes imported with the passages" if r == "imported" else f"annotation task: {r}", r)
                      for r in reference_choices(self.project)]
        refill(self.reference, references)
        self._synced()

    def _synced(self) -> None:
        """After a refill (which emits nothing), the choices follow what the lists now show."""
        self._choose(model=self.model.currentData(), by=self.by.currentData(), reference=self.reference.currentData())

    def _restore_choices(self) -> None:
        saved = self.project.get_setting(CHOICES_SETTING) or {}
        if saved.get("task") in TASKS:
            self.task.setCurrentIndex(self.task.findData(saved["task"]))
        for combo, key in ((self.model, "model"), (self.by, "by"), (self.groups, "groups"), (self.ties, "ties"),
                           (self.reference, "reference"), (self.spans, "spans")):
            index = combo.findData(saved.get(key))
            if index >= 0:
                combo.setCurrentIndex(index)
        self._pending_analysis = bool(saved.get("analysed"))

    def _remember(self, analysed: bool) -> None:
        if self.project is not None:
            chosen = self.choices
            self.project.set_setting(CHOICES_SETTING, {
                "task": chosen.task, "model": chosen.model, "by": chosen.by, "groups": chosen.groups,
                "ties": chosen.ties, "reference": chosen.reference, "spans": chosen.spans,
                "set_size": chosen.set_size, "permutations": chosen.permutations, "seed": chosen.seed,
                "analysed": analysed})

    # ------------------------------------------------------------------ reloading
    def refresh(self) -> None:
        if not self.show_whether_open():
            self._project_shown = None
            self.passages.load(None, [], keep_ticks=False)
            self._load_models()
            self._clear_results("")
            self.summary.hide()
            return
        from workbench.probes.validity.views import passage_books

        changed = self._project_shown is not self.project
        self._project_shown = self.project
        self.passages.load(self.project, passage_books(self.project), keep_ticks=not changed)
        self._load_models()
        if changed:
            self._clear_results("")
            self._restore_choices()
        self._update_busy()

    def on_shown(self) -> None:
        if self.work.operation is None:
            if self.show_due():
                self.refresh()
            if self._pending_analysis and self.model.count() and self.by.count():
                self._pending_analysis = False
                self.analyse()

    def _update_busy(self, *_) -> None:
        busy = self.work.busy
        self.passages.set_busy(busy)
        for widget in (self.run_button, self.import_button, self.analyse_button):
            widget.setEnabled(not busy)

    def _clear_results(self, message: str) -> None:
        self.report = None
        self.table.show_nothing()
        self.rows.show_nothing()
        self.chart.blockSignals(True)
        self.chart.clear()
        self.chart.blockSignals(False)
        self.plot.show_message(message or "Choose the task and the models, then press Analyse.")
        for button in (self.export_figure_button, self.export_table_button, self.unparsed_button):
            button.setEnabled(False)
        self.unparsed_button.setText("Answers without a value…")

    # ------------------------------------------------------------------ passages
    def sample(self) -> Operation | None:
        if not self.can_start():
            return None
        from workbench.probes.validity.passages import sample_passages

        ids = self.passages.checked_book_ids()
        if not ids:
            self.show_info("Tick the books to sample passages from.")
            return None
        project, words, per_book, seed = (self.project, self.passages.words.value(), self.passages.per_book.value(),
                                          self.passages.seed.value())
        return self.start_work(lambda state: sampled_text(sample_passages(project, ids, words=words, per_book=per_book,
                                                                          seed=seed, state=state)),
                               f"Sampling passages from {len(ids)} book(s)", on_done=self._sampled)

    def _sampled(self, summary: str) -> None:
        self.show_summary(summary)

    def import_passages_dialog(self) -> None:
        if self.require_project() is None:
            return
        path, _ = QFileDialog.getOpenFileName(self, "Import passages", str(Path.home()), TABLE_FILES)
        if path:
            self.import_passages(path)

    def import_passages(self, path: str | Path) -> Operation | None:
        if not self.can_start():
            return None
        from workbench.probes.validity.passages import import_passages

        project = self.project
        return self.start_work(lambda state: imported_passages_text(import_passages(project, path)),
                               "Importing passages", on_done=self.show_summary)

    def annotation_task_dialog(self) -> None:
        if self.require_project() is None:
            return
        name, ok = QInputDialog.getText(self, "Annotation task", "Name of the new narrative-time task (blinded):",
                                        text="narrative time")
        if ok and name.strip():
            self.make_annotation_task(name.strip())

    def make_annotation_task(self, name: str) -> Operation | None:
        if not self.can_start():
            return None
        from workbench.probes.validity.references import annotation_task_from_passages

        project, ids = self.project, self.passages.checked_book_ids() or None
        return self.start_work(lambda state: (name, annotation_task_from_passages(project, name, book_ids=ids)),
                               "Making the annotation task", on_done=self._task_made)

    def _task_made(self, made: tuple) -> None:
        name, items = made
        self.show_summary(f"Made the blinded narrative-time task '{name}' with {items} passage(s). Annotate it on the "
                          "Annotate page, then choose it as the reference here.")

    # ------------------------------------------------------------------ asking a model
    def start_run(self, *, label: str | None = None) -> Operation | None:
        """Run the task on the chosen model; a paid API is asked about first (``WorkOp``)."""
        if not self.can_start():
            return None
        from workbench.probes.validity.plan import validity_work

        task, label = self.current_task(), label or self.ask_model.currentData()
        if task == ERRORS or not label:
            self.show_info("Choose the task (year or narrative time) and a model to ask.")
            return None
        ids, retry, project = self.passages.checked_book_ids() or None, self.retry.isChecked(), self.project
        self._remember(False)
        return WorkOp(self, lambda: validity_work(project, task, label, book_ids=ids, retry_failed=retry,
                                                  next_step=RETRY_HERE)).run()

    def _run_done(self, report) -> None:
        line = f"Run {report.run_id}: {report.answered:,} of {report.total:,} passages answered"
        if report.failed:
            line += f", {report.failed:,} failed ({RETRY_HERE})"
        self.show_summary(line + "." + (f" {report.message}" if report.message else ""))

    def import_answers_dialog(self) -> None:
        if self.require_project() is None:
            return
        path, _ = QFileDialog.getOpenFileName(self, "Import answers", str(Path.home()), TABLE_FILES)
        if not path:
            return
        label, ok = QInputDialog.getText(self, "Import answers", "Which model gave these answers? Its label here:",
                                         text="answers (imported)")
        if ok and label.strip():
            self.import_answers(path, label.strip())

    def import_answers(self, path: str | Path, label: str) -> Operation | None:
        if not self.can_start():
            return None
        from workbench.probes.validity.predictions import import_predictions

        task = self.current_task()
        if task == ERRORS:
            self.show_info("Choose the task the answers are for (year or narrative time) first.")
            return None
        project = self.project
        return self.start_work(lambda state: imported_answers_text(import_predictions(project, task, path, label,
                                                                                      state=state)),
                               "Importing answers", on_done=self.show_summary)

    # ------------------------------------------------------------------ analysing
    def analyse(self) -> Operation | None:
        if not self.can_start():
            return None
        chosen = self.choices
        if chosen.missing():
            self.show_info(chosen.missing())
            return None
        project = self.project
        self._remember(True)
        return self.start_work(lambda state: {**analysis(project, chosen, state), "choices": chosen},
                               f"Analysing: {TASKS[chosen.task].lower()}", on_done=self._analysed)

    def _analysed(self, report: dict) -> None:
        from workbench.export.registry import charts_for

        self.report = report
        task = report["choices"].task
        self._tables_for(task)
        self.table.show_frame(report["table"])
        self.rows.show_frame(report["rows"])
        self.chart.blockSignals(True)
        self.chart.clear()
        for spec in charts_for(PAGE):
            if spec.name in report["charts"]:
                self.chart.addItem(spec.short_title, spec.name)
                self.chart.setItemData(self.chart.count() - 1, spec.description, Qt.ItemDataRole.ToolTipRole)
        self.chart.blockSignals(False)
        self._show_chart()
        for button in (self.export_figure_button, self.export_table_button):
            button.setEnabled(True)
        unparsed = report.get("unparsed")
        self.unparsed_button.setEnabled(unparsed is not None)
        self.unparsed_button.setText(f"Answers without a value ({len(unparsed)})…" if unparsed is not None
                                     else "Answers without a value…")
        if report.get("parsing"):
            self.show_summary(report["parsing"])
        else:
            self.summary.hide()

    def _tables_for(self, task: str) -> None:
        """Tables with the columns of ``task`` (a new pair when the task changed)."""
        if self.table.columns is TABLE_COLUMNS[task]:
            return
        table, rows = FrameTable(TABLE_COLUMNS[task]), FrameTable(ROW_COLUMNS[task])
        table.setMaximumHeight(self.table.maximumHeight())
        rows.doubleClicked.connect(self._row_opened)
        for old, new in ((self.table, table), (self.rows, rows)):
            old.parentWidget().layout().replaceWidget(old, new)
            old.deleteLater()
        self.table, self.rows = table, rows

    def _show_chart(self, *_) -> None:
        if self.report is None or not self.chart.count():
            return
        name = self.chart.currentData()
        frame = self.report["charts"][name]
        if frame.empty:
            self.plot.show_message("Nothing to draw for these choices: the table above says why.")
            return
        self.plot.show_chart(self.project, name, {}, frame=frame)

    # ------------------------------------------------------------------ the answers behind a point or row
    def _row_opened(self, index) -> None:
        if self.report is None or self.report["choices"].task == ERRORS:
            return
        row = self.rows.frame.iloc[index.row()]
        picked = {"book_id": int(row["book_id"]), "book": row["book"]}
        if "passage_id" in row:
            picked["passage_id"] = int(row["passage_id"])
        self.open_answers(picked)

    def open_answers(self, picked: dict) -> Operation | None:
        """Read the answers behind a clicked group, book or passage in the background, then show them."""
        if self.project is None or self.report is None or self.report["choices"].task == ERRORS:
            return None
        from workbench.probes.validity.views import validity_answers

        project, choices, rows = self.project, self.report["choices"], self.report["rows"]
        group = picked.get("group")
        if group is not None:
            title = f"{group} books"
        else:
            choices, title = replace(choices, book_id=int(picked["book_id"])), str(picked["book"])
        passage = picked.get("passage_id")

        def work(state):
            frame = validity_answers(project, choices, group=group, passage_id=passage, rows=rows)
            return title, choices.task, frame

        return self.ops.run(work, label="Reading the answers", project=project, on_done=self._show_answers,
                            on_error=self.show_error)

    def _show_answers(self, result: tuple, unparsed: bool = False) -> None:
        title, task, frame = result
        if self.answers_dialog is not None:
            self.answers_dialog.close()
        self.answers_dialog = AnswersDialog(title, task, frame, self, unparsed=unparsed)
        self.answers_dialog.show()

    def show_unparsed(self) -> None:
        """Every answer the analysis on screen counts that gave no value, in the answers dialog."""
        if self.report is None or self.report.get("unparsed") is None:
            return
        self._show_answers(("answers without a value", self.report["choices"].task, self.report["unparsed"]),
                           unparsed=True)

    # ------------------------------------------------------------------ exports
    def export_figure_dialog(self) -> None:
        if self.report is None:
            return
        name = self.chart.currentData()
        out = ask_figure_path(self, self.project.path.parent / f"{name}.pdf")
        if out is not None:
            self.export_figure(out)

    def export_figure(self, out: str | Path) -> Operation | None:
        """Save the chart on screen (its frame as drawn) through the export registry, with its CSV."""
        if self.report is None:
            return None
        work = self.plot.export_work(out, self.project)
        if work is None:
            self.show_info("There is no chart on show to export: it says above why there is nothing to draw.")
            return None
        return self._export(work, "Exporting the chart")

    def export_tables_dialog(self) -> None:
        if self.report is None:
            return
        suggested = str(self.project.path.parent / f"validity-{self.report['choices'].task}.csv")
        path, _ = QFileDialog.getSaveFileName(self, "Export the tables", suggested, CSV_FILES)
        if path:
            self.export_tables(Path(path) if path.lower().endswith(".csv") else Path(path + ".csv"))

    def export_tables(self, out: str | Path) -> Operation | None:
        """The group table to ``out`` and the per-book (or per-passage, or names) table beside it."""
        if self.report is None:
            return None
        from workbench.export.registry import write_csv

        out = Path(out)
        table, rows, project = self.report["table"], self.report["rows"], self.project
        rows_out = out.with_name(out.stem + "-rows.csv")
        return self._export(lambda state: [write_csv(table, out, project), write_csv(rows, rows_out, project)],
                            "Exporting the tables")

    def _export(self, work, label: str) -> Operation:
        return self.ops.run(work, label=label, project=self.project, on_done=self._exported, on_error=self.show_error)

    def _exported(self, paths) -> None:
        self.last_export = [Path(p) for p in paths]
        self.show_summary("Saved " + " and ".join(str(p) for p in self.last_export) + ".")

    # ------------------------------------------------------------------ messages and the operation slot
def analysis(project, chosen: ValidityChoices, state) -> dict:
    """The analysis the choices ask for (on the worker): the group table, the rows and the chart frames. The error
    analysis is the name-cloze probe's, the others the validity probe's (``validity_report``)."""
    if chosen.task == ERRORS:
        from workbench.probes.cloze.error_charts import error_report

        return error_report(project, chosen.model, chosen.by, groups=chosen.groups, set_size=chosen.set_size,
                            permutations=chosen.permutations, seed=chosen.seed, ties=chosen.ties, state=state)
    from workbench.probes.validity.views import validity_report

    return validity_report(project, chosen)
