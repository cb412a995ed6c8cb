"""Book sets: named groups of books that later steps choose by name (the name-cloze analysis saves its top
and bottom deciles as sets; REP and name-cloze runs can be limited to a set).

Memorization groups are such sets: the top and bottom decile (or quintile) of books ranked by one model's
name-cloze accuracy. ``ranked_ends`` is the one rule that cuts them from a ranking, and
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


@dataclass(frozen=True)
class Ends:
    """Positions (into a ranking, best first) of the books at its top and bottom end, and which of them share
    their score with a book left out of their end (so tie-breaks, not the score, put them in)."""

    top: np.ndarray  # best first
    bottom: np.ndarray  # worst first
    top_tied: np.ndarray
    bottom_tied: np.ndarray


def ranked_ends(scores: Sequence[float], fraction: float) -> Ends:
    """The top and bottom ``fraction`` of books already ranked best first by ``scores``: ceil(fraction x books)
    each, at least one, and never more than half the books, so the two ends never share a book."""
    if not 0 < fraction <= 0.5:
        raise UserError(f"The share of books in each group must be above 0 and at most 0.5 (got {fraction}).")
    scores = np.asarray(scores, dtype=float)
    n = len(scores)
    if n < 2:
        raise UserError("Top and bottom groups need at least two books with results.")
    k = min(max(1, math.ceil(n * fraction)), n // 2)
    top, bottom = np.arange(k), np.arange(n - 1, n - 1 - k, -1)
    return Ends(top, bottom, np.isin(scores[top], scores[k:]), np.isin(scores[bottom], scores[: n - k]))


def tie_note(ends: Iterable[tuple[str, int, int]]) -> str:
    """The note every analysis of the groups gives when tie-breaks, not the score, chose some of their books:
    ``ends`` holds (end, its books tied at the cut, its books), e.g. ('bottom', 58, 58); '' without ties."""
    tied = [f"{count} of the {books} {end} books" for end, count, books in ends if count]
    if not tied:
        return ""
    return (f"{' and '.join(tied)} tie at the cut with books left out: the ranking's tie-breaks (interval, then "
            "title) chose them")
