"""Book sets: saved by name, replaced whole when saved again, read back by the probes and the GUI; the one rule
that cuts a ranking's top and bottom, and its treatment of ties."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.corpus.book_sets import (
    book_set_members,
    book_set_names,
    book_set_size,
    draw_rng,
    ranked_ends,
    save_book_set,
)
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


# ---------------------------------------------------------------------------------------------- cutting a ranking
SCORES = [0.9, 0.8, 0.5, 0.5, 0.5, 0.3, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]  # best first: ties at both quarter cuts


def test_every_book_tied_at_a_cut_goes_in_by_default():
    ends = ranked_ends(SCORES, 0.25)  # a share of three books at each end
    assert list(ends.top) == [0, 1, 2, 3, 4] and list(ends.top_tied) == [False, False, True, True, True]
    assert sorted(ends.bottom) == [6, 7, 8, 9, 10, 11] and ends.bottom_tied.all()
    assert (ends.nominal, ends.top_block, ends.bottom_block) == (3, 3, 6)
    notes = ends.notes()
    assert notes["top"] == ("3 books tie at the top cut (score 0.5): all of them are in, so the top group holds 5 "
                            "books, not 3")
    assert "the bottom group holds 6 books, not 3" in notes["bottom"]
    assert ranked_ends([0.9, 0.8, 0.7, 0.1], 0.25).notes() == {"top": "", "bottom": ""}  # no tie, no note


def test_drawn_ties_fill_the_share_uniformly_and_never_share_a_book():
    picks = np.zeros(len(SCORES))
    for draw in range(3000):
        ends = ranked_ends(SCORES, 0.25, "draw", draw_rng(7, draw))
        assert len(ends.top) == len(ends.bottom) == 3 and not set(ends.top) & set(ends.bottom)
        assert list(ends.top[:2]) == [0, 1]  # the books above the tie are always in
        picks[ends.top] += 1
        picks[ends.bottom] += 1
    assert picks[2:5] / 3000 == pytest.approx([1 / 3] * 3, abs=0.03)  # one of three tied books each time
    assert picks[6:] / 3000 == pytest.approx([1 / 2] * 6, abs=0.03)  # three of six
    same = [0.9, 0.5, 0.5, 0.5, 0.5, 0.1]  # halves: both cuts in one tie of four
    with pytest.raises(UserError, match="same score"):
        ranked_ends(same, 0.5)
    for draw in range(50):
        ends = ranked_ends(same, 0.5, "draw", draw_rng(0, draw))
        assert len(ends.top) == len(ends.bottom) == 3 and not set(ends.top) & set(ends.bottom)
    with pytest.raises(UserError, match="not a way of treating ties"):
        ranked_ends(SCORES, 0.1, "title")
