"""The books table of the Library page: a Qt model over ``workbench.corpus.library`` and its filter.

Edits (title, author, year, tags) are saved at once through the library functions; a refused edit
(a year that is not a year) is reported through ``edit_refused`` and the stored value stays.

With hundreds of books, Qt asks for the cells, their flags and (while sorting) their order tens of
thousands of times: each row's texts and sort keys are worked out once when it is loaded or edited,
and a book's row is found through a dictionary, not a search.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QBrush, QColor

from workbench.corpus.library import (
    RESULTS_ONLY_HINT,
    Book,
    format_tags,
    get_book,
    list_books,
    parse_tags,
    set_tags,
    update_book,
)
from workbench.errors import UserError

if TYPE_CHECKING:
    from workbench.project import Project

COLUMNS = ["ID", "Title", "Author", "Year", "Words", "Tags", "Source"]
ID, TITLE, AUTHOR, YEAR, WORDS, TAGS, SOURCE = range(len(COLUMNS))
EDITABLE = {TITLE: "title", AUTHOR: "author", YEAR: "year", TAGS: "tags"}
NUMERIC = {ID, YEAR, WORDS}
TOOLTIPS = {
    TITLE: "Double-click a title to correct it",
    AUTHOR: "Double-click an author to correct it",
    TAGS: "Tags as name=value, separated by semicolons, e.g. genre=gothic; decade=1890s",
    YEAR: "Year of first publication (a whole number; leave empty if unknown)",
}
#: an empty Year cell: why it matters and how to fill it (Gutenberg files do not give a year)
NO_YEAR_HINT = ("No year of first publication yet: the files did not give one. Double-click to type it (e.g. 1847), "
                "or use Import ▸ Metadata table with a 'year' column for many books at once. Charts and analyses by "
                "year or decade leave out books without one.")
BOOK_ID_ROLE = Qt.ItemDataRole.UserRole + 1
RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
NO_TEXT = "no text"  # the Words cell of a book known only from imported results
RESULTS_ONLY_SOURCE = "results only: "  # before the results file's name in its Source cell


class BooksModel(QAbstractTableModel):
    edit_refused = Signal(str)  # a plain message: why an edit was not saved
    edited = Signal(int)  # a book's title, author, year or tags were changed here (its id)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.project: "Project | None" = None
        self.books: list[Book] = []
        self._texts: list[list[str]] = []  # per row: the text of each column
        self._keys: list[list[Any]] = []  # per row: the sort key of each column
        self._rows: dict[int, int] = {}  # book id -> row
        self._flags: dict[int, Qt.ItemFlag] = {}  # column -> flags of its cells
        self._grey = QBrush(QColor("#777"))  # the text-less books' "no text" and "results only"

    def load(self, project: "Project | None") -> None:
        """Read the books again. When books were only added or changed (an import going on, an edit), the
        new rows are inserted and the changed ones updated: the view keeps its scroll position and
        selection, and the sorted view places only the new rows instead of sorting every row again."""
        books = list_books(project) if project is not None else []
        if project is self.project and self._only_grew(books):
            self._update(books)
            return
        self.beginResetModel()
        self.project = project
        self.books = books
        self._texts = [self._row_texts(book) for book in books]
        self._keys = [self._row_keys(book, texts) for book, texts in zip(books, self._texts)]
        self._rows = {book.id: row for row, book in enumerate(books)}
        self.endResetModel()

    def _only_grew(self, books: list[Book]) -> bool:
        """True if ``books`` holds the books shown, in the same rows, and perhaps more after them."""
        old = self.books
        return len(books) >= len(old) and all(new.id == book.id for new, book in zip(books, old))

    def _update(self, books: list[Book]) -> None:
        last = len(COLUMNS) - 1
        for row, (new, book) in enumerate(zip(books, self.books)):
            if new != book:
                self._set_book(row, new)
                self.dataChanged.emit(self.index(row, 0), self.index(row, last))
        if len(books) > len(self.books):
            added = books[len(self.books):]
            self.beginInsertRows(QModelIndex(), len(self.books), len(books) - 1)
            for book in added:
                self._rows[book.id] = len(self.books)
                self.books.append(book)
                self._texts.append(self._row_texts(book))
                self._keys.append(self._row_keys(book, self._texts[-1]))
            self.endInsertRows()

    def _row_texts(self, book: Book) -> list[str]:
        return [self.display(book, column) for column in range(len(COLUMNS))]

    @staticmethod
    def _row_keys(book: Book, texts: list[str]) -> list[Any]:
        keys: list[Any] = [text.casefold() for text in texts]
        keys[ID] = book.id
        keys[YEAR] = (book.year is None, book.year or 0)  # unknown years last
        keys[WORDS] = book.words if book.has_text else -1  # books without text below the shortest text
        return keys

    def _set_book(self, row: int, book: Book) -> None:
        self.books[row] = book
        self._texts[row] = self._row_texts(book)
        self._keys[row] = self._row_keys(book, self._texts[row])

    def book_at(self, row: int) -> Book:
        return self.books[row]

    def row_of(self, book_id: int) -> int | None:
        return self._rows.get(book_id)

    def without_text(self) -> int:
        """How many books are known only from imported results."""
        return sum(not book.has_text for book in self.books)

    def without_year(self) -> int:
        return sum(book.year is None for book in self.books)

    def column_texts(self, column: int) -> list[str]:
        """The text of every cell of ``column`` (to size it)."""
        return [texts[column] for texts in self._texts]

    def haystack(self, row: int) -> str:
        """What the filter searches: title, author, tags and file name, case-folded."""
        keys = self._keys[row]
        return " ".join(keys[c] for c in (TITLE, AUTHOR, TAGS, SOURCE))

    # ------------------------------------------------------------------ Qt model interface
    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802 (Qt's name)
        return 0 if parent.isValid() else len(self.books)

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return TOOLTIPS.get(section)
        return None

    def flags(self, index: QModelIndex) -> Qt.ItemFlag:
        column = index.column()
        flags = self._flags.get(column) if index.isValid() else None
        if flags is None:
            flags = super().flags(index)
            if column in EDITABLE:
                flags |= Qt.ItemFlag.ItemIsEditable
            if index.isValid():
                self._flags[column] = flags  # the same for every row of a column
        return flags

    def display(self, book: Book, column: int) -> str:
        if column == ID:
            return str(book.id)
        if column == TITLE:
            return book.title
        if column == AUTHOR:
            return book.author
        if column == YEAR:
            return "" if book.year is None else str(book.year)
        if column == WORDS:
            return f"{book.words:,}" if book.has_text else NO_TEXT
        if column == TAGS:
            return format_tags(book.tags)
        return (book.source_name or "") if book.has_text else RESULTS_ONLY_SOURCE + (book.source_name or "")

    def sort_key(self, row: int, column: int) -> Any:
        return self._keys[row][column]

    def data(self, index: QModelIndex, role=Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, column = index.row(), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._texts[row][column]
        if role == Qt.ItemDataRole.EditRole:
            return "" if column == WORDS else self._texts[row][column]
        if role == Qt.ItemDataRole.ToolTipRole and column in (WORDS, SOURCE) and not self.books[row].has_text:
            return RESULTS_ONLY_HINT
        if role == Qt.ItemDataRole.ToolTipRole and column == YEAR and self.books[row].year is None:
            return NO_YEAR_HINT
        if role == Qt.ItemDataRole.ToolTipRole and column in (TITLE, AUTHOR, TAGS, SOURCE):
            return self._texts[row][column] or None
        if role == Qt.ItemDataRole.ForegroundRole and column in (WORDS, SOURCE) and not self.books[row].has_text:
            return self._grey
        if role == Qt.ItemDataRole.TextAlignmentRole and column in NUMERIC:
            return RIGHT
        if role == BOOK_ID_ROLE:
            return self.books[row].id
        return None

    def setData(self, index: QModelIndex, value: Any, role=Qt.ItemDataRole.EditRole) -> bool:  # noqa: N802
        if role != Qt.ItemDataRole.EditRole or index.column() not in EDITABLE or self.project is None:
            return False
        book = self.books[index.row()]
        field = EDITABLE[index.column()]
        text = str(value).strip()
        if text == self._texts[index.row()][index.column()]:
            return False
        try:
            if field == "tags":
                set_tags(self.project, book.id, parse_tags(text), replace=True)
            else:
                update_book(self.project, book.id, **{field: text})
        except UserError as exc:
            self.edit_refused.emit(str(exc))
            return False
        self._set_book(index.row(), get_book(self.project, book.id))
        self.dataChanged.emit(self.index(index.row(), 0), self.index(index.row(), len(COLUMNS) - 1))
        self.edited.emit(book.id)
        return True


class BooksFilter(QSortFilterProxyModel):
    """Keeps books whose title, author, tags or file name contain every word typed; sorts numbers as numbers."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.words: list[str] = []

    def set_filter_text(self, text: str) -> None:
        self.beginFilterChange()
        self.words = text.casefold().split()
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, source_row: int, source_parent: QModelIndex) -> bool:  # noqa: N802
        if not self.words:
            return True
        haystack = self.sourceModel().haystack(source_row)
        return all(word in haystack for word in self.words)

    def lessThan(self, left: QModelIndex, right: QModelIndex) -> bool:  # noqa: N802
        keys = self.sourceModel()._keys
        column = left.column()
        return keys[left.row()][column] < keys[right.row()][column]
