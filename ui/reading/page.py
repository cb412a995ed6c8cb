"""The Reading page: NarrativeXL reading questions, from a book to its forgetting curve.

Left, the steps for one book: cut it into scenes, summarize them (or import summaries), substitute its
names, build questions, ask a model; every step runs in the background with progress and Cancel, and
API models say what they will cost first. Right, the results of the model chosen: the forgetting curve
(original and substituted names, chance dashed), its table with the slope, the questions behind a
point when it is clicked, and for a question its options and the model's raw reply.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ui.background import Operation
from ui.reading.steps import Steps
from ui.widgets.chart_view import ChartView
from ui.widgets.combo import refill
from ui.widgets.figure_file import ask_figure_path
from ui.widgets.frame_table import Column, FrameTable, count, share, yes_no
from ui.widgets.one_operation import OneOperation
from ui.widgets.page import Page
from ui.work_op import WorkOp
from workbench.corpus.library import list_books
from workbench.models.catalog import get_model
from workbench.probes.reading.charts import answer_models, bin_label
from workbench.probes.reading.overview import book_status, question_detail
from workbench.probes.reading.plans import questions_work, summaries_work
from workbench.probes.reading.run import context_note
from workbench.probes.reading.views import (
    NO_RESULTS,
    ReadingChoices,
    ReadingResults,
    question_run,
    questions_table,
    reading_books,
    reading_results,
)
from workbench.summaries.plans import runnable_models
from workbench.work import BOOKS, MODELS, READING_RESULTS, RETRY_ON_JOBS

NO_PROJECT = "Open or create a project (File menu) to ask models reading questions about its books."
PAGE = "reading"  # the page's chart in the export registry
CSV_FILES = "CSV files (*.csv);;All files (*)"

CURVE_COLUMNS = [
    Column("variant", "Names"),
    Column("bin_low", "Retention demand (words)", compose=lambda r: bin_label(r["bin_low"], r["bin_high"])),
    Column("questions", "Answered", count, numeric=True),
    Column("correct", "Right", count, numeric=True),
    Column("accuracy", "Accuracy", share, numeric=True),
    Column("ci", "95% CI", compose=lambda r: f"{share(r['ci_low'])}–{share(r['ci_high'])}"),
    Column("unparsed", "Unparsed", count, numeric=True, tooltip="Replies that named no choice (counted as wrong)"),
    Column("failed", "Failed", count, numeric=True, tooltip="Requests that got no answer (not counted)"),
    Column("chance", "Chance", share, numeric=True,
           tooltip="What guessing earns on the questions answered here: the mean of 1 / choices"),
]
ANSWER_COLUMNS = [
    Column("key", "Question"),
    Column("retention_words", "Retention (words)", count, numeric=True),
    Column("answer", "Right choice", count, numeric=True),
    Column("choice", "Its choice", count, numeric=True),
    Column("correct", "Right?", yes_no),
    Column("raw", "Raw reply", stretch=True),
]


class ReadingPage(Page, OneOperation):
    key = "reading"
    title = "Reading"

    def __init__(self, ops, parent=None):
        super().__init__(ops, parent)
        self.work = ops.slot(self)  # the steps: one at a time
        self.work.busy_changed.connect(self._update_busy)
        self.reading = ops.slot(self)  # the background read of the results
        self.choices = ReadingChoices()  # what the results show, kept as the widgets change
        self.shown: ReadingResults = NO_RESULTS  # what they show now
        self._build()
        # what it shows changes elsewhere only as announced (the books, the models, reading runs continued on the
        # Jobs page): it reloads then (off screen: when shown), not every time it is shown
        ops.changes.listen(self, {BOOKS, MODELS, READING_RESULTS}, self._changed_elsewhere)
        self.refresh()

    # ------------------------------------------------------------------ layout
    def _build(self) -> None:
        self.steps = Steps()
        self.steps.book.currentIndexChanged.connect(self.refresh_status)
        self.steps.cut_requested.connect(self.cut)
        self.steps.summarize_requested.connect(self.summarize)
        self.steps.import_requested.connect(self.import_dialog)
        self.steps.substitute_requested.connect(self.substitute)
        self.steps.questions_requested.connect(self.build_questions)
        self.steps.ask_requested.connect(self.ask)
        self.steps.ask_model.currentIndexChanged.connect(self.refresh_context_hint)
        self.steps.context_words.valueChanged.connect(self.refresh_context_hint)
        left = QScrollArea()
        left.setWidget(self.steps)
        left.setWidgetResizable(True)
        left.setMinimumWidth(self.steps.minimumSizeHint().width() + 24)

        self.model = QComboBox()
        self.model.setToolTip("Whose answers the results show")
        self.model.currentIndexChanged.connect(self._model_chosen)
        self.book = QComboBox()
        self.book.setToolTip("Whose questions: one book's, or every book the model answered, pooled")
        self.book.currentIndexChanged.connect(self._book_chosen)
        self.export_button = QPushButton("Export chart…")
        self.export_button.setToolTip("The forgetting curve as PDF, SVG or PNG, with the CSV of what it plots")
        self.export_button.clicked.connect(self.export_dialog)
        top = QHBoxLayout()
        top.addWidget(QLabel("Model"))
        top.addWidget(self.model, 1)
        top.addWidget(QLabel("Book"))
        top.addWidget(self.book, 1)
        top.addWidget(self.export_button)
        self.pooled = QLabel("")
        self.pooled.setWordWrap(True)
        self.plot = ChartView(self.ops)
        self.plot.picked.connect(self._point_picked)
        self.curve = FrameTable(CURVE_COLUMNS)
        self.slope = QLabel("")
        self.slope.setWordWrap(True)
        self.bin_answers = FrameTable(ANSWER_COLUMNS, key="question_id")
        self.bin_answers.itemSelectionChanged.connect(self.show_question)
        self.detail = QPlainTextEdit()
        self.detail.setReadOnly(True)
        self.detail.setPlaceholderText("Click a point of the curve, then a question, to see its options and the reply.")
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addLayout(top)
        right_layout.addWidget(self.pooled)
        lower = QSplitter(Qt.Orientation.Vertical)
        lower.addWidget(self.plot)
        table_box = QWidget()
        table_layout = QVBoxLayout(table_box)
        table_layout.setContentsMargins(0, 0, 0, 0)
        table_layout.addWidget(self.curve)
        table_layout.addWidget(self.slope)
        lower.addWidget(table_box)
        lower.addWidget(self.bin_answers)
        lower.addWidget(self.detail)
        lower.setSizes([300, 160, 140, 160])
        lower.setChildrenCollapsible(False)
        right_layout.addWidget(lower, 1)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(left)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        self.lay_out_work(NO_PROJECT, self.splitter)

    # ------------------------------------------------------------------ reloading
    def refresh(self) -> None:
        if not self.show_whether_open():
            self.reading.drop()
            for combo in (self.steps.book, self.steps.summary_model, self.steps.ask_model, self.model, self.book):
                refill(combo, [])
            self.choices = ReadingChoices()
            self.steps.status.setText("")
            self.refresh_context_hint()
            self._show_results(NO_RESULTS)
            return
        refill(self.steps.book, [(b.display_name, b.id) for b in list_books(self.project) if b.words])  # words: status
        models = [(spec.label, spec.label) for spec in runnable_models(self.project)]
        refill(self.steps.summary_model, models)
        refill(self.steps.ask_model, models)
        refill(self.model, [(label, label) for label in answer_models(self.project)])
        self._sync_choices()
        self.refresh_status()
        self.refresh_context_hint()
        self.refresh_results()
        self._update_busy()

    def _changed_elsewhere(self) -> None:
        if self.work.operation is None:
            self.refresh()
        else:  # its own step reloads it when it ends
            self.refresh_due = True

    def refresh_status(self, *_) -> None:
        book = self.steps.book.currentData()
        self.steps.status.setText(book_status(self.project, book).describe() if self.project and book else
                                  "Add a book with its text to the library first (Library page).")

    def refresh_context_hint(self, *_) -> None:
        """Under 'Ask a model': for an API model with no word limit, that the whole book so far is sent."""
        label = self.steps.ask_model.currentData()
        note = ""
        if self.project is not None and label and not self.steps.context_words.value():
            note = context_note(get_model(self.project, label), "'Words of book shown'")
        self.steps.context_hint.setText(note)
        self.steps.context_hint.setVisible(bool(note))

    @property
    def chart(self):
        """The chart of the export registry this page shows (the forgetting curve)."""
        from workbench.export.registry import charts_for

        return charts_for(PAGE)[0]

    # ------------------------------------------------------------------ the results' choices
    def _sync_choices(self) -> None:
        """After the model list was refilled (which emits nothing): the choices follow what it shows."""
        self._model_chosen(reload=False)

    def _model_chosen(self, *_, reload: bool = True) -> None:
        model = self.model.currentData()
        books = reading_books(self.project, model) if self.project is not None and not self.project.closed else []
        refill(self.book, [("every book, pooled", None)] + books)
        self.choices = replace(self.choices, model=model, book_id=self.book.currentData(), variant=None, bin_low=None)
        if reload:
            self.refresh_results()

    def _book_chosen(self, *_) -> None:
        self.choices = replace(self.choices, book_id=self.book.currentData(), variant=None, bin_low=None)
        self.refresh_results()

    def refresh_results(self, *_) -> None:
        choices = self.choices
        if self.project is None or self.project.closed or not choices.model:
            self._show_results(NO_RESULTS)
            return
        project = self.project
        self.reading.queue(lambda state: reading_results(project, choices), label="Reading the answers",
                           project=project, background_read=True, on_done=self._show_results,
                           on_error=self.show_error)

    def _show_results(self, result: ReadingResults) -> None:
        self.shown = result
        self.pooled.setText(result.pooled)
        self.pooled.setVisible(bool(result.books))
        if result.curve.empty:
            self.plot.show_message("No answers yet: ask a model the questions.")
        else:
            self.plot.show_chart(self.project, self.chart.name, {"model": result.chart["model"].iloc[0]},
                                 frame=result.chart)
        self.curve.show_frame(result.curve)
        self.slope.setText(result.slope_text)
        self.bin_answers.show_nothing()
        self.detail.clear()

    def _point_picked(self, picked: dict) -> None:
        self.show_bin(picked["variant"], int(picked["bin_low"]))

    def show_bin(self, variant: str, bin_low: int) -> None:
        """The questions behind one point of the curve."""
        self.choices = replace(self.choices, variant=variant, bin_low=int(bin_low))
        if self.shown.answers.empty or self.project is None:
            return
        self.bin_answers.show_frame(questions_table(self.project, self.choices, self.shown.answers))
        self.detail.clear()

    def show_question(self) -> None:
        keys = self.bin_answers.selected_keys()
        if not keys or self.project is None:
            return
        run_id = question_run(self.shown.answers, keys[0])
        if run_id is not None:
            self.detail.setPlainText(question_detail(self.project, run_id, int(keys[0])))

    def _update_busy(self, *_) -> None:
        self.steps.set_busy(self.work.busy)

    # ------------------------------------------------------------------ the steps
    def _book(self) -> int | None:
        if self.require_project() is None:
            return None
        book = self.steps.book.currentData()
        if book is None:
            self.show_info("Add a book with its text to the library first (Library page), then choose it here.")
        return book

    def _said(self, text) -> None:
        self.show_summary(str(text))

    def cut(self) -> Operation | None:
        book = self._book()
        if book is None:
            return None
        from workbench.probes.reading.scenes import make_scenes

        project, words = self.project, self.steps.scene_words.value()
        return self.start_work(lambda state: f"Cut into {len(make_scenes(project, book, words).scenes):,} scenes.",
                               "Cutting the book into scenes", self._said)

    def _book_and_model(self, combo: QComboBox) -> tuple[int, str] | None:
        book = self._book()
        if book is None:
            return None
        if not combo.currentData():
            self.show_info("Add a model on the Models page first, then choose it here.")
            return None
        return book, combo.currentData()

    def summarize(self) -> Operation | None:
        """The chosen model summarizes the book's scenes (a paid API is asked about first)."""
        chosen = self._book_and_model(self.steps.summary_model)
        if chosen is None:
            return None
        book, label = chosen
        project, hierarchical = self.project, self.steps.hierarchical.isChecked()
        return WorkOp(self, lambda: summaries_work(project, book, label, hierarchical=hierarchical,
                                                   next_step=RETRY_ON_JOBS)).run()

    def import_dialog(self) -> None:
        if self._book() is None:
            return
        path, _ = QFileDialog.getOpenFileName(self, "Import scene summaries", str(Path.home()), CSV_FILES)
        if not path:
            return
        label, ok = QInputDialog.getText(self, "Import scene summaries", "The label the summaries go under:",
                                         text=Path(path).stem)
        if ok and label.strip():
            self.import_summaries(path, label.strip())

    def import_summaries(self, path: str | Path, label: str) -> Operation | None:
        book = self._book()
        if book is None:
            return None
        from workbench.probes.reading.summaries import import_summaries

        project = self.project
        return self.start_work(lambda state: import_summaries(project, book, path, label, state).describe(),
                               "Importing summaries", self._said)

    def substitute(self) -> Operation | None:
        book = self._book()
        if book is None:
            return None
        from workbench.probes.reading.substitution import substitute_book

        project, seed = self.project, self.steps.name_seed.value()

        def work(state):
            found = substitute_book(project, book, seed, state)
            shown = ", ".join(f"{n.word} → {n.replacement}" for n in found.names[:12])
            return f"{len(found.names):,} name words replaced at {len(found.edits):,} places: {shown}" + (
                ", …" if len(found.names) > 12 else ".")

        return self.start_work(work, "Finding and replacing the characters' names", self._said)

    def build_questions(self) -> Operation | None:
        book = self._book()
        if book is None:
            return None
        from workbench.probes.reading.questions import QuestionSettings, build_questions, missing_kinds, question_counts

        project = self.project
        settings = QuestionSettings(every=self.steps.every.value(), options=self.steps.options.value(),
                                    seed=self.steps.question_seed.value(), max_level=self.steps.chosen_max_level())
        variant = self.steps.question_variant.currentData()

        def work(state):
            question_set = build_questions(project, book, settings, variant=variant)
            counts = question_counts(project, question_set.id)
            parts = [f"{int(r.questions)} {r.kind}" for r in counts.itertuples(index=False)]
            return " ".join([f"Built {int(counts['questions'].sum()):,} questions on the {variant} text: "
                             f"{', '.join(parts)}."] + missing_kinds(settings.kinds, counts["kind"], settings.options))

        return self.start_work(work, "Building questions", self._said)

    def ask(self) -> Operation | None:
        """The chosen model answers the book's questions (a paid API is asked about first)."""
        chosen = self._book_and_model(self.steps.ask_model)
        if chosen is None:
            return None
        book, label = chosen
        project, variant = self.project, self.steps.ask_variant.currentData()
        words = self.steps.context_words.value() or None
        return WorkOp(self, lambda: questions_work(project, label, variant=variant, book_ids=[book],
                                                   context_words=words, next_step=RETRY_ON_JOBS)
                      ).success(self._asked).run()

    def _asked(self, outcome) -> None:
        label = self.steps.ask_model.currentData()
        refill(self.model, [(m, m) for m in answer_models(self.project)], wanted=label)
        self._model_chosen()

    # ------------------------------------------------------------------ export
    def export_dialog(self) -> None:
        model = self.model.currentData()
        if self.require_project() is None or not model:
            return
        out = ask_figure_path(self, self.project.path.parent / f"{self.chart.name}.pdf")
        if out is not None:
            self.export(out, model)

    def export(self, out: str | Path, model: str | None = None) -> Operation | None:
        """The chart on screen (for the model chosen) as a figure, with its CSV."""
        work = self.plot.export_work(out, self.project)
        if work is None:
            self.show_info("There is no curve on screen to export yet: ask a model the questions first.")
            return None
        return self.ops.run(work, label="Exporting the forgetting curve", project=self.project,
                            on_done=self._exported, on_error=self.show_error)

    def _exported(self, paths) -> None:
        self.show_summary("Saved " + " and ".join(str(p) for p in paths) + ".")
