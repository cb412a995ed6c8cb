"""The passages side of the Validity page: tick books, sample passages of whole sentences, or import them."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QGroupBox, QHBoxLayout, QLabel, QPushButton, QSpinBox, QVBoxLayout

from ui.widgets.book_ticks import BookTicks, book_cell, cell
from ui.widgets.frame_table import is_missing
from workbench.probes.validity.views import ticked_text

COLUMNS = ["Book", "Year", "Sampled", "Imported"]
BOOK, YEAR, SAMPLED, IMPORTED = range(len(COLUMNS))
TOOLTIPS = {
    YEAR: "Year of first publication (the truth of the year task, unless a passage brings its own)",
    SAMPLED: "Passages of whole sentences sampled from the book's text here",
    IMPORTED: "Passages imported from a file (with their year and reference minutes, if given)",
}
TICK_ALL_UP_TO = 1000


class PassageBooks(BookTicks):
    COLUMNS = COLUMNS
    TOOLTIPS = TOOLTIPS

    def __init__(self, parent=None):
        super().__init__(parent)
        self.overview: list[dict] = []  # the books listed (``workbench.probes.validity.views.passage_books``)

    def fill_row(self, row: int, book: dict, ticked: set[int]) -> None:
        tooltip = book["title"] + (f" — {book['author']}" if book.get("author") else "")
        self.table.setItem(row, BOOK, book_cell(book["title"], int(book["book_id"]), int(book["book_id"]) in ticked,
                                                tooltip))
        self.table.setItem(row, YEAR, cell("" if is_missing(book["year"]) else str(book["year"]), numeric=True))
        sampled = f"{book['sampled']:,}" if book["has_text"] else "no text"
        self.table.setItem(row, SAMPLED, cell(sampled, numeric=True, tooltip="" if book["has_text"] else
                                              "Known only from imported results: there is no text to sample"))
        self.table.setItem(row, IMPORTED, cell(f"{book['imported']:,}" if book["imported"] else "", numeric=True))

    def count_text(self) -> str:
        return ticked_text(self.overview, self.checked_book_ids())


class PassagesBox(QGroupBox):
    sample_requested = Signal()
    import_requested = Signal()
    annotate_requested = Signal()

    def __init__(self, parent=None):
        super().__init__("1. Passages", parent)
        self.ticks = PassageBooks()
        self.words = QSpinBox()
        self.words.setRange(20, 5000)
        self.words.setValue(250)
        self.words.setToolTip("About how many words each passage has (whole sentences, within 20%)")
        self.per_book = QSpinBox()
        self.per_book.setRange(1, 1000)
        self.per_book.setValue(1)
        self.per_book.setToolTip("Passages per book (the paper used one)")
        self.seed = QSpinBox()
        self.seed.setRange(0, 999_999)
        self.seed.setToolTip("The same seed gives the same passages again")
        self.sample_button = QPushButton("Sample passages")
        self.sample_button.setToolTip("Sample passages from the ticked books' texts (books that have some keep them)")
        self.sample_button.clicked.connect(self.sample_requested.emit)
        self.import_button = QPushButton("Import…")
        self.import_button.setToolTip("Import passages from a TSV/CSV file: columns book, passage; optional year, "
                                      "minutes, id")
        self.import_button.clicked.connect(self.import_requested.emit)
        self.annotate_button = QPushButton("Annotation task…")
        self.annotate_button.setToolTip("Make a blinded narrative-time annotation task of the ticked books' passages")
        self.annotate_button.clicked.connect(self.annotate_requested.emit)
        for box, sample in ((self.words, "00000"), (self.per_book, "0000"), (self.seed, "0000000")):
            box.setMaximumWidth(box.fontMetrics().horizontalAdvance(sample) + 30)
        settings = QHBoxLayout()
        settings.addWidget(QLabel("Words"))
        settings.addWidget(self.words)
        settings.addWidget(QLabel("Per book"))
        settings.addWidget(self.per_book)
        settings.addWidget(QLabel("Seed"))
        settings.addWidget(self.seed)
        settings.addStretch(1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.sample_button)
        buttons.addWidget(self.import_button)
        buttons.addWidget(self.annotate_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.ticks, 1)
        layout.addLayout(settings)
        layout.addLayout(buttons)

    def load(self, project, books: list[dict], *, keep_ticks: bool = True) -> None:
        """``books``: ``workbench.probes.validity.views.passage_books``."""
        ticked = set(self.ticks.checked_book_ids()) if keep_ticks else set()
        if not keep_ticks and len(books) <= TICK_ALL_UP_TO:
            ticked = {int(b["book_id"]) for b in books}
        self.ticks.project = project
        self.ticks.overview = books
        self.ticks.show_rows(books, ticked)

    def checked_book_ids(self) -> list[int]:
        return self.ticks.checked_book_ids()

    def set_busy(self, busy: bool) -> None:
        for button in (self.sample_button, self.import_button, self.annotate_button):
            button.setEnabled(not busy)
