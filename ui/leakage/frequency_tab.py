"""The Book frequency tab: how often each book's n-grams occur in a reference corpus, against name-cloze
accuracy, with Spearman's rho overall and per group."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QSpinBox

from ui.leakage.analysis_tab import AnalysisTab, corpus_names, model_labels
from ui.widgets.combo import refill_names
from ui.widgets.frame_table import Column, count, decimal, share
from workbench.probes.leakage import frequency

ANY_MODEL = "(the only model with results)"


class FrequencyTab(AnalysisTab):
    def __init__(self, ops, parent=None):
        super().__init__(ops, [
            Column("book", "Book", stretch=True), Column("year", "Year", numeric=True), Column("group", "Group"),
            Column("passages", "n-grams", count, numeric=True),
            Column("mean_count", "Mean count", decimal, numeric=True, tooltip="Mean occurrences of its n-grams"),
            Column("zero_counts", "Not found", count, numeric=True),
            Column("accuracy", "Cloze accuracy", share, numeric=True),
        ], key="book_id", parent=parent)
        self.corpus = QComboBox()
        self.model = QComboBox()
        self.per_book = QSpinBox()
        self.per_book.setRange(1, 1000)
        self.per_book.setValue(frequency.PER_BOOK)
        self.gram = QSpinBox()
        self.gram.setRange(1, 100)
        self.gram.setValue(frequency.GRAM)
        self.split = QLineEdit()
        self.split.setPlaceholderText(f"before/after {frequency.YEAR_SPLIT}")
        self.split.setToolTip("A book tag to compare within (empty: published before 1928 and from 1928 on)")
        self.run_button = QPushButton("Count")
        self.run_button.clicked.connect(self.run)
        self.rho = QLabel("")
        self.rho.setWordWrap(True)
        row = QHBoxLayout(self.settings)
        row.setContentsMargins(0, 0, 0, 0)
        for label, widget in (("Corpus", self.corpus), ("Accuracy of", self.model), ("Passages per book", self.per_book),
                              ("Words per n-gram", self.gram), ("Split by tag", self.split)):
            row.addWidget(QLabel(label))
            row.addWidget(widget)
        row.addWidget(self.run_button)
        row.addStretch(1)
        self.layout().insertWidget(3, self.rho)

    def refresh_choices(self) -> None:
        refill_names(self.corpus, corpus_names(self.project))
        refill_names(self.model, model_labels(self.project, ("hf", "gguf", "openai", "external")), blank=ANY_MODEL)

    def _choices(self) -> tuple[str | None, str | None, str | None]:
        return self.corpus.currentData(), self.model.currentData(), self.split.text().strip() or None

    def results_reader(self):
        corpus, model, split = self._choices()
        if not corpus:
            return None

        def read(project):
            table = frequency.book_frequency(project, corpus, model=model, split=split)
            enough = table["accuracy"].notna().sum() >= 3
            table.attrs["rho"] = frequency.correlations(project, corpus, model=model, split=split) if enough else None
            return table

        return read

    def run(self) -> None:
        corpus, _, _ = self._choices()
        if self.require_project() is None:
            return
        if not corpus:
            self.show_info("Build a reference corpus (Corpora tab) or add a remote one first.")
            return
        project, per_book, gram = self.project, self.per_book.value(), self.gram.value()

        def work(state):
            return frequency.run_frequency(project, corpus, per_book=per_book, gram=gram, state=state)

        self.start_run(work, f"Counting n-grams in {corpus}", f"N-gram counts in {corpus}")

    def show_results(self, table) -> None:
        self.table.show_frame(table)
        rho = table.attrs.get("rho")
        if rho is None or rho.empty:
            self.rho.setText("Spearman's rho needs cloze accuracy for at least three books.")
            return
        parts = []
        for row in rho.itertuples():
            interval = "" if row.ci_low != row.ci_low else f", 95% CI {row.ci_low:.2f} to {row.ci_high:.2f}"
            value = "n/a" if row.rho != row.rho else f"{row.rho:.2f} (p = {row.p_value:.2g}{interval})"
            parts.append(f"{row.group}: rho = {value}, {row.books} book{'' if row.books == 1 else 's'}")
        self.rho.setText("Frequency against cloze accuracy — " + "; ".join(parts))
