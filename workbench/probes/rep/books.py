"""Choosing the books a REP step works on: by tag (``decade=1950s``) or by book set."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.corpus.book_sets import book_set_members
from workbench.corpus.library import books_with_tag, parse_tags
from workbench.errors import UserError

if TYPE_CHECKING:
    from workbench.project import Project


def select_books(project: "Project", *, tag: str | None = None, book_set: str | None = None) -> list[int]:
    """Ids of the books with ``tag`` ('key=value') and/or in ``book_set``, with stored text."""
    if not tag and not book_set:
        raise UserError("Choose the books: a tag such as decade=1950s, or a book set.")
    chosen: set[int] | None = None
    if tag:
        tags = parse_tags(tag)
        if len(tags) != 1:
            raise UserError(f"Give one tag, written as key=value (for example decade=1950s), not '{tag}'.")
        (key, value), = tags.items()
        chosen = set(books_with_tag(project, key, value))
        if not chosen:
            raise UserError(f"No book is tagged {key}={value}. Tag books on the Library page first.")
    if book_set:
        members = book_set_members(project, book_set)
        chosen = members if chosen is None else chosen & members
    with_text = {r[0] for r in project.db.execute("SELECT book_id FROM book_texts")}
    ids = sorted((chosen or set()) & with_text)
    if not ids:
        raise UserError("None of the chosen books has its text in the project, so there is nothing to read.")
    return ids
