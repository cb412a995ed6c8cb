"""Ticking books to take passages or scenes from.

Only shown in the dialog that adds items (never during a session: it names books and authors).
"""

from __future__ import annotations

from ui.widgets.book_ticks import BookTicks, book_cell, cell
from workbench.corpus.library import Book, format_tags, list_books

COLUMNS = ["Book", "Author", "Year", "Words", "Tags"]
BOOK, AUTHOR, YEAR, WORDS, TAGS = range(len(COLUMNS))


class BookList(BookTicks):
    COLUMNS = COLUMNS
    INTERACTIVE_COLUMNS = (TAGS,)
    NO_BOOKS = "The project has no books yet: import some on the Library page."

    def __init__(self, parent=None):
        super().__init__(parent)
        self.tag_box.setPlaceholderText("Tick books by tag, e.g. group=famous")

    def load(self, project) -> None:
        self.project = project
        self.show_rows(list_books(project) if project is not None else [])

    def fill_row(self, row: int, book: Book, ticked: set[int]) -> None:
        self.table.setItem(row, BOOK, book_cell(book.display_name, book.id, book.id in ticked))
        self.table.setItem(row, AUTHOR, cell(book.author or ""))
        self.table.setItem(row, YEAR, cell("" if book.year is None else str(book.year), numeric=True))
        self.table.setItem(row, WORDS, cell(f"{book.words:,}", numeric=True))
        tags = format_tags(book.tags)
        self.table.setItem(row, TAGS, cell(tags, tooltip=tags))
