"""The stable key of a book beside its title, in every CSV of per-book rows.

A title is no key: two books can share one (two editions, or two published results files of one work), and a
title can change when a metadata table is applied. So a frame with per-book rows carries ``book_id`` (the
project's id of the book), and when it is written as CSV (``export.registry.write_csv`` with the project)
the book's source columns are added beside the title:

- ``book_source``: the file name or address the book came from; for a book made by importing published
  results, the results file's name (``472_the_house_behind_the_cedars.txt``), so a CSV joins back to the
  published files and tables;
- ``book_external_id``: the Project Gutenberg number, or the id the book was imported under.

The id comes right after the title, then the two source columns. A frame with a ``book_id`` and no title column
also gets the title (``book``). A frame without ``book_id`` is written as it is: every registered table and chart
that names a book carries its id (a test walks them all).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from workbench.project import Project

TITLE_COLUMNS = ("book", "title")  # the columns that name a book in the registered frames
SOURCE_COLUMNS = ("book_source", "book_external_id")
KEY_COLUMNS = ("book_id", *SOURCE_COLUMNS)
# The name a table shows for a book: its title, else the id it was imported under, else its number.
BOOK_NAME = "COALESCE(NULLIF(b.title, ''), b.external_id, 'Book ' || b.id)"


def title_column(frame: pd.DataFrame) -> str | None:
    """The column that names the book in ``frame`` (None: it names none)."""
    return next((c for c in TITLE_COLUMNS if c in frame.columns), None)


def with_book_keys(project: "Project", frame: pd.DataFrame, *, sources: bool = True) -> pd.DataFrame:
    """``frame`` with its books' keys right after the title: ``book_id``, then (``sources``) ``book_source`` and
    ``book_external_id`` from the library; a frame without a title gets one (``book``, where ``book_id`` was).
    A frame without ``book_id`` is returned as it is. Rows whose book is unknown (no id, or a book deleted
    since) get blanks. A copy; ``frame`` is not changed."""
    if "book_id" not in frame.columns:
        return frame
    title = title_column(frame)
    wanted = [c for c in SOURCE_COLUMNS if sources and c not in frame.columns]
    ids = pd.to_numeric(frame["book_id"], errors="coerce")
    found = pd.DataFrame(index=range(len(frame)))
    if wanted or title is None:
        known = sorted({int(i) for i in ids.dropna()})
        books = pd.DataFrame(project.db.execute(
            f"SELECT b.id, {BOOK_NAME}, b.source_name, b.external_id FROM books b"
            " WHERE b.id IN (SELECT value FROM json_each(?))", [json.dumps(known)]).fetchall(),
            columns=["id", "book", "book_source", "book_external_id"]).set_index("id")
        found = books.reindex(ids.astype("Int64").to_numpy()).reset_index(drop=True)
    out = frame.copy()
    if title is None:
        title = "book"
        out.insert(out.columns.get_loc("book_id"), title, found[title].to_numpy(dtype=object))
    book_ids = out.pop("book_id")
    at = out.columns.get_loc(title) + 1
    out.insert(at, "book_id", book_ids)
    for offset, column in enumerate(wanted, start=1):
        out.insert(at + offset, column, found[column].to_numpy(dtype=object))
    return out
