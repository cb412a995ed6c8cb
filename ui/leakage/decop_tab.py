"""The DE-COP tab: a model paraphrases the passages, the tested model picks the verbatim one among four
options in balanced orders; accuracy per book against chance (25%)."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton

from ui.leakage.analysis_tab import AnalysisTab, SourceChooser, fill_combo, model_labels
from ui.widgets.frame_table import Column, count, share
from workbench.probes.leakage import decop, passages

RUNNABLE = ("hf", "gguf", "openai")


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
        row = QHBoxLayout(self.settings)
        row.setContentsMargins(0, 0, 0, 0)
        for label, widget in (("Model tested", self.model), ("Paraphrases by", self.paraphraser),
                              ("Passages", self.source), ("Orders", self.orders)):
            row.addWidget(QLabel(label))
            row.addWidget(widget)
        row.addWidget(self.run_button)
        row.addStretch(1)

    def refresh_choices(self) -> None:
        labels = model_labels(self.project, RUNNABLE)
        fill_combo(self.model, labels)
        fill_combo(self.paraphraser, labels)

    def results_reader(self):
        return decop.accuracy_frame

    def run(self) -> None:
        model, paraphraser = self.model.currentData(), self.paraphraser.currentData()
        if self.require_project() is None:
            return
        if not model or not paraphraser:
            self.show_info("Add the model to test and the model that writes paraphrases (Models page) first.")
            return
        project, source, orders = self.project, self.source.source(), self.orders.currentData()

        def work(state):
            ids = passages.gather(project, source)
            decop.run_paraphrases(project, paraphraser, passage_ids=ids, state=state)
            return decop.run_quiz(project, model, paraphraser, passage_ids=ids, orders=orders, state=state)

        self.start(work, f"DE-COP: {model}", self.report_run)
