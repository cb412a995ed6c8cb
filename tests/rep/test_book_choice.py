"""The REP book chooser: books by tag or by book set, with the number of books each choice covers."""

from ui.rep.book_choice import BookChoice
from workbench.corpus.book_sets import save_book_set


def test_a_book_set_can_be_chosen_and_its_books_are_counted(qtbot, project, decade_books):
    save_book_set(project, "fifties", decade_books["1950s"], "the two 1950s books")
    save_book_set(project, "one nineties book", decade_books["1990s"], "")
    choice = BookChoice()
    qtbot.addWidget(choice)
    choice.refresh(project)
    assert [choice.book_set.itemText(i) for i in range(choice.book_set.count())] == ["fifties", "one nineties book"]
    assert choice.by_set.isEnabled()
    choice.set_choice(book_set="fifties")
    assert choice.choice() == (None, "fifties") and choice.count.text() == "2 books"
    choice.set_choice(book_set="one nineties book")
    assert choice.count.text() == "1 book"
    choice.set_choice(tag="decade=1990s")
    assert choice.choice() == ("decade=1990s", None) and choice.count.text() == "1 book"


def test_without_book_sets_only_tags_can_be_chosen(qtbot, project, decade_books):
    choice = BookChoice()
    qtbot.addWidget(choice)
    choice.refresh(project)
    assert choice.book_set.count() == 0 and not choice.by_set.isEnabled()
    assert choice.by_tag.isChecked()
