"""Baselines for the name cloze: what a model scores without knowing the book.

**The most frequent name.** *Speak, Memory* reports that always answering the commonest name of its data set
("Mary") is right 0.6% of the time. Taken literally, that name is chosen from the very passages it is scored
on: for a book whose own passages make its main character the commonest name, the baseline would have been
told the answer. ``frequent_name_baseline`` therefore chooses, for each book, the commonest gold name among
the *other* books' passages (``leave-book-out``, the default) and scores it on that book's passages; the
paper's construction, one name from all passages (``pooled``), is there to compare, and both are stated in
the output. Names are compared as the scorer compares answers (case ignored); a tie for the commonest name
is broken alphabetically and said in the note.

Each book's accuracy is correct / passages with its Wilson interval; the ``all books`` row pools every
passage (its interval treats passages as independent, which passages of one book are not quite, and says so).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from workbench.analysis.intervals import wilson_interval
from workbench.errors import UserError

if TYPE_CHECKING:
    from workbench.project import Project

CONSTRUCTIONS = ("leave-book-out", "pooled")
ALL_BOOKS = "all books"
FREQUENT_NAME_COLUMNS = ["book", "book_id", "passages", "baseline_name", "correct", "accuracy", "ci_low", "ci_high",
                         "construction", "note"]


def _commonest(counts: Counter) -> tuple[str, str]:
    """The commonest name of ``counts`` (alphabetically first among ties) and a note naming the tie."""
    if not counts:
        return "", "no other book's passages to choose a name from"
    top = max(counts.values())
    tied = sorted(name for name, n in counts.items() if n == top)
    note = f"tied with {', '.join(tied[1:4])}{' …' if len(tied) > 4 else ''} ({top:,} passages each)" \
        if len(tied) > 1 else ""
    return tied[0], note


def frequent_name_baseline(project: "Project", *, construction: str = "leave-book-out") -> pd.DataFrame:
    """Per book and over all books: the most-frequent-name baseline's accuracy on the project's name-cloze
    passages (see the module docstring); columns ``FREQUENT_NAME_COLUMNS``, the ``all books`` row first."""
    if construction not in CONSTRUCTIONS:
        raise UserError(f"'{construction}' is not a way to choose the name: use {' or '.join(CONSTRUCTIONS)}.")
    passages = pd.read_sql_query(
        "SELECT p.book_id, COALESCE(NULLIF(b.title, ''), b.external_id, 'Book ' || b.id) AS book, p.gold"
        " FROM cloze_passages p JOIN books b ON b.id = p.book_id", project.db.conn)
    if passages.empty:
        raise UserError("There are no name-cloze passages yet: extract passages (Name cloze page, or palimpsest cloze "
                        "extract) or import published results (palimpsest cloze import).")
    passages["name"] = passages["gold"].str.strip().str.casefold()
    overall = Counter(passages["name"])
    by_book = {book_id: Counter(group["name"]) for book_id, group in passages.groupby("book_id")}
    pooled_name, pooled_note = _commonest(overall)
    rows = []
    for (book_id, book), group in passages.groupby(["book_id", "book"], sort=True):
        if construction == "pooled":
            name, note = pooled_name, pooled_note
        else:
            name, note = _commonest(overall - by_book[book_id])
        correct = int((group["name"] == name).sum())
        rows.append({"book": book, "book_id": int(book_id), "passages": len(group), "baseline_name": name,
                     "correct": correct, "note": note})
    frame = pd.DataFrame(rows)
    names = frame["baseline_name"].unique()
    pooled_row = {"book": ALL_BOOKS, "book_id": pd.NA, "passages": int(frame["passages"].sum()),
                  "baseline_name": names[0] if len(names) == 1 else f"{len(names)} names (one per book)",
                  "correct": int(frame["correct"].sum()),
                  "note": "passages pooled over books (a book's passages are not independent: a rough interval)"}
    frame = pd.concat([pd.DataFrame([pooled_row]), frame], ignore_index=True)
    n, k = frame["passages"].to_numpy(), frame["correct"].to_numpy()
    frame["accuracy"] = np.where(n > 0, k / np.maximum(n, 1), np.nan)
    frame["ci_low"], frame["ci_high"] = wilson_interval(k, n)
    frame["construction"] = construction
    frame["book_id"] = frame["book_id"].astype("Int64")
    return frame[FREQUENT_NAME_COLUMNS]
