"""Book sets: named groups of books that later steps choose by name (the name-cloze analysis saves its top
and bottom deciles as sets; REP and name-cloze runs can be limited to a set)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

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
