"""The Overlap tab: the longest sequence each passage shares with a reference corpus, its frequency and its
chance of occurring (estimated on the same corpus less the overlap's own occurrences, or on a background
corpus chosen under "Chance from"); the study's two figures (overlap against passage length with y = x,
the overlap's frequency against its length); a double click on a row, or a click on a point, shows the
passage with that sequence marked."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QPushButton

from ui.leakage.analysis_tab import NO_CORPUS, AnalysisTab, SourceChooser, corpus_names, refill_or_hint
from ui.leakage.passage_dialog import PassageDialog
from ui.widgets.combo import refill_names
from ui.widgets.frame_table import KEY_ROLE, Column, count, decimal, plain, share, yes_only
from workbench.probes.leakage import overlap, passages
from workbench.probes.leakage.views import OverlapChoices, overlap_table
from workbench.run_failures import describe_outcome

SHARED_TEXT_PX = 240  # the longest shared sequence's column (the last: it takes what room is left)
BOOK_PX = 220  # the widest the book column starts
SAME_CORPUS = "the same corpus, less the overlap's own copies"


def chance(value) -> str:
    if value is None or value != value:
        return ""
    return f"{float(value):.2g}"


def one_line(value) -> str:
    """The shared text on one line: its line breaks as spaces."""
    return " ".join(plain(value).split())


class OverlapTab(AnalysisTab):
    keeps_note_room = True
    charts_from_results = True  # both charts draw the overlap frame the table shows
    def __init__(self, ops, parent=None):
        super().__init__(ops, [
            Column("book", "Book", stretch=False), Column("passage_id", "Passage"),
            Column("tokens", "Tokens", count, numeric=True),
            Column("longest", "Longest overlap", count, numeric=True,
                   tooltip="The longest run of the passage's tokens that occurs in the corpus"),
            Column("covered_share", "Share", share, numeric=True, tooltip="Longest overlap / passage length"),
            Column("frequency", "Frequency", count, numeric=True, tooltip="How often that run occurs in the corpus"),
            Column("log_prob", "ln p", decimal, numeric=True,
                   tooltip="Natural log of the run's probability under the chance model (a 5-gram model of the "
                           "corpus chosen under 'Chance from', never counting the run's own occurrences)"),
            Column("chance_p", "Chance", chance, numeric=True,
                   tooltip="Chance that a run this probable occurs at least once in a corpus of this size"),
            Column("unlikely_by_chance", "Not chance", yes_only,
                   tooltip="Chance below 0.05: the overlap is unlikely to be a coincidence"),
            Column("longest_text", "Longest shared sequence", one_line),
        ], key="item_id", parent=parent, charts="leakage.overlap")
        self.table.horizontalHeader().setStretchLastSection(True)
        self.corpus = QComboBox()
        self.background = QComboBox()
        self.background.setToolTip("Where the chance of each overlap is estimated: the same corpus with the "
                                   "overlap's own occurrences taken out of its counts, or another corpus (as the "
                                   "leakage study uses Gigaword). Never text that holds the overlap itself.")
        self.source = SourceChooser()
        self.run_button = QPushButton("Find overlaps")
        self.run_button.clicked.connect(self.run)
        self.lay_out_settings((("Corpus", self.corpus), ("Chance from", self.background), ("Passages", self.source),
                               self.run_button))
        self.choices = OverlapChoices()
        self.bind("corpus", self.corpus.currentData, self.corpus.currentIndexChanged)
        self.bind("background", lambda: self.background.currentData() or None, self.background.currentIndexChanged)
        self.bind("source", self.source.source, self.source.changed)
        self.refresh_on_choice(self.corpus, self.background)
        self.table.cellDoubleClicked.connect(self.open_passage)
        self.details = ops.slot(self)
        self.dialog: PassageDialog | None = None

    def refresh_choices(self) -> None:
        names = corpus_names(self.project)
        refill_or_hint(self.corpus, names, NO_CORPUS)
        refill_names(self.background, [n for n in names if n != self.corpus.currentData()], blank=SAME_CORPUS)

    def results_query(self):
        return overlap_table if self.choices.corpus else None

    def show_results(self, frame) -> None:
        self.show_note(frame.attrs.get("note", ""))  # before the charts are drawn: at the size they will have
        super().show_results(frame)
        titles = [c.title for c in self.table.columns]
        book = titles.index("Book")
        self.table.setColumnWidth(book, min(self.table.columnWidth(book), BOOK_PX))
        self.table.setColumnWidth(titles.index("Longest shared sequence"), SHARED_TEXT_PX)

    def chart_options(self):
        name = self.choices.corpus
        if not name:
            return None, "Build a reference corpus (Corpora tab) or add a remote one, then press Find overlaps."
        return ({"corpus": name, "background": self.choices.background},
                f"No passage has been compared with {name} yet: press Find overlaps.")

    def point_picked(self, picked: dict) -> None:
        if "item_id" in picked:
            self.open_item(int(picked["item_id"]), picked["book"], picked["passage_id"])

    def run(self) -> None:
        name = self.choices.corpus
        if self.require_project() is None:
            return
        if not name:
            self.show_info("Build a reference corpus (Corpora tab) or add a remote one first.")
            return
        project, source, background = self.project, self.choices.source, self.choices.background

        def work(state):
            ids = passages.gather(project, source)
            report = overlap.run_overlap(project, name, passage_ids=ids, state=state)
            said = describe_outcome(project, report, f"Overlap with {name}")
            if background is None or report.status == "cancelled":
                return said
            counted = overlap.run_background(project, name, background, passage_ids=ids, state=state)
            return said + "\n" + describe_outcome(project, counted, f"Counts of the overlaps in {background}")

        self.start(work, f"Overlap with {name}", self.summary.show_text)

    def open_passage(self, row: int, _column: int = 0) -> None:
        """Show the passage with its longest overlap marked (read in the background: a remote index is asked
        to tokenize it again)."""
        item = self.table.item(row, 0)
        if item is not None:
            self.open_item(int(item.data(KEY_ROLE)), item.text(), self.table.item(row, 1).text())

    def open_item(self, item_id: int, book: str, passage_id: str) -> None:
        name = self.choices.corpus
        if not name or self.project is None:
            return
        project, background = self.project, self.choices.background

        def work(state):
            return {**overlap.passage_detail(project, name, item_id, background=background), "book": book,
                    "passage_id": passage_id}

        self.details.start(work, label="Reading the passage", project=project, on_done=self.show_passage,
                           on_error=self.work_failed)

    def show_passage(self, detail: dict) -> None:
        self.dialog = PassageDialog(detail, self)
        self.dialog.open()

