"""The REP probe's tables: REP and EEP sets with their prompts, and the entities found in books.

This part's own migrations, in order (``workbench/project/schema.py`` says how they are found and applied).
Never edit one that has shipped; append a new one."""

from __future__ import annotations

from sqlite_utils import Database

from workbench.project.schema import MigrationSet, run_sql

MIGRATIONS = MigrationSet("rep")


@MIGRATIONS(name="0001_sets_and_entities", replaces="0005_rep")
def sets_and_entities(db: Database) -> None:
    run_sql(
        db,
        """
        CREATE TABLE rep_sets (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,                 -- rep (a demographic's role prompts), eep (entity eliciting prompts)
            name TEXT NOT NULL,                 -- the demographic, or the EEP set's name
            version INTEGER NOT NULL,
            hash TEXT NOT NULL,                 -- sha256 of body
            body TEXT NOT NULL,                 -- the set file (TOML), exactly as saved
            origin TEXT NOT NULL DEFAULT 'user',-- shipped, user, imported
            created_at TEXT NOT NULL,
            UNIQUE (name, version)
        );
        CREATE TABLE rep_prompts (
            id INTEGER PRIMARY KEY,             -- the item_id of rep and rep-eep runs
            set_id INTEGER NOT NULL REFERENCES rep_sets(id) ON DELETE CASCADE,
            key TEXT NOT NULL,
            position INTEGER NOT NULL,
            name TEXT NOT NULL,
            stem TEXT NOT NULL,
            subject TEXT,
            UNIQUE (set_id, key)
        );
        CREATE TABLE rep_entity_extractions (
            book_id INTEGER NOT NULL REFERENCES books(id) ON DELETE CASCADE,
            pipeline TEXT NOT NULL,             -- spaCy pipeline name and version
            content_hash TEXT,                  -- the book text the entities came from
            created_at TEXT NOT NULL,
            PRIMARY KEY (book_id, pipeline)
        );
        CREATE TABLE rep_book_entities (
            book_id INTEGER NOT NULL REFERENCES books(id) ON DELETE CASCADE,
            pipeline TEXT NOT NULL,
            entity TEXT NOT NULL,               -- normalised: lower case, single spaces
            label TEXT NOT NULL,                -- spaCy entity type
            count INTEGER NOT NULL,
            PRIMARY KEY (book_id, pipeline, entity, label)
        )
        """,
    )
