"""The books side of the Name cloze page: tick books (one by one or by tag), see their passages, extract.

Shows ``workbench.probes.cloze.overview.books_overview``: per book its extracted passages, the
candidates extraction found, and the flag for books with fewer passages than asked for; the rows' texts and the
count line are written by the core (``workbench.probes.cloze.views.book_rows``, ``ticked_text``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QCheckBox, QGroupBox, QHBoxLayout, QLabel, QPushButton, QSpinBox, QVBoxLayout

from ui.widgets.book_ticks import BookTicks, book_cell, cell
from workbench.probes.cloze.views import book_rows, empty_overview, ticked_books, ticked_text

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = ["Book", "Year", "Tags", "Passages", "Imported", "Candidates", "Flag"]
BOOK, YEAR, TAGS, PASSAGES, IMPORTED, CANDIDATES, FLAG = range(len(COLUMNS))
TOOLTIPS = {
    PASSAGES: "Passages with one hidden name extracted from the book here",
    IMPORTED: "Passages that came with imported results (e.g. the published gpt4-books files)",
    CANDIDATES: "Names that qualified when the passages were extracted (in fast mode: those seen before stopping)",
    FLAG: "Flagged books had fewer candidates than passages asked for; charts can leave them out",
}
FLAG_COLOUR = QColor("#b35900")
DEFAULT_PER_BOOK = 100
TICK_ALL_UP_TO = 50


class PassageBooks(BookTicks):
    """The books with their passage counts; the count line adds up passages and flags of the ticked ones."""

    COLUMNS = COLUMNS
    TOOLTIPS = TOOLTIPS
    INTERACTIVE_COLUMNS = (TAGS,)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.overview = empty_overview()

    def fill_row(self, row: int, book: dict, ticked: set[int]) -> None:
        """One row of ``views.book_rows`` (texts written by the core)."""
        self.table.setItem(row, BOOK, book_cell(book["title"], book["book_id"], book["book_id"] in ticked,
                                                book["tooltip"]))
        self.table.setItem(row, YEAR, cell(book["year"], numeric=True))
        self.table.setItem(row, TAGS, cell(book["tags"], tooltip=book["tags"]))
        self.table.setItem(row, PASSAGES, cell(book["passages"], numeric=True, tooltip=book["passages_tip"]))
        self.table.setItem(row, IMPORTED, cell(book["imported"], numeric=True))
        self.table.setItem(row, CANDIDATES, cell(book["candidates"], numeric=True))
        flag = cell(book["flag"])
        if book["flag"]:
            flag.setForeground(QBrush(FLAG_COLOUR))
            flag.setToolTip(book["flag_tip"])
        self.table.setItem(row, FLAG, flag)

    def checked_overview(self) -> pd.DataFrame:
        return ticked_books(self.overview, self.checked_book_ids())

    def count_text(self) -> str:
        return ticked_text(self.overview, self.checked_book_ids())


class BooksChooser(QGroupBox):
    checked_changed = Signal()
    extract_requested = Signal()

    def __init__(self, parent=None):
        super().__init__("1. Books and passages", parent)
        self.ticks = PassageBooks()
        self.ticks.changed.connect(self.checked_changed.emit)
        # the parts tests and the page reach for
        self.table, self.tag_box, self.count_label = self.ticks.table, self.ticks.tag_box, self.ticks.count_label
        self.tag_button, self.all_button, self.none_button = (
            self.ticks.tag_button, self.ticks.all_button, self.ticks.none_button)

        self.per_book = QSpinBox()
        self.per_book.setRange(1, 10_000)
        self.per_book.setValue(DEFAULT_PER_BOOK)
        self.per_book.setToolTip("How many passages to sample from each book (the paper used 100)")
        self.seed = QSpinBox()
        self.seed.setRange(0, 999_999)
        self.seed.setToolTip("The same seed gives the same passages again")
        self.fast = QCheckBox("Fast")
        self.fast.setToolTip("Stop reading a book once it has enough passages (still spread over the whole book)")
        self.extract_button = QPushButton("Extract passages")
        self.extract_button.setToolTip("Find passages with one hidden name in the ticked books (in the background)")
        self.extract_button.clicked.connect(self.extract_requested.emit)
        # narrow number boxes: the row must fit half a laptop screen
        self.per_book.setMaximumWidth(self.per_book.fontMetrics().horizontalAdvance("000000") + 30)
        self.seed.setMaximumWidth(self.seed.fontMetrics().horizontalAdvance("0000000") + 30)
        bottom = QHBoxLayout()
        bottom.addWidget(QLabel("Per book"))
        bottom.addWidget(self.per_book)
        bottom.addWidget(QLabel("Seed"))
        bottom.addWidget(self.seed)
        bottom.addWidget(self.fast)
        bottom.addStretch(1)
        bottom.addWidget(self.extract_button)

        layout = QVBoxLayout(self)
        layout.addWidget(self.ticks, 1)
        layout.addLayout(bottom)

    def load(self, project, overview: pd.DataFrame, *, keep_ticks: bool = True) -> None:
        """Show ``books_overview``. With ``keep_ticks`` books ticked before stay ticked and new books start
        unticked; otherwise (a project just opened) every book is ticked, up to ``TICK_ALL_UP_TO`` books."""
        if keep_ticks and project is self.ticks.project and overview.equals(self.ticks.overview):
            # the page is shown again and nothing changed: the rows stand (filling 571 of them took 50 ms)
            self.ticks.refresh_count()
            return
        ticked = set(self.ticks.checked_book_ids()) if keep_ticks else set()
        if not keep_ticks and len(overview) <= TICK_ALL_UP_TO:
            ticked = {int(b) for b in overview["book_id"]}
        self.ticks.project = project
        self.ticks.overview = overview
        self.ticks.show_rows(book_rows(overview), ticked)

    @property
    def overview(self) -> pd.DataFrame:
        return self.ticks.overview

    def checked_book_ids(self) -> list[int]:
        return self.ticks.checked_book_ids()

    def set_checked(self, book_ids, checked: bool = True) -> None:
        self.ticks.set_checked(book_ids, checked)

    def set_all_checked(self, checked: bool) -> None:
        self.ticks.set_all_checked(checked)

    def checked_overview(self) -> pd.DataFrame:
        return self.ticks.checked_overview()
