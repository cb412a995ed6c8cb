"""The Library page, driven as a scholar would: import (menu, drop), filter, sort, edit, book view, cancel, delete."""

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication, QLineEdit

from tests.fixtures.books import gutenberg_text, novel_text
from ui.library.books_model import TAGS, TITLE, WORDS, YEAR
from ui.library.gutenberg_dialog import parse_numbers
from ui.library.page import LibraryPage
from workbench.corpus.library import book_text, get_book, list_books
from workbench.corpus.stats import text_statistics
from workbench.errors import UserError

WAIT_MS = 30_000


@pytest.fixture
def page(shown_page, project, messages):
    return shown_page(LibraryPage, project, size=(1100, 700))


def wait_idle(qtbot, page):
    qtbot.waitUntil(lambda: not page.ops.busy, timeout=WAIT_MS)


@pytest.fixture
def three_books(tmp_path):
    """Three books of different lengths (9 to 30 chapters: word counts sort differently as text) and a table."""
    folder = tmp_path / "three"
    folder.mkdir()
    (folder / "short.txt").write_text(novel_text(201, chapters=3))
    (folder / "long.txt").write_text(novel_text(202, chapters=30))
    (folder / "pg4242.txt").write_text(gutenberg_text(novel_text(203, chapters=9), number=4242))
    meta = tmp_path / "meta.csv"
    meta.write_text("file,author,year,genre\nshort,Honora Vale,1899,pastoral\nlong,Silas Crane,1851,gothic\n")
    return folder, meta


def import_three(qtbot, page, three_books):
    folder, meta = three_books
    page.start_import([folder, meta])
    wait_idle(qtbot, page)


def test_importing_through_the_page_fills_the_table_and_sums_up(qtbot, page, mixed_folder):
    assert "No books yet" in page.hint.text()
    page.start_import([mixed_folder])
    assert page.progress_row.isVisible()
    wait_idle(qtbot, page)
    assert not page.progress_row.isVisible()
    assert page.model.rowCount() == 3 and page.count_label.text() == "3 books"
    summary = page.summary.text()
    assert "Added 3 books." in summary
    assert "1 book was already in the library" in summary
    assert "locked.epub is protected by DRM" in summary and "noise.txt does not look like a text file" in summary
    assert page.hint.isHidden()


def test_dropping_books_with_a_metadata_table(qtbot, page, three_books):
    folder, meta = three_books
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(folder / "short.txt")), QUrl.fromLocalFile(str(meta))])
    event = QDropEvent(QPointF(20, 20), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    page.dropEvent(event)
    wait_idle(qtbot, page)
    [book] = list_books(page.project)
    assert (book.author, book.year, book.tags) == ("Honora Vale", 1899, {"genre": "pastoral"})


def test_the_filter_looks_at_title_author_and_tags(qtbot, page, three_books):
    import_three(qtbot, page, three_books)
    page.filter_box.setText("gothic")
    assert page.proxy.rowCount() == 1 and page.proxy.index(0, TITLE).data() == "long"
    assert page.count_label.text() == "1 of 3 books"
    page.filter_box.setText("merriweather lantern")  # author and title words together
    assert page.proxy.rowCount() == 1 and page.proxy.index(0, TITLE).data() == "The Lantern Road"
    page.filter_box.setText("")
    assert page.proxy.rowCount() == 3


def test_sorting_by_words_and_year_is_numeric(qtbot, page, three_books):
    import_three(qtbot, page, three_books)
    page.table.sortByColumn(WORDS, Qt.SortOrder.DescendingOrder)
    titles = [page.proxy.index(r, TITLE).data() for r in range(3)]
    assert titles == ["long", "The Lantern Road", "short"]
    page.table.sortByColumn(YEAR, Qt.SortOrder.AscendingOrder)
    assert [page.proxy.index(r, YEAR).data() for r in range(3)] == ["1851", "1899", ""]  # unknown last


def test_an_empty_year_says_why_and_how_to_fill_it(qtbot, page, three_books):
    import_three(qtbot, page, three_books)
    page.table.sortByColumn(YEAR, Qt.SortOrder.AscendingOrder)
    empty = page.proxy.index(2, YEAR)
    assert empty.data() == ""
    tip = empty.data(Qt.ItemDataRole.ToolTipRole)
    assert "No year of first publication yet" in tip and "Metadata table" in tip and "leave out" in tip
    assert page.proxy.index(0, YEAR).data(Qt.ItemDataRole.ToolTipRole) is None
    assert "1 book has no year of first publication" in page.edit_note.text()
    assert page.proxy.setData(empty, "1888")
    qtbot.waitUntil(lambda: "no year" not in page.edit_note.text(), timeout=WAIT_MS)


def test_editing_a_title_inline_saves_it(qtbot, page, three_books):
    import_three(qtbot, page, three_books)
    index = page.proxy.index(0, TITLE)
    book_id = page.selected_book_ids()[0]
    page.table.setCurrentIndex(index)
    page.table.edit(index)
    editor = page.table.viewport().findChild(QLineEdit) or QApplication.focusWidget()
    assert isinstance(editor, QLineEdit)
    editor.selectAll()
    qtbot.keyClicks(editor, "The Orchard Letters")
    qtbot.keyClick(editor, Qt.Key.Key_Return)  # the view commits the edit on its next event-loop turn
    qtbot.waitUntil(lambda: page.table.state() != page.table.State.EditingState, timeout=WAIT_MS)
    assert get_book(page.project, book_id).title == "The Orchard Letters"
    assert page.proxy.index(0, TITLE).data() == "The Orchard Letters"


def test_tags_are_edited_inline_and_a_bad_year_is_refused(qtbot, page, three_books, messages):
    import_three(qtbot, page, three_books)
    book_id = page.proxy.index(0, 0).data(Qt.ItemDataRole.UserRole + 1)
    assert page.proxy.setData(page.proxy.index(0, TAGS), "genre=gothic; decade=1890s")
    assert get_book(page.project, book_id).tags == {"decade": "1890s", "genre": "gothic"}
    year_before = get_book(page.project, book_id).year
    assert not page.proxy.setData(page.proxy.index(0, YEAR), "next spring")
    assert messages["errors"] == ["'next spring' is not a year. Write a whole number such as 1847 (or 750 BCE), or leave "
                                  "it empty."]
    assert messages["infos"] == []
    assert get_book(page.project, book_id).year == year_before


def test_the_book_view_shows_statistics_and_the_beginning(qtbot, page, three_books):
    import_three(qtbot, page, three_books)
    row = next(r for r in range(3) if page.proxy.index(r, TITLE).data() == "long")
    page.table.selectRow(row)
    wait_idle(qtbot, page)
    book_id = page.selected_book_ids()[0]
    stats = text_statistics(book_text(page.project, book_id))
    panel = page.book_panel
    assert panel.title.text() == "long" and panel.byline.text() == "Silas Crane · 1851"
    assert panel.values["Chapters detected"].text() == "30"
    assert panel.values["Sentences"].text() == f"{stats.sentences:,}"
    assert panel.values["Words"].text() == f"{stats.words:,}"
    assert panel.preview.toPlainText().startswith("CHAPTER I.")


def test_cancel_stops_the_import_and_keeps_the_books_done(qtbot, page, tmp_path, gutenberg_mirror):
    (tmp_path / "first.txt").write_text(novel_text(301))
    gutenberg_mirror.files["/cache/epub/5/pg5.txt"] = gutenberg_text(novel_text(302), number=5).encode()
    gutenberg_mirror.answering.clear()  # the download waits until the test has pressed Cancel
    page.start_import([tmp_path / "first.txt"], gutenberg_ids=[5], mirror=gutenberg_mirror.base_url)
    qtbot.waitUntil(lambda: bool(gutenberg_mirror.requests), timeout=WAIT_MS)
    qtbot.mouseClick(page.cancel_button, Qt.MouseButton.LeftButton)
    assert not page.cancel_button.isEnabled()
    gutenberg_mirror.answering.set()
    wait_idle(qtbot, page)
    assert page.summary.text().startswith("Import stopped at your request.")
    assert [b.source_name for b in list_books(page.project)] == ["first.txt"]
    assert page.model.rowCount() == 1


def test_delete_asks_first_and_removes_only_when_confirmed(qtbot, page, three_books, messages):
    import_three(qtbot, page, three_books)
    page.table.selectAll()
    messages["answer"] = False
    page.delete_selected()
    assert "Delete 3 books" in messages["questions"][0] and page.model.rowCount() == 3
    page.table.selectRow(0)
    messages["answer"] = True
    page.delete_selected()
    wait_idle(qtbot, page)
    assert page.model.rowCount() == 2 and len(list_books(page.project)) == 2


def test_without_a_project_the_page_says_what_to_do(qtbot, page):
    page.set_project(None)
    assert "Open or create a project" in page.hint.text()
    assert not page.import_button.isEnabled()


def test_gutenberg_numbers_as_typed():
    assert parse_numbers("1342, 84 pg11;  #76") == [1342, 84, 11, 76]
    with pytest.raises(UserError, match="'Pride' is not a Project Gutenberg book number"):
        parse_numbers("1342 Pride")


def test_the_book_heading_keeps_its_size_from_book_to_book(qtbot, page, three_books):
    """The heading is a little larger than the text, however many books are looked at (it used to grow by a
    third with every book until titles filled the panel)."""
    import_three(qtbot, page, three_books)
    base = page.book_panel.font().pointSizeF()
    for _ in range(3):
        for row in range(3):
            page.table.selectRow(row)
            wait_idle(qtbot, page)
    assert page.book_panel.title.font().pointSizeF() == pytest.approx(base * 1.3)
    assert page.edit_note.isVisibleTo(page) and "Double-click" in page.edit_note.text()


def test_books_known_only_from_imported_results_say_so(qtbot, page, three_books, tmp_path, messages):
    from ui.library.books_model import SOURCE
    from workbench.probes.cloze.gpt4books import import_gpt4books

    import_three(qtbot, page, three_books)
    results = tmp_path / "austen_pride_and_prejudice_Pride_and_Prejudice.txt"
    results.write_text("<name>Jane</name>\tJane\tElizabeth\tShe looked at [MASK] and smiled.\n", encoding="utf-8")
    import_gpt4books(page.project, [results], "gpt-4 (published)")
    page.refresh()
    assert page.count_label.text() == "4 books (1 results only — no text)"
    row = next(r for r in range(4) if page.proxy.index(r, TITLE).data() == "Pride and Prejudice")
    assert page.proxy.index(row, WORDS).data() == "no text"  # not 0 words
    assert page.proxy.index(row, SOURCE).data() == f"results only: {results.name}"
    assert "Known only from imported results" in page.proxy.index(row, WORDS).data(Qt.ItemDataRole.ToolTipRole)
    page.table.sortByColumn(WORDS, Qt.SortOrder.AscendingOrder)
    assert page.proxy.index(0, TITLE).data() == "Pride and Prejudice"  # below the shortest text
    page.table.selectRow(0)
    wait_idle(qtbot, page)
    panel = page.book_panel
    assert panel.title.text() == "Pride and Prejudice" and panel.byline.text() == "Austen"
    assert panel.values["Words"].text() == "results only — no text"
    assert not panel._form.isRowVisible(panel.values["Sentences"])
    assert panel._form.labelForField(panel.values["Gutenberg number"]).text() == "Imported as:"
    assert "no text to read" in panel.preview.toPlainText()
    assert messages["errors"] == []  # no "has no stored text" error for selecting it
    page.table.selectRow(1)  # a book with text shows its counts again
    wait_idle(qtbot, page)
    assert panel._form.isRowVisible(panel.values["Sentences"])
    assert panel._form.labelForField(panel.values["Gutenberg number"]).text() == "Gutenberg number:"
