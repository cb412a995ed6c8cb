"""The name-cloze probe's tables: the passages (extracted from a book's text, or imported with published results)
and each book's extraction record.

This part's own migrations, in order (``workbench/project/schema.py`` says how they are found and applied).
Never edit one that has shipped; append a new one."""

from __future__ import annotations

from sqlite_utils import Database

from workbench.project.schema import MigrationSet, run_sql

MIGRATIONS = MigrationSet("name-cloze")


@MIGRATIONS(name="0001_passages_and_extractions", replaces="0003_name_cloze")
def passages_and_extractions(db: Database) -> None:
    run_sql(
        db,
        """
        CREATE TABLE cloze_passages (
            id INTEGER PRIMARY KEY,
            book_id INTEGER NOT NULL REFERENCES books(id) ON DELETE CASCADE,
            passage TEXT NOT NULL,              -- the window with the name replaced by [MASK]
            gold TEXT NOT NULL,
            start_char INTEGER,                 -- window in the book's stored text (NULL if imported)
            end_char INTEGER,
            name_start INTEGER,
            name_end INTEGER,
            origin TEXT NOT NULL DEFAULT 'extracted',   -- extracted, imported
            created_at TEXT NOT NULL
        );
        CREATE INDEX cloze_passages_book ON cloze_passages (book_id);
        CREATE TABLE cloze_extractions (
            book_id INTEGER PRIMARY KEY REFERENCES books(id) ON DELETE CASCADE,
            candidates INTEGER NOT NULL,        -- how many passages qualified (or were seen, in fast mode)
            sampled INTEGER NOT NULL,
            per_book INTEGER NOT NULL,
            seed INTEGER NOT NULL,
            fast INTEGER NOT NULL,
            settings TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL
        )
        """,
    )


@MIGRATIONS(name="0002_passages_by_origin", replaces="0009_cloze_passages_by_origin")
def passages_by_origin(db: Database) -> None:
    # the Name cloze page counts each book's extracted and imported passages whenever it reloads: from this index
    # alone (3 ms for 57,000 passages) instead of every passage row (20-30 ms, on the window's thread);
    # IF NOT EXISTS: this branch once numbered it 0008, so a project made then already has the index
    db.execute("CREATE INDEX IF NOT EXISTS cloze_passages_book_origin ON cloze_passages (book_id, origin)")
