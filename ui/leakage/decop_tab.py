"""The DE-COP tab: a model paraphrases the passages, the tested model, told the book's title and author, picks
the verbatim one among four options in every order (24 by default); per book the mean passage score against
chance (25%), the passage as the unit; above the table, DE-COP's decision: suspect books against clean books
(ROC AUC)."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QLabel, QPushButton, QSpinBox

from ui.leakage.analysis_tab import AnalysisTab, SourceChooser, hint, model_labels, refill_or_hint
from ui.widgets.frame_table import Column, count, share
from ui.work_op import WorkOp
from workbench.probes.leakage import decop, passages
from workbench.probes.leakage.plans import decop_work, regeneration_work
from workbench.probes.leakage.views import DecopChoices, decop_table
from workbench.work import RETRY_ON_JOBS

RUNNABLE = ("hf", "gguf", "openai")
NO_MODEL = "(add a model on the Models page)"
NO_CUTOFF = "none"
WARNING_STYLE = "color: #b03a2e;"


def p_value(value) -> str:
    return "" if value is None or value != value else f"{float(value):.2g}"


def interval(row) -> str:
    return "" if row["ci_low"] != row["ci_low"] else f"{row['ci_low']:.0%}-{row['ci_high']:.0%}"


def group(row) -> str:
    return row["group"] + (f" ({row['why']})" if row["why"] else "")


class DecopTab(AnalysisTab):
    def __init__(self, ops, parent=None):
        super().__init__(ops, [
            Column("book", "Book", stretch=True), Column("group", "Suspect or clean", compose=group,
                                                         tooltip="Clean: tagged member=no, or published after the "
                                                                 "training cutoff"),
            Column("model", "Model"), Column("paraphraser", "Paraphrases by"),
            Column("orders", "Orders", count, numeric=True, tooltip="Option orders per passage"),
            Column("passages", "Passages", count, numeric=True, tooltip="Passages with an answer: the unit"),
            Column("answered", "Answered", count, numeric=True),
            Column("unanswered", "No letter", count, numeric=True),
            Column("score", "Score", share, numeric=True,
                   tooltip="Mean over passages of the share of orders in which the verbatim passage was picked"),
            Column("ci_low", "95% CI", compose=interval, tooltip="Wilson interval with the passage as the trial"),
            Column("p_value", "p (vs 25%)", p_value, numeric=True,
                   tooltip="One-sided exact randomisation test, the passage as the unit"),
        ], parent=parent)
        self.model = QComboBox()
        self.paraphraser = QComboBox()
        self.source = SourceChooser()
        self.orders = QComboBox()
        self.orders.addItem("all 24 orders", 24)
        for orders in (20, 16, 12, 8, 4):
            self.orders.addItem(f"{orders} orders (fewer)", orders)
        self.orders.setToolTip(decop.ORDERS_HELP)
        self.cutoff = QSpinBox()
        self.cutoff.setRange(1899, 2100)
        self.cutoff.setSpecialValueText(NO_CUTOFF)  # the minimum stands for no year
        self.cutoff.setValue(self.cutoff.minimum())
        self.cutoff.setToolTip("The last year of the model's training data: books published later count as clean. "
                               "Left at 'none', the model's tag cutoff=YEAR (Models page) is used, if it has one.")
        self.run_button = QPushButton("Paraphrase and ask")
        self.run_button.clicked.connect(self.run)
        self.rewrite_button = QPushButton("New paraphrases")
        self.rewrite_button.setToolTip("Write new paraphrases for the passages without three usable ones")
        self.rewrite_button.clicked.connect(self.rewrite)
        self.warning = QLabel("")
        self.warning.setWordWrap(True)
        self.warning.setStyleSheet(WARNING_STYLE)
        self.warning.hide()
        self.lay_out_settings((("Model tested", self.model), ("Paraphrases by", self.paraphraser),
                               ("Training cutoff", self.cutoff)),
                              (("Passages", self.source), ("Orders", self.orders), self.run_button,
                               self.rewrite_button))
        self.settings.layout().addWidget(self.warning)
        self.decision = hint("")
        self.decision.hide()
        self.layout().insertWidget(self.layout().indexOf(self.table), self.decision)
        self.choices = DecopChoices()
        self.bind("model", self.model.currentData, self.model.currentIndexChanged)
        self.bind("paraphraser", self.paraphraser.currentData, self.paraphraser.currentIndexChanged)
        self.bind("source", self.source.source, self.source.changed)
        self.bind("orders", self.orders.currentData, self.orders.currentIndexChanged)
        self.bind("cutoff_year", self.cutoff_year, self.cutoff.valueChanged)
        self.cutoff.valueChanged.connect(self.refresh)
        self.model.currentIndexChanged.connect(self.show_warning)
        self.paraphraser.currentIndexChanged.connect(self.show_warning)
        self.refresh_on_choice(self.model)

    def refresh_choices(self) -> None:
        labels = model_labels(self.project, RUNNABLE)
        refill_or_hint(self.model, labels, NO_MODEL)
        refill_or_hint(self.paraphraser, labels, NO_MODEL)
        self.take_refilled()
        self.show_warning()

    def show_warning(self, *_) -> None:
        model, paraphraser = self.choices.model, self.choices.paraphraser
        text = decop.paraphraser_warning(self.project, model, paraphraser) if self.project is not None else ""
        self.warning.setText(text)
        self.warning.setVisible(bool(text))

    def cutoff_year(self) -> int | None:
        value = self.cutoff.value()
        return None if value == self.cutoff.minimum() else value

    def results_query(self):
        return decop_table if self.choices.model else None

    def show_results(self, books) -> None:
        self.table.show_frame(books)
        text = books.attrs.get("note", "").replace("give the year with --cutoff-year", "set 'Training cutoff' above")
        self.decision.setText(text)
        self.decision.setVisible(bool(text))

    def _chosen(self) -> tuple[str, str] | None:
        model, paraphraser = self.choices.model, self.choices.paraphraser
        if self.require_project() is None:
            return None
        if not model or not paraphraser:
            self.show_info("Add the model to test and the model that writes paraphrases (Models page) first.")
            return None
        return model, paraphraser

    def run(self) -> None:
        """Paraphrases (where needed), then the questions: a paid API (either model) is asked about once."""
        chosen = self._chosen()
        if chosen is None:
            return
        model, paraphraser = chosen
        project, source, orders = self.project, self.choices.source, self.choices.orders
        WorkOp(self, lambda: decop_work(project, model, paraphraser, source, orders=orders,
                                        next_step=RETRY_ON_JOBS, lacking_words=_for_the_tab)).run()

    def rewrite(self) -> None:
        """New paraphrases for the chosen passages that lack three usable ones."""
        chosen = self._chosen()
        if chosen is None:
            return
        _, paraphraser = chosen
        project, source = self.project, self.choices.source

        def lacking_ids() -> list[int]:  # on the worker, when the work is estimated or run
            lacking = decop.lacking_paraphrases(project, paraphraser, passages.gather(project, source))
            return [int(i) for i, problems in zip(lacking["item_id"], lacking["problems"])
                    if problems != "none written yet"]

        WorkOp(self, lambda: regeneration_work(project, paraphraser, lacking_ids, next_step=RETRY_ON_JOBS)
               ).success(self._rewritten).run()

    def _rewritten(self, outcome) -> None:
        if not outcome.reports:
            self.summary.show_text("Every passage with paraphrases by this model has three usable ones; passages "
                                   "without any get them from 'Paraphrase and ask'.")


def _for_the_tab(message: str) -> str:
    """The core's note on passages without paraphrases, with the tab's button instead of the commands."""
    if not message:
        return ""
    head = message.split(" See them with:")[0]
    return head + " Press 'New paraphrases' to write new ones, then 'Paraphrase and ask' again."
