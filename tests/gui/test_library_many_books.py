"""The Library page with many books: a reload keeps every selected book selected in one selection change,
books added while the page is open (an import going on) are inserted rather than reloading the table,
changed books are updated in place, sorting and filtering use the stored values, and deleting runs in the
background."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt

from tests.fixtures.books import novel_text
from ui.library.books_model import AUTHOR, TITLE, WORDS, YEAR
from ui.library.page import LibraryPage
from workbench.corpus.importer import store_book
from workbench.corpus.library import list_books, set_tags, update_book
from workbench.corpus.sources import draft_from_text

WAIT_MS = 30_000
BOOKS = 60


def add_book(project, number: int) -> int:
    draft = draft_from_text(novel_text(500 + number, chapters=1, paragraphs=1 + number % 4), f"book{number:03d}.txt")
    draft.title = f"Title {(number * 37) % BOOKS:03d}"
    draft.author = f"Author {number % 7}"
    draft.year = None if number % 5 == 0 else 1800 + (number * 13) % 100
    book_id, added = store_book(project, draft)
    assert added
    return book_id


@pytest.fixture
def many(project):
    for number in range(BOOKS):
        add_book(project, number)
    return project


@pytest.fixture
def page(qtbot, shown_page, many, messages):
    page = shown_page(LibraryPage, many, size=(1100, 700))
    qtbot.waitUntil(lambda: not page.ops.busy, timeout=WAIT_MS)
    return page


def wait_idle(qtbot, page):
    qtbot.waitUntil(lambda: not page.ops.busy, timeout=WAIT_MS)


def select_rows(page, rows):
    selection = page.table.selectionModel()
    selection.clearSelection()
    for row in rows:
        selection.select(page.proxy.index(row, 0),
                         QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows)


def ids_of_selected_rows(page) -> list[int]:
    """What Qt itself says is selected (slow on many rows, but the reference)."""
    rows = sorted(page.table.selectionModel().selectedRows(), key=lambda index: index.row())
    return [page.model.book_at(page.proxy.mapToSource(index).row()).id for index in rows]


def shown_column(page, column) -> list[str]:
    return [page.proxy.index(row, column).data() for row in range(page.proxy.rowCount())]


def test_a_reload_keeps_all_selected_books_selected_in_one_change(qtbot, page):
    page.table.sortByColumn(TITLE, Qt.SortOrder.DescendingOrder)
    page.table.selectAll()
    before = page.selected_book_ids()
    assert len(before) == BOOKS
    changes = []
    page.table.selectionModel().selectionChanged.connect(lambda *_: changes.append(1))
    page.refresh()
    assert sorted(page.selected_book_ids()) == sorted(before)  # all still selected (not only the first)
    assert len(changes) <= 1  # one selection change, not one per book
    assert ids_of_selected_rows(page) == page.selected_book_ids()


def test_a_reload_after_a_delete_elsewhere_reselects_the_books_still_there(qtbot, page, many):
    rows = [2, 3, 4, 10, 30, 31]
    select_rows(page, rows)
    chosen = page.selected_book_ids()
    from workbench.corpus.library import delete_books

    delete_books(many, chosen[:2])  # by another window or a command, while the book view may be loading
    wait_idle(qtbot, page)
    page.refresh()
    assert page.selected_book_ids() == sorted(chosen[2:], key=lambda b: page.model.row_of(b))
    assert page.model.rowCount() == BOOKS - 2


def test_selected_ids_follow_the_sorted_and_filtered_view(qtbot, page):
    page.table.sortByColumn(YEAR, Qt.SortOrder.DescendingOrder)
    page.filter_box.setText("author 3")
    assert 0 < page.proxy.rowCount() < BOOKS
    select_rows(page, range(0, page.proxy.rowCount(), 2))
    assert page.selected_book_ids() == ids_of_selected_rows(page)
    shown = {page.proxy.data(page.proxy.index(r, 0), Qt.ItemDataRole.UserRole + 1) for r in range(page.proxy.rowCount())}
    assert set(page.selected_book_ids()) <= shown


def test_books_added_while_the_page_is_open_are_inserted_in_sorted_place(qtbot, page, many):
    """As during an import: the table keeps its rows, selection and scroll position, and the new books
    appear where the sort puts them."""
    page.table.sortByColumn(TITLE, Qt.SortOrder.AscendingOrder)
    page.table.selectRow(5)
    chosen = page.selected_book_ids()
    page.table.verticalScrollBar().setValue(3)
    resets, inserted = [], []
    page.model.modelReset.connect(lambda: resets.append(1))
    page.model.rowsInserted.connect(lambda parent, first, last: inserted.append((first, last)))
    new_ids = [add_book(many, number) for number in range(BOOKS, BOOKS + 5)]
    page.refresh()
    assert not resets and inserted == [(BOOKS, BOOKS + 4)]
    assert page.model.rowCount() == BOOKS + 5 and page.count_label.text() == f"{BOOKS + 5} books"
    assert page.selected_book_ids() == chosen
    assert page.table.verticalScrollBar().value() == 3
    titles = shown_column(page, TITLE)
    assert titles == sorted(titles, key=str.casefold)
    assert {page.model.book_at(page.model.row_of(b)).id for b in new_ids} == set(new_ids)


def test_a_book_changed_elsewhere_is_updated_in_place(qtbot, page, many):
    book = list_books(many)[7]
    update_book(many, book.id, author="Zebedee Quill")
    set_tags(many, book.id, {"genre": "gothic"})
    changed = []
    page.model.dataChanged.connect(lambda first, last: changed.append((first.row(), last.row())))
    page.refresh()
    row = page.model.row_of(book.id)
    assert changed == [(row, row)]
    assert page.model.index(row, AUTHOR).data() == "Zebedee Quill"
    page.filter_box.setText("gothic zebedee")
    assert page.proxy.rowCount() == 1


def test_sorting_by_words_and_year_uses_numbers_and_puts_unknown_years_last(qtbot, page, many):
    page.table.sortByColumn(WORDS, Qt.SortOrder.AscendingOrder)
    words = [page.model.book_at(page.proxy.mapToSource(page.proxy.index(r, 0)).row()).words
             for r in range(page.proxy.rowCount())]
    assert words == sorted(words)
    page.table.sortByColumn(YEAR, Qt.SortOrder.AscendingOrder)
    years = shown_column(page, YEAR)
    known = [y for y in years if y]
    assert known == sorted(known, key=int) and years[len(known):] == [""] * (len(years) - len(known))


def test_an_inline_edit_is_shown_and_sorted_by_its_new_value(qtbot, page, many):
    page.table.sortByColumn(TITLE, Qt.SortOrder.AscendingOrder)
    index = page.proxy.index(10, TITLE)
    book_id = page.proxy.data(index, Qt.ItemDataRole.UserRole + 1)
    assert page.proxy.setData(index, "Aardvark Days", Qt.ItemDataRole.EditRole)
    page.proxy.invalidate()
    assert shown_column(page, TITLE)[0] == "Aardvark Days"
    assert page.model.book_at(page.model.row_of(book_id)).title == "Aardvark Days"


def test_deleting_many_books_runs_in_the_background_and_then_reloads(qtbot, page, many, messages):
    select_rows(page, range(0, 40))
    chosen = page.selected_book_ids()
    page.delete_selected()
    assert "Delete 40 books" in messages["questions"][0]
    assert page.delete_op is not None and not page.delete_button.isEnabled()
    wait_idle(qtbot, page)
    assert page.delete_op is None and page.delete_button.isEnabled()
    assert page.model.rowCount() == BOOKS - 40 and len(list_books(many)) == BOOKS - 40
    assert not set(chosen) & {b.id for b in list_books(many)}


def test_columns_are_as_wide_as_their_longest_text_up_to_a_share(qtbot, page, many):
    book = list_books(many)[3]
    update_book(many, book.id, author="Ann")
    page.refresh()
    header = page.table.horizontalHeader()
    narrow = header.sectionSize(AUTHOR)
    update_book(many, book.id, author="Maria Gowen Brooks, called Maria del Occidente by her admirers")
    page.refresh()
    wide = header.sectionSize(AUTHOR)
    metrics = page.table.fontMetrics()
    assert wide > narrow
    assert wide <= max(80, int(page.table.viewport().width() * 0.24)) + 1
    page.resize(1400, 700)
    qtbot.wait(10)
    assert header.sectionSize(AUTHOR) >= wide  # more room: at least as wide
    assert metrics.horizontalAdvance("Author 6") < narrow
