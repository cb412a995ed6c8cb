"""Book sets: saved by name, replaced whole when saved again, read back by the probes and the GUI."""

from __future__ import annotations

import pytest

from workbench.corpus.book_sets import book_set_members, book_set_names, book_set_size, save_book_set
from workbench.corpus.importer import store_book
from workbench.corpus.sources import BookDraft
from workbench.errors import UserError


@pytest.fixture
def books(project):
    ids = []
    for number in range(4):
        book_id, _ = store_book(project, BookDraft(source_kind="text", source_name=f"book{number}.txt",
                                                   text=f"Book number {number}. " * 50, title=f"Book {number}"))
        ids.append(book_id)
    return ids


def test_a_saved_set_is_listed_and_read_back(project, books):
    save_book_set(project, "well remembered", books[:2], "two books")
    save_book_set(project, "forgotten", books[2:3], "one book")
    assert book_set_names(project) == ["forgotten", "well remembered"]
    assert book_set_members(project, "well remembered") == set(books[:2])
    assert book_set_size(project, "well remembered") == 2
    assert project.db.execute("SELECT description FROM book_sets WHERE name = 'forgotten'").fetchone()[0] == "one book"


def test_saving_a_set_again_replaces_its_books_and_description(project, books):
    first = save_book_set(project, "deciles", books[:3], "three books")
    again = save_book_set(project, "deciles", books[3:], "one book now")
    assert again == first
    assert book_set_members(project, "deciles") == {books[3]}
    assert project.db.execute("SELECT description FROM book_sets WHERE id = ?", [first]).fetchone()[0] == "one book now"
    assert book_set_names(project) == ["deciles"]


def test_an_unknown_set_is_named_in_the_error_and_holds_no_books(project, books):
    with pytest.raises(UserError, match="There is no book set called 'nowhere'"):
        book_set_members(project, "nowhere")
    assert book_set_size(project, "nowhere") == 0
    assert book_set_names(project) == []
