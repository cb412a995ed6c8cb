"""Memorization groups: the books a model knows best and least, by its name-cloze accuracy.

The accuracy comes from the name-cloze probe's table in the export registry (``cloze-book-accuracy``,
flagged books left out, books ranked best first as that probe ranks them everywhere); the top and bottom
decile (or quintile) are cut from that ranking by the shared rule (``workbench.corpus.book_sets.ranked_ends``)
and, when asked, saved as the book sets the name-cloze probe saves (``cloze top decile: MODEL`` ...). The
grouping model is chosen apart from the model whose answers are analysed (*Speak, Memory* groups by
GPT-4's accuracy and analyses ChatGPT too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from workbench.corpus.book_sets import group_fraction, memorization_set_names, ranked_ends, save_book_set, tie_note
from workbench.errors import UserError

if TYPE_CHECKING:
    from workbench.project import Project

TOP, BOTTOM, MIDDLE, ALL, DIFFERENCE = "top", "bottom", "middle", "all", "difference"
SMALL_GROUP = 10  # a group with fewer books (year) or items (narrative time) is flagged: a rough interval
GROUP_COLUMNS = ["book_id", "book", "accuracy", "n", "group", "tied_at_cut"]
ACCURACY_TABLE = "cloze-book-accuracy"


def cloze_accuracy(project: "Project", by: str) -> pd.DataFrame:
    """``by``'s name-cloze accuracy per book (books with answers, flagged books left out), best first."""
    from workbench.export import registry

    table = registry.table(ACCURACY_TABLE).frame(project, model=by, exclude_flagged=True)
    table = table[table["n"] > 0]
    if table.empty:
        raise UserError(f"'{by}' has no name-cloze results, so it cannot group the books. Run the name-cloze probe "
                        "with it, or import its published results, or group by another model.")
    kinds = sorted(table["kind"].unique())
    if len(kinds) > 1:  # a model answers one way: the prompted kind when it has both
        table = table[table["kind"] == ("cloze" if "cloze" in kinds else kinds[0])]
    return table.reset_index(drop=True)


def memorization_groups(project: "Project", by: str, groups: str = "decile", *, save: bool = False) -> pd.DataFrame:
    """Every book with ``by``'s accuracy, its group (top, bottom or middle) and whether a tie-break put it there.

    With ``save`` the top and bottom books are stored as the book sets the name-cloze probe uses."""
    fraction = group_fraction(groups)
    table = cloze_accuracy(project, by)
    ends = ranked_ends(table["accuracy"], fraction)
    frame = table[["book_id", "book", "accuracy", "n"]].assign(group=MIDDLE, tied_at_cut=False)
    frame.loc[ends.top, "group"] = TOP
    frame.loc[ends.bottom, "group"] = BOTTOM
    frame.loc[ends.top, "tied_at_cut"] = ends.top_tied
    frame.loc[ends.bottom, "tied_at_cut"] = ends.bottom_tied
    if save:
        with project.db.transaction():
            for name, group in zip(memorization_set_names(by, fraction), (TOP, BOTTOM)):
                members = frame[frame["group"] == group]
                description = f"{len(members)} of {len(frame)} books, ranked by name-cloze accuracy of {by}"
                tied = int(members["tied_at_cut"].sum())
                if tied:
                    description += f"; {tied} book(s) tie at the cut with books left out"
                save_book_set(project, name, members["book_id"], description)
    return frame[GROUP_COLUMNS]


def with_groups(frame: pd.DataFrame, grouping: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (a row per book or passage, with ``book_id``) with each book's ``group``, ``accuracy`` and
    ``tied_at_cut`` from ``memorization_groups``; books the grouping model has no accuracy for get group ''."""
    frame = frame.merge(grouping[["book_id", "group", "accuracy", "tied_at_cut"]], on="book_id", how="left")
    frame["group"] = frame["group"].fillna("")
    frame["tied_at_cut"] = frame["tied_at_cut"].astype("boolean").fillna(False).astype(bool)
    return frame


def tie_notes(frame: pd.DataFrame) -> dict[str, str]:
    """For the top and the bottom group of a table made by ``with_groups``: how many of its books tie at the
    cut with books left out (the ranking's tie-breaks chose them), as every analysis of the groups says it."""
    notes = {}
    for group in (TOP, BOTTOM):
        books = frame[frame["group"] == group].drop_duplicates("book_id")
        notes[group] = tie_note([(group, int(books["tied_at_cut"].sum()), len(books))])
    return notes
