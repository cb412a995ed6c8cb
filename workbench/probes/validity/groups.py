"""Memorization groups: the books a model knows best and least, by its name-cloze accuracy.

The accuracy comes from the name-cloze probe's table in the export registry (``cloze-book-accuracy``,
flagged books left out, books ranked best first by accuracy); the top and bottom decile (or quintile) are cut
from that ranking by the shared rule (``workbench.corpus.book_sets.ranked_ends``) and, when asked, saved as
the book sets the name-cloze probe saves (``cloze top decile: MODEL`` ...). The grouping model is chosen
apart from the model whose answers are analysed (*Speak, Memory* groups by GPT-4's accuracy and analyses
ChatGPT too).

Books tied at a cut are treated by the tie rule (``book_sets.TIE_RULES``), as in the error analysis: ``all``
(the default) puts every one of them in, so a group may hold more books than its share (the tables report
the sizes); ``draw`` fills the share with tied books drawn at random, ``draws`` times with seeded random
numbers (``book_sets.draw_rng``: the same books as the error analysis draws for the same seed).
``over_draws`` then reports a table for the median draw and the 5th and 95th percentile of its statistics
over all the draws.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np
import pandas as pd

from workbench.analysis.intervals import draw_spread
from workbench.corpus.book_sets import (
    ALL_TIED,
    DEFAULT_DRAWS,
    DRAW_TIES,
    Ends,
    draw_rng,
    group_fraction,
    memorization_set_names,
    ranked_ends,
    save_book_set,
    tie_rule,
)
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
    # best first; within a tie by id, as the name-cloze probe cuts it, so that both draw the same books
    return table.sort_values(["accuracy", "book_id"], ascending=[False, True], kind="stable").reset_index(drop=True)


@dataclass
class Cuts:
    """The grouping model's ranking cut by a tie rule: once (``all``) or once per draw (``draw``)."""

    by: str
    groups: str
    ties: str
    seed: int
    table: pd.DataFrame  # the ranking, best first
    ends: list[Ends]

    @property
    def drawn(self) -> bool:
        return self.ties == DRAW_TIES

    def frame(self, draw: int = 0) -> pd.DataFrame:
        """Every ranked book with its group (top, bottom or middle) in that draw, and whether it comes from a tie
        at a cut (``GROUP_COLUMNS``)."""
        ends = self.ends[draw]
        frame = self.table[["book_id", "book", "accuracy", "n"]].assign(group=MIDDLE, tied_at_cut=False)
        frame.loc[ends.top, "group"] = TOP
        frame.loc[ends.bottom, "group"] = BOTTOM
        frame.loc[ends.top, "tied_at_cut"] = ends.top_tied
        frame.loc[ends.bottom, "tied_at_cut"] = ends.bottom_tied
        return frame[GROUP_COLUMNS]

    def notes(self) -> dict[str, str]:
        """For the top and the bottom group: what the tie rule did at its cut ('' without a tie there)."""
        notes = self.ends[0].notes()
        return {group: (f"grouped by {self.by}: {text}" if text else "") for group, text in notes.items()}


def group_cuts(project: "Project", by: str, groups: str = "decile", ties: str = ALL_TIED, *, seed: int = 0,
               draws: int = DEFAULT_DRAWS) -> Cuts:
    """``by``'s ranking cut into top and bottom groups by the tie rule ``ties``: once, or ``draws`` times."""
    tie_rule(ties)
    fraction = group_fraction(groups)
    if ties == DRAW_TIES and draws < 1:
        raise UserError("Drawing the ties needs at least one draw.")
    table = cloze_accuracy(project, by)
    if ties == ALL_TIED:
        ends = [ranked_ends(table["accuracy"], fraction)]
    else:
        ends = [ranked_ends(table["accuracy"], fraction, DRAW_TIES, draw_rng(seed, d)) for d in range(draws)]
    return Cuts(by, groups, ties, seed, table, ends)


def memorization_groups(project: "Project", by: str, groups: str = "decile", *, save: bool = False,
                        ties: str = ALL_TIED, seed: int = 0) -> pd.DataFrame:
    """Every book with ``by``'s accuracy, its group (top, bottom or middle) and whether it comes from a tie at a
    cut (under ``draw``: the first draw of ``seed``).

    With ``save`` the top and bottom books are stored as the book sets the name-cloze probe uses."""
    cuts = group_cuts(project, by, groups, ties, seed=seed, draws=1)
    frame = cuts.frame(0)
    if save:
        notes = cuts.ends[0].notes()
        with project.db.transaction():
            for name, group in zip(memorization_set_names(by, group_fraction(groups)), (TOP, BOTTOM)):
                members = frame[frame["group"] == group]
                description = f"{len(members)} of {len(frame)} books, ranked by name-cloze accuracy of {by}"
                if notes[group]:
                    description += f"; {notes[group]}" + (f" (one random draw, seed {seed})" if cuts.drawn else "")
                save_book_set(project, name, members["book_id"], description)
    return frame


def with_groups(frame: pd.DataFrame, grouping: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (a row per book or passage, with ``book_id``) with each book's ``group``, ``accuracy`` and
    ``tied_at_cut`` from ``memorization_groups`` (any such columns it had are replaced); books the grouping
    model has no accuracy for get group ''."""
    frame = frame.drop(columns=[c for c in ("group", "accuracy", "tied_at_cut") if c in frame.columns])
    frame = frame.merge(grouping[["book_id", "group", "accuracy", "tied_at_cut"]], on="book_id", how="left")
    frame["group"] = frame["group"].fillna("")
    frame["tied_at_cut"] = frame["tied_at_cut"].astype("boolean").fillna(False).astype(bool)
    return frame


def tie_notes(cuts: Cuts) -> dict[str, str]:
    """For the top and the bottom group: what the tie rule did at its cut, as every analysis of the groups says
    it (``Cuts.notes``)."""
    return cuts.notes()


@dataclass
class Spread:
    """A statistic per group (top, bottom, difference) over the draws: the median draw's value is reported, and
    these percentiles beside it."""

    draws: int
    median_draw: int
    low: dict[str, float]
    high: dict[str, float]


def over_draws(frame: pd.DataFrame, cuts: Cuts, statistic: Callable[[pd.DataFrame], dict[str, float]],
               ) -> tuple[pd.DataFrame, Spread | None]:
    """``frame`` grouped as the analysis reports it, and the spread of ``statistic`` over the draws.

    Under ``all`` that is the one grouping and no spread. Under ``draw``, ``statistic(frame grouped by a draw)``
    gives a value per group (``top``, ``bottom``, ``difference``) for every draw; the draw reported is the median
    one by the difference (the lower middle one for an even number; undefined differences count as highest),
    and the 5th and 95th percentile of each value over the draws come with it."""
    if not cuts.drawn:
        return with_groups(frame, cuts.frame(0)), None
    values = [statistic(with_groups(frame, cuts.frame(d))) for d in range(len(cuts.ends))]
    keys = list(values[0]) if values else []
    differences = np.array([v.get(DIFFERENCE, math.nan) for v in values], dtype=float)
    order = np.argsort(np.where(np.isnan(differences), np.inf, differences), kind="stable")
    median = int(order[(len(order) - 1) // 2])
    spreads = {key: draw_spread(np.array([v[key] for v in values], dtype=float)) for key in keys}
    spread = Spread(len(values), median, {k: s[0] for k, s in spreads.items()}, {k: s[1] for k, s in spreads.items()})
    return with_groups(frame, cuts.frame(median)), spread


def spread_note(spread: Spread | None, what: str) -> str:
    """The note of a table whose ties were drawn."""
    if spread is None:
        return ""
    return (f"ties at the cuts drawn at random: the median of {spread.draws} draws by the top - bottom difference "
            f"is shown, with the 5th-95th percentile of the {what} over the draws")
