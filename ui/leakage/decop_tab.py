"""The DE-COP tab: a model paraphrases the passages, the tested model picks the verbatim one among four
options in balanced orders; accuracy per book against chance (25%)."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QPushButton

from ui import dialogs
from ui.leakage.analysis_tab import AnalysisTab, SourceChooser, model_labels, refill_or_hint
from ui.widgets.frame_table import Column, count, share
from workbench.models.prices import is_paid
from workbench.models.registry import get_model
from workbench.probes.leakage import decop, passages
from workbench.run_failures import describe_outcome

RUNNABLE = ("hf", "gguf", "openai")
NO_MODEL = "(add a model on the Models page)"


def p_value(value) -> str:
    return "" if value is None or value != value else f"{float(value):.2g}"


class DecopTab(AnalysisTab):
    def __init__(self, ops, parent=None):
        super().__init__(ops, [
            Column("book", "Book", stretch=True), Column("model", "Model"), Column("paraphraser", "Paraphrases by"),
            Column("passages", "Passages", count, numeric=True), Column("answered", "Answered", count, numeric=True),
            Column("unanswered", "No letter", count, numeric=True), Column("correct", "Correct", count, numeric=True),
            Column("accuracy", "Accuracy", share, numeric=True),
            Column("ci_low", "95% CI", compose=lambda r: "" if r["ci_low"] != r["ci_low"] else
                   f"{r['ci_low']:.0%}-{r['ci_high']:.0%}"),
            Column("p_value", "p (vs 25%)", p_value, numeric=True, tooltip="Two-sided exact binomial test"),
        ], parent=parent)
        self.model = QComboBox()
        self.paraphraser = QComboBox()
        self.source = SourceChooser()
        self.orders = QComboBox()
        self.orders.addItem("4 orders (each position once)", 4)
        self.orders.addItem("all 24 orders", 24)
        self.run_button = QPushButton("Paraphrase and ask")
        self.run_button.clicked.connect(self.run)
        self.lay_out_settings((("Model tested", self.model), ("Paraphrases by", self.paraphraser)),
                              (("Passages", self.source), ("Orders", self.orders), self.run_button))

    def refresh_choices(self) -> None:
        labels = model_labels(self.project, RUNNABLE)
        refill_or_hint(self.model, labels, NO_MODEL)
        refill_or_hint(self.paraphraser, labels, NO_MODEL)

    def results_reader(self):
        return decop.accuracy_frame

    def run(self, *, confirmed: bool = False) -> None:
        model, paraphraser = self.model.currentData(), self.paraphraser.currentData()
        if self.require_project() is None:
            return
        if not model or not paraphraser:
            self.show_info("Add the model to test and the model that writes paraphrases (Models page) first.")
            return
        project, source, orders = self.project, self.source.source(), self.orders.currentData()
        paid = [label for label in dict.fromkeys((paraphraser, model)) if is_paid(get_model(project, label))]
        if paid and not confirmed:
            def estimate(state):
                costs = decop.estimate_costs(project, model, paraphraser, passages.gather(project, source),
                                             orders=orders)
                return " ".join(f"{label}: {costs[label].describe()}" for label in paid)

            self.start(estimate, "Estimating what DE-COP costs", self._confirm)
            return

        def work(state):
            ids = passages.gather(project, source)
            paraphrased = decop.run_paraphrases(project, paraphraser, passage_ids=ids, state=state)
            said = describe_outcome(project, paraphrased, f"Paraphrases by {paraphraser}")
            if paraphrased.status == "cancelled":
                return said
            asked = decop.run_quiz(project, model, paraphraser, passage_ids=ids, orders=orders, state=state)
            return said + "\n" + describe_outcome(project, asked, f"Questions to {model}")

        self.start(work, f"DE-COP: {model}", self.summary.show_text)

    def _confirm(self, estimate: str) -> None:
        if dialogs.ask(self, f"DE-COP calls a paid API. {estimate} Go ahead?"):
            self.run(confirmed=True)
