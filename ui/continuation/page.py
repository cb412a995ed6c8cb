"""The Continuation page: does a model go on with a book's own words? A run form (model, books, passages per
book, prefix and continuation lengths), the per-book table and the probe's two charts from the export registry.
Every action is a call into ``workbench.probes.continuation``; runs go through the window's background helper."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QPushButton, QSpinBox, QVBoxLayout

from ui.leakage.analysis_tab import AnalysisTab, refill_or_hint
from ui.widgets.combo import refill
from ui.widgets.frame_table import Column, count, decimal, share, yes_no
from ui.widgets.page import Page
from ui.work_op import WorkOp
from workbench.probes.continuation.views import ContinuationChoices, continuation_table
from workbench.work import BOOKS, CONTINUATION_RESULTS, MODELS, RETRY_ON_JOBS

RUNNABLE = ("hf", "gguf", "openai")
NO_MODEL = "(add a model on the Models page)"
ALL_BOOKS = "All books"
NO_PROJECT = "Open or create a project (File menu) to ask a model to continue passages of its books."
NOTHING = ("No continuation runs for this model yet: choose books and press Run. The model is given the first "
           "tokens of passages of each book and its greedy continuation is compared with the book's.")


def interval(row) -> str:
    return "" if row["ci_low"] != row["ci_low"] else f"{row['ci_low']:.0%}-{row['ci_high']:.0%}"


def p_value(value) -> str:
    return "" if value is None or value != value else f"{float(value):.2g}"


def spin(low: int, high: int, value: int, tooltip: str) -> QSpinBox:
    box = QSpinBox()
    box.setRange(low, high)
    box.setValue(value)
    box.setToolTip(tooltip)
    return box


class ContinuationTab(AnalysisTab):
    def __init__(self, ops, parent=None):
        super().__init__(ops, [
            Column("title", "Book", stretch=True),
            Column("passages", "Passages", count, numeric=True, tooltip="Passages the model answered: the unit"),
            Column("extractable", "Extractable", count, numeric=True,
                   tooltip="Passages continued word for word for the tokens that must match"),
            Column("extractable_share", "Share", share, numeric=True),
            Column("ci_low", "95% CI", compose=interval, tooltip="Wilson interval, the passage as the trial"),
            Column("mean_exact_prefix", "Mean tokens right", decimal, numeric=True,
                   tooltip="Tokens right from the start of the continuation, on average"),
            Column("mean_edit_similarity", "Edit similarity", decimal, numeric=True,
                   tooltip="1 minus the token-level edit distance over the longer length, on average"),
            Column("unseen", "Unseen", yes_no, tooltip="Tagged member=no, or published after the model's cutoff"),
            Column("baseline_share", "Unseen books", share, numeric=True,
                   tooltip="The extractable share of the (other) unseen books' passages, pooled"),
            Column("p_holm", "p (Holm)", p_value, numeric=True,
                   tooltip="Fisher's exact test, one-sided, against the unseen books; Holm-adjusted over the books"),
            Column("above_baseline", "Above", yes_no, tooltip="Holm-adjusted p below 0.05"),
        ], key="book_id", charts="continuation", parent=parent)
        defaults = ContinuationChoices()
        self.model = QComboBox()
        self.model.setMinimumContentsLength(16)
        self.books = QComboBox()
        self.books.setMinimumContentsLength(20)
        self.per_book = spin(1, 10_000, defaults.per_book, "Passages per book, spread over the whole book")
        self.prefix = spin(1, 2_000, defaults.run_prefix_tokens, "Tokens of the book the model is given (words for "
                                                                 "an API model)")
        self.continuation = spin(1, 2_000, defaults.run_continue_tokens, "Tokens the model writes, compared with "
                                                                         "the book's next ones")
        self.run_button = QPushButton("Run")
        self.run_button.clicked.connect(self.run)
        self.lay_out_settings((("Model", self.model), ("Books", self.books), self.run_button),
                              (("Passages per book", self.per_book), ("Prefix tokens", self.prefix),
                               ("Continuation tokens", self.continuation)))
        self.choices = defaults
        self.bind("model", lambda: self.model.currentData() or None, self.model.currentIndexChanged)
        self.bind("book_id", self.books.currentData, self.books.currentIndexChanged)
        self.bind("per_book", self.per_book.value, self.per_book.valueChanged)
        self.bind("run_prefix_tokens", self.prefix.value, self.prefix.valueChanged)
        self.bind("run_continue_tokens", self.continuation.value, self.continuation.valueChanged)
        self.refresh_on_choice(self.model, self.books)

    def refresh_choices(self) -> None:
        from workbench.models.catalog import list_models

        models = [m.label for m in list_models(self.project) if m.backend in RUNNABLE] if self.project else []
        refill_or_hint(self.model, models, NO_MODEL)
        books = self._books()
        refill(self.books, [(ALL_BOOKS, None), *[(title, book_id) for book_id, title in books]])

    def _books(self) -> list[tuple[int, str]]:
        from workbench.corpus.library import list_books

        if self.project is None:
            return []
        return [(b.id, b.title or f"Book {b.id}") for b in list_books(self.project) if b.words]

    def results_query(self):
        return continuation_table if self.choices.model else None

    def chart_options(self):
        model = self.choices.model
        return ({"model": model}, NOTHING) if model else (None, NOTHING)

    def run(self) -> None:
        if self.require_project() is None:
            return
        chosen = self.choices
        if not chosen.model:
            self.show_info("Add a model on the Models page first.")
            return
        from workbench.probes.continuation.plan import continuation_work

        project, model = self.project, chosen.model
        books = [int(chosen.book_id)] if chosen.book_id is not None else None
        per_book, prefix, continuation = chosen.per_book, chosen.run_prefix_tokens, chosen.run_continue_tokens
        WorkOp(self, lambda: continuation_work(project, model, book_ids=books, per_book=per_book,
                                               prefix_tokens=prefix, continue_tokens=continuation,
                                               next_step=RETRY_ON_JOBS)).run()


class ContinuationPage(Page):
    key = "continuation"
    title = "Continuation"

    def __init__(self, ops, parent=None):
        super().__init__(ops, parent)
        self.tab = ContinuationTab(ops)
        self.hint = QLabel(NO_PROJECT)
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.hint)
        layout.addWidget(self.tab, 1)
        # what it shows changes elsewhere only as announced (the books, the models, a run continued on the Jobs
        # page): it reloads then (off screen: when shown), not every time it is shown
        # (heard by the tab: its own runs reload it already, and are not heard again)
        ops.changes.listen(self.tab, {BOOKS, MODELS, CONTINUATION_RESULTS}, self.refresh)
        self.refresh()

    def set_project(self, project) -> None:
        self.tab.project = project
        super().set_project(project)

    def refresh(self) -> None:
        self.hint.setVisible(self.project is None)
        self.tab.setEnabled(self.project is not None)
        self.tab.refresh()

