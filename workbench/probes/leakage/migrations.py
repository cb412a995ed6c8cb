"""The leakage probe's tables: reference corpora and the passages its runs analyse.

This part's own migrations, in order (``workbench/project/schema.py`` says how they are found and applied).
Never edit one that has shipped; append a new one."""

from __future__ import annotations

from sqlite_utils import Database

from workbench.project.schema import MigrationSet, run_sql

MIGRATIONS = MigrationSet("leakage")


@MIGRATIONS(name="0001_corpora_and_passages", replaces="0007_leakage")
def corpora_and_passages(db: Database) -> None:
    run_sql(
        db,
        """
        CREATE TABLE reference_corpora (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL,                 -- local (an index beside the project), remote (an infini-gram API)
            path TEXT,                          -- local: the index folder, relative to the project's folder
            url TEXT,                           -- remote: the API address
            remote_index TEXT,                  -- remote: the index's name there (e.g. v4_piletrain_llama)
            tokenizer TEXT NOT NULL,            -- word, model:LABEL, or remote (the server's own)
            documents INTEGER,
            tokens INTEGER,
            words INTEGER,                      -- white-space words of the corpus (the n of the chance estimate)
            size_bytes INTEGER,
            files TEXT NOT NULL DEFAULT '[]',   -- JSON: the files indexed (path, bytes, documents, tokens, skipped)
            engine TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL
        );
        CREATE TABLE leakage_passages (
            id INTEGER PRIMARY KEY,             -- the item_id of overlap, membership, surprisal and DE-COP runs
            source TEXT NOT NULL,               -- cloze, validity, file:NAME
            source_key TEXT NOT NULL,           -- the passage's id in its source (cloze passage id, row number)
            book_id INTEGER REFERENCES books(id) ON DELETE SET NULL,
            label TEXT NOT NULL DEFAULT '',     -- the book as the source names it
            text TEXT NOT NULL,
            hash TEXT NOT NULL,                 -- sha256 of text
            created_at TEXT NOT NULL,
            UNIQUE (source, source_key, hash)
        );
        CREATE INDEX leakage_passages_book ON leakage_passages (book_id)
        """,
    )
