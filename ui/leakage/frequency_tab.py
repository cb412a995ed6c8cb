"""The Book frequency tab: how often each book's n-grams occur in a reference corpus, against name-cloze
accuracy, with Spearman's rho overall and per group, drawn as a chart above the table."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QLineEdit, QPushButton, QSpinBox

from ui.leakage.analysis_tab import NO_CORPUS, AnalysisTab, corpus_names, refill_or_hint
from ui.widgets.frame_table import Column, count, decimal, share
from workbench.probes.leakage import frequency
from workbench.probes.leakage.views import FrequencyChoices, frequency_table

NO_CLOZE_RESULTS = "(no name-cloze results yet)"


class FrequencyTab(AnalysisTab):
    keeps_note_room = True
    def __init__(self, ops, parent=None):
        super().__init__(ops, [
            Column("book", "Book", stretch=True), Column("year", "Year", numeric=True), Column("group", "Group"),
            Column("passages", "n-grams", count, numeric=True),
            Column("mean_count", "Mean count", decimal, numeric=True, tooltip="Mean occurrences of its n-grams"),
            Column("zero_counts", "Not found", count, numeric=True),
            Column("accuracy", "Cloze accuracy", share, numeric=True),
        ], key="book_id", parent=parent, charts="leakage.frequency")
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
        self.lay_out_settings((("Corpus", self.corpus), ("Name-cloze accuracy of", self.model), ("Split by tag", self.split)),
                              (("Passages per book", self.per_book), ("Words per n-gram", self.gram), self.run_button))
        self.choices = FrequencyChoices()
        self.bind("corpus", self.corpus.currentData, self.corpus.currentIndexChanged)
        self.bind("model", self.model.currentData, self.model.currentIndexChanged)
        self.bind("split", lambda: self.split.text().strip() or None, self.split.editingFinished)
        for box, field in ((self.per_book, "per_book"), (self.gram, "gram")):
            box.setKeyboardTracking(False)
            self.bind(field, box.value, box.valueChanged)
        self.refresh_on_choice(self.corpus, self.model)
        self.split.editingFinished.connect(self.refresh)
        for box in (self.per_book, self.gram):  # the table and chart show the counts made with these settings
            box.valueChanged.connect(self.refresh)
        self._settings_shown_for: tuple[str, str] | None = None

    def refresh_choices(self) -> None:
        from workbench.probes.cloze.analysis import model_labels

        refill_or_hint(self.corpus, corpus_names(self.project), NO_CORPUS)
        refill_or_hint(self.model, model_labels(self.project) if self.project is not None else [], NO_CLOZE_RESULTS)
        corpus = self.corpus.currentData()
        shown_for = (str(self.project.path), corpus) if self.project is not None and corpus else None
        if shown_for and shown_for != self._settings_shown_for:  # a corpus chosen: its newest count's settings
            self._settings_shown_for = shown_for
            newest = frequency.counted_settings(self.project, corpus)
            if newest is not None:
                for box, key in ((self.per_book, "per_book"), (self.gram, "gram")):
                    box.blockSignals(True)
                    box.setValue(newest[key])
                    box.blockSignals(False)

    def results_query(self):
        return frequency_table if self.choices.corpus else None

    def chart_options(self):
        corpus, model, split = self.choices.corpus, self.choices.model, self.choices.split
        if not corpus:
            return None, "Build a reference corpus (Corpora tab) or add a remote one, then press Count."
        if not model:
            return None, ("No model has name-cloze results yet. Run the name cloze (Name cloze page); this chart then "
                          "shows each book's frequency in the corpus against the model's accuracy.")
        return ({"corpus": corpus, "model": model, "split": split, **self.choices.settings},
                f"Press Count to count each book's n-grams in {corpus} with these settings (the books need "
                f"name-cloze results of {model}).")

    def run(self) -> None:
        corpus = self.choices.corpus
        if self.require_project() is None:
            return
        if not corpus:
            self.show_info("Build a reference corpus (Corpora tab) or add a remote one first.")
            return
        project, per_book, gram = self.project, self.choices.per_book, self.choices.gram

        def work(state):
            return frequency.run_frequency(project, corpus, per_book=per_book, gram=gram, state=state)

        self.start_run(work, f"Counting n-grams in {corpus}", f"N-gram counts in {corpus}")

    def show_results(self, table) -> None:
        self.table.show_frame(table)
        self.show_note(table.attrs.get("note", ""))
