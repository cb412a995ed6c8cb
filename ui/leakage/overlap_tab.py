"""The Overlap tab: the longest sequence each passage shares with a reference corpus, its frequency and its
chance of occurring; a double click shows the passage with that sequence marked."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton

from ui.leakage.analysis_tab import AnalysisTab, SourceChooser, corpus_names
from ui.leakage.passage_dialog import PassageDialog
from ui.widgets.combo import refill_names
from ui.widgets.frame_table import KEY_ROLE, Column, count, decimal, share, yes_only
from workbench.probes.leakage import overlap, passages

NO_CORPUS = "(build or add a corpus first)"


def chance(value) -> str:
    if value is None or value != value:
        return ""
    return f"{float(value):.2g}"


class OverlapTab(AnalysisTab):
    def __init__(self, ops, parent=None):
        super().__init__(ops, [
            Column("book", "Book", stretch=False), Column("passage_id", "Passage"),
            Column("tokens", "Tokens", count, numeric=True),
            Column("longest", "Longest overlap", count, numeric=True,
                   tooltip="The longest run of the passage's tokens that occurs in the corpus"),
            Column("covered_share", "Share", share, numeric=True, tooltip="Longest overlap / passage length"),
            Column("frequency", "Frequency", count, numeric=True, tooltip="How often that run occurs in the corpus"),
            Column("log_prob", "ln p", decimal, numeric=True,
                   tooltip="Natural log of the run's probability under a 5-gram model of the same corpus"),
            Column("chance_p", "Chance", chance, numeric=True,
                   tooltip="Chance that a run this probable occurs at least once in a corpus of this size"),
            Column("unlikely_by_chance", "Not chance", yes_only,
                   tooltip="Chance below 0.05: the overlap is unlikely to be a coincidence"),
            Column("longest_text", "Longest shared sequence", stretch=True),
        ], key="item_id", parent=parent)
        self.corpus = QComboBox()
        self.source = SourceChooser()
        self.run_button = QPushButton("Find overlaps")
        self.run_button.clicked.connect(self.run)
        row = QHBoxLayout(self.settings)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Corpus"))
        row.addWidget(self.corpus)
        row.addWidget(QLabel("Passages"))
        row.addWidget(self.source)
        row.addWidget(self.run_button)
        row.addStretch(1)
        self.table.cellDoubleClicked.connect(self.open_passage)
        self.details = ops.slot(self)
        self.dialog: PassageDialog | None = None

    def refresh_choices(self) -> None:
        names = corpus_names(self.project)
        refill_names(self.corpus, names, blank=None if names else NO_CORPUS)

    def chosen_corpus(self) -> str | None:
        return self.corpus.currentData()

    def results_reader(self):
        name = self.chosen_corpus()
        return (lambda project: overlap.overlap_frame(project, name)) if name else None

    def run(self) -> None:
        name = self.chosen_corpus()
        if self.require_project() is None:
            return
        if not name:
            self.show_info("Build a reference corpus (Corpora tab) or add a remote one first.")
            return
        project, source = self.project, self.source.source()

        def work(state):
            ids = passages.gather(project, source)
            return overlap.run_overlap(project, name, passage_ids=ids, state=state)

        self.start_run(work, f"Overlap with {name}", f"Overlap with {name}")

    def open_passage(self, row: int, _column: int = 0) -> None:
        """Show the passage with its longest overlap marked (read in the background: a remote index is asked
        to tokenize it again)."""
        item = self.table.item(row, 0)
        name = self.chosen_corpus()
        if item is None or not name or self.project is None:
            return
        project, passage = self.project, int(item.data(KEY_ROLE))
        self.details.start(lambda state: overlap.passage_detail(project, name, passage), label="Reading the passage",
                           project=project, on_done=self.show_passage, on_error=self.work_failed)

    def show_passage(self, detail: dict) -> None:
        self.dialog = PassageDialog(detail, self)
        self.dialog.open()
