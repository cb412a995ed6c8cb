"""The downstream-validity probe's table: the passages its runs ask about.

This part's own migrations, in order (``workbench/project/schema.py`` says how they are found and applied).
Never edit one that has shipped; append a new one."""

from __future__ import annotations

from sqlite_utils import Database

from workbench.project.schema import MigrationSet, run_sql

MIGRATIONS = MigrationSet("downstream-validity")


@MIGRATIONS(name="0001_passages", replaces="0008_validity")
def passages(db: Database) -> None:
    run_sql(
        db,
        """
        CREATE TABLE validity_passages (
            id INTEGER PRIMARY KEY,             -- the item_id of validity-year and validity-narrative-time runs
            book_id INTEGER NOT NULL REFERENCES books(id) ON DELETE CASCADE,
            label TEXT,                         -- the passage's id in the file it was imported from
            passage TEXT NOT NULL,
            words INTEGER NOT NULL,
            start_char INTEGER,                 -- the passage in the book's stored text (NULL if imported)
            end_char INTEGER,
            year INTEGER,                       -- year of first publication given with an imported passage
            minutes REAL,                       -- reference narrative time given with an imported passage
            origin TEXT NOT NULL,               -- sampled, imported
            settings TEXT NOT NULL DEFAULT '{}',-- JSON: words, per book, seed, spaCy model (sampled passages)
            created_at TEXT NOT NULL
        );
        CREATE INDEX validity_passages_book ON validity_passages (book_id)
        """,
    )
