"""Book sets: named groups of books that later steps choose by name (the name-cloze analysis saves its top
and bottom deciles as sets; REP and name-cloze runs can be limited to a set).

Memorization groups are such sets: the top and bottom decile (or quintile) of books ranked by one model's
name-cloze accuracy. ``ranked_ends`` is the one rule that cuts them from a ranking (``TIE_RULES``: books tied
at a cut either all go in, or are drawn at random over seeded draws and the result reported as a spread), and
``memorization_set_names`` the names they are saved under, so that the probe that ranks the books and
the analyses that use the groups (downstream validity, the error analysis) agree without importing each
other."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np

from workbench.errors import UserError
from workbench.project import now

if TYPE_CHECKING:
    from workbench.project import Project


def book_set_names(project: "Project") -> list[str]:
    """Every book set of the project, by name."""
    return [r[0] for r in project.db.execute("SELECT name FROM book_sets ORDER BY name").fetchall()]


def book_set_members(project: "Project", name: str) -> set[int]:
    """The ids of the books in the set called ``name``; ``UserError`` when there is no such set."""
    row = project.db.execute("SELECT id FROM book_sets WHERE name = ?", [name]).fetchone()
    if row is None:
        raise UserError(f"There is no book set called '{name}'.")
    return {r[0] for r in project.db.execute("SELECT book_id FROM book_set_members WHERE set_id = ?", [row[0]])}


def book_set_size(project: "Project", name: str) -> int:
    """How many books the set called ``name`` holds (0 when there is no such set)."""
    return project.db.execute(
        "SELECT COUNT(*) FROM book_set_members m JOIN book_sets s ON s.id = m.set_id WHERE s.name = ?", [name]
    ).fetchone()[0]


def save_book_set(project: "Project", name: str, book_ids: Iterable[int], description: str) -> int:
    """Store the set ``name`` with exactly these books, replacing the books and description of an earlier
    set of that name; returns the set's id."""
    db = project.db
    with db.transaction():
        row = db.execute("SELECT id FROM book_sets WHERE name = ?", [name]).fetchone()
        if row is None:
            set_id = db.execute(
                "INSERT INTO book_sets (name, description, created_at) VALUES (?, ?, ?)", [name, description, now()]
            ).lastrowid
        else:
            set_id = row[0]
            db.execute("UPDATE book_sets SET description = ? WHERE id = ?", [description, set_id])
            db.execute("DELETE FROM book_set_members WHERE set_id = ?", [set_id])
        db.conn.executemany(
            "INSERT INTO book_set_members (set_id, book_id) VALUES (?, ?)", [(set_id, int(b)) for b in book_ids]
        )
    return set_id


# ---------------------------------------------------------------------------------------------- memorization groups
#: the share of ranked books each kind of memorization group takes from each end
GROUP_FRACTIONS = {"decile": 0.1, "quintile": 0.2}


def group_kind(fraction: float) -> str:
    """'decile' for 0.1, 'quintile' for 0.2, else the share in percent ('15%')."""
    for kind, value in GROUP_FRACTIONS.items():
        if math.isclose(fraction, value):
            return kind
    return f"{fraction:.0%}"


def group_fraction(groups: str) -> float:
    """0.1 for 'decile', 0.2 for 'quintile'; ``UserError`` for anything else."""
    if groups not in GROUP_FRACTIONS:
        raise UserError(f"'{groups}' is not a kind of group. Choose {' or '.join(GROUP_FRACTIONS)}.")
    return GROUP_FRACTIONS[groups]


def memorization_set_names(model: str, fraction: float = 0.1) -> tuple[str, str]:
    """The names of the book sets holding the top and the bottom books by ``model``'s name-cloze accuracy,
    e.g. ('cloze top decile: gpt-4', 'cloze bottom decile: gpt-4')."""
    kind = group_kind(fraction)
    return f"cloze top {kind}: {model}", f"cloze bottom {kind}: {model}"


#: how books that share the score at a cut are treated (the same rule for every analysis of the groups)
ALL_TIED, DRAW_TIES = "all", "draw"
TIE_RULES = {
    ALL_TIED: "every book tied at the cut goes in, so a group may hold more than its share",
    DRAW_TIES: "the books tied at the cut are drawn at random to fill the group's share, over many seeded draws, "
               "and the results are reported as a spread over the draws",
}
#: seeded draws of the ties when they are drawn (each analysis reports the 5th-95th percentile over them)
DEFAULT_DRAWS = 100


def tie_rule(rule: str) -> str:
    """``rule`` when it is one of ``TIE_RULES``; ``UserError`` for anything else."""
    if rule not in TIE_RULES:
        raise UserError(f"'{rule}' is not a way of treating ties. Choose {' or '.join(TIE_RULES)}.")
    return rule


def draw_rng(seed: int, draw: int) -> np.random.Generator:
    """The random numbers of tie draw ``draw`` (from 0) under ``seed``: the same books are drawn for it by every
    analysis that cuts the same ranking (the books are drawn first; an analysis may go on drawing from it)."""
    return np.random.default_rng([int(seed), int(draw)])


@dataclass(frozen=True)
class Ends:
    """Positions (into a ranking, best first) of the books at its top and bottom end, and which of them sit at a
    tie that crosses the cut (books with the same score on both sides of the share ``nominal``).

    ``top_block`` / ``bottom_block``: how many ranked books share the score at that cut when the tie crosses it
    (0 when it does not); under the rule ``all`` they are all in the group, under ``draw`` some were drawn."""

    top: np.ndarray  # best first
    bottom: np.ndarray  # worst first
    top_tied: np.ndarray
    bottom_tied: np.ndarray
    nominal: int = 0
    rule: str = ALL_TIED
    top_block: int = 0
    bottom_block: int = 0
    top_score: float = math.nan
    bottom_score: float = math.nan

    def notes(self, what: str = "books") -> dict[str, str]:
        """The sentence each end's analyses give about its ties ('' without a tie at that cut)."""
        return {end: tie_note(end, members=len(positions), nominal=self.nominal, tied=int(tied.sum()), block=block,
                              rule=self.rule, score=score, what=what)
                for end, positions, tied, block, score in (
                    ("top", self.top, self.top_tied, self.top_block, self.top_score),
                    ("bottom", self.bottom, self.bottom_tied, self.bottom_block, self.bottom_score))}


def ranked_ends(scores: Sequence[float], fraction: float, ties: str = ALL_TIED,
                rng: np.random.Generator | None = None) -> Ends:
    """The top and bottom ``fraction`` of books already ranked best first by ``scores``.

    The share is ceil(fraction x books) each, at least one, and never more than half the books. Books that share
    the score at a cut with books beyond it are treated by ``ties`` (``TIE_RULES``): ``all`` puts every one of
    them in (the group is then larger than its share; ``UserError`` when the top and bottom cut fall in one
    tie, which would put books in both groups); ``draw`` fills the share with books drawn from the tie with
    ``rng`` (one draw; call again with other numbers for the spread). Either way the order of tied books in
    the ranking (title and so on) decides nothing."""
    tie_rule(ties)
    if not 0 < fraction <= 0.5:
        raise UserError(f"The share of books in each group must be above 0 and at most 0.5 (got {fraction}).")
    scores = np.asarray(scores, dtype=float)
    n = len(scores)
    if n < 2:
        raise UserError("Top and bottom groups need at least two books with results.")
    if np.any(np.diff(scores) > 0):
        raise ValueError("ranked_ends needs the scores best first")
    k = min(max(1, math.ceil(n * fraction)), n // 2)
    high, low = scores[k - 1], scores[n - k]
    top_block = np.flatnonzero(scores == high)
    bottom_block = np.flatnonzero(scores == low)
    crosses_top = k < n and scores[k] == high
    crosses_bottom = n - k - 1 >= 0 and scores[n - k - 1] == low
    if ties == ALL_TIED:
        if high == low:
            raise UserError(
                f"The books at the top and at the bottom cut have the same score ({high:.3g}), so with every tied "
                "book in, the two groups would share books. Draw the tied books at random instead, or group the "
                "books by a model whose accuracy tells them apart.")
        top = np.flatnonzero(scores >= high)
        bottom = np.flatnonzero(scores <= low)[::-1]
    else:
        if rng is None:
            raise ValueError("drawing ties needs random numbers (rng)")
        above, below = np.flatnonzero(scores > high), np.flatnonzero(scores < low)[::-1]
        need_top, need_bottom = k - len(above), k - len(below)
        if high == low:  # one tie holds both cuts: deal it out once, so that no book is in both groups
            dealt = rng.permutation(top_block)
            chosen_top, chosen_bottom = np.sort(dealt[:need_top]), np.sort(dealt[len(dealt) - need_bottom:])[::-1]
        else:
            chosen_top = np.sort(rng.permutation(top_block)[:need_top])
            chosen_bottom = np.sort(rng.permutation(bottom_block)[:need_bottom])[::-1]
        top, bottom = np.concatenate([above, chosen_top]), np.concatenate([below, chosen_bottom])
    return Ends(top, bottom,
                (scores[top] == high) & crosses_top, (scores[bottom] == low) & crosses_bottom,
                nominal=k, rule=ties,
                top_block=len(top_block) if crosses_top else 0, bottom_block=len(bottom_block) if crosses_bottom else 0,
                top_score=float(high), bottom_score=float(low))


def tie_note(end: str, *, members: int, nominal: int, tied: int, block: int, rule: str, score: float = math.nan,
             what: str = "books") -> str:
    """The note every analysis of the groups gives about a tie at a cut: how many books share the score there,
    and what the tie rule did with them; '' when no tie crosses that cut.

    ``members``: the group's books, ``nominal``: its share, ``tied``: its books from the tie, ``block``: the
    ranked books in the tie."""
    if not block:
        return ""
    at = "" if math.isnan(score) else f" (score {score:.3g})"
    if rule == ALL_TIED:
        return (f"{block} {what} tie at the {end} cut{at}: all of them are in, so the {end} group holds {members} "
                f"{what}, not {nominal}")
    return (f"{tied} of the {block} {what} tied at the {end} cut{at} were drawn at random for each draw; the spread "
            "over the draws shows how much that choice moves the result")


# ---------------------------------------------------------------------------------------------- members
#: the book tag saying whether a book is known to be in a model's training data (member=yes / member=no)
MEMBER_TAG = "member"
MEMBER_YES = {"yes", "y", "true", "1", "member", "in"}
MEMBER_NO = {"no", "n", "false", "0", "non-member", "nonmember", "out"}


def member_labels(project: "Project", tag: str = MEMBER_TAG) -> dict[int, bool]:
    """Books tagged as known members (True) or non-members (False) of a model's training data; other values are
    left out."""
    labels = {}
    for book_id, value in project.db.execute("SELECT book_id, value FROM book_tags WHERE key = ?", [tag]).fetchall():
        value = (value or "").strip().lower()
        if value in MEMBER_YES:
            labels[int(book_id)] = True
        elif value in MEMBER_NO:
            labels[int(book_id)] = False
    return labels
