"""The project file's schema: the platform's tables here, each part's tables in the part's own migrations.

Every table is made and changed by a named migration (sqlite-utils' ``Migrations``), and the file records each
one that ran by its set and name (``_sqlite_migrations``): what a file holds is the list of names, not a count.

- **The platform** (this module, set ``palimpsest``): what several parts use -- books, their texts, tags and
  sets, settings, models, prompt templates, runs and responses, the response cache, prices.
- **Each part** that keeps tables of its own names a module in its ``Part(migrations=...)`` whose ``MIGRATIONS``
  is a ``MigrationSet`` named after the part (``workbench/probes/cloze/migrations.py``, set ``name-cloze``). A
  new probe adds its tables there; nothing here changes.

A project is made, and an older one brought up to date, by applying the platform's set and then each part's in
``PARTS`` order (``apply``). Never edit a migration that has shipped, in any set; append a new one to its set.

Until the parts kept their own, one list here made every table (``palimpsest/0001`` to ``0009``). The part
migration that now does what one of those did names it (``replaces="0005_rep"``): on a file where that one
ran, the part's migration is recorded as applied without running (its tables are there already).

``PRAGMA user_version`` holds ``FORMAT``: how the file records its schema, not a count of migrations. The
releases with the one list read it as their number of migrations and refuse a file above theirs (9); a file
made or upgraded here carries 10, so they refuse it rather than run their migrations into tables that exist.
Adding a migration to a set leaves ``FORMAT`` alone (this version refuses a file with a migration it does not
know, in any set: ``unknown_migrations``); only a change in how migrations are recorded would raise it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from sqlite_utils import Database, Migrations

from workbench import parts

# "PALI" in ASCII: marks a SQLite file as a Palimpsest project.
APPLICATION_ID = 0x50414C49
#: ``PRAGMA user_version`` of a file whose migrations are recorded in the platform's and the parts' sets
FORMAT = 10
#: the platform's set; it also holds the records of the retired migrations of the one list
PLATFORM_SET = "palimpsest"


class MigrationSet(Migrations):
    """A set of ordered, named migrations: sqlite-utils' ``Migrations`` (each recorded by set and name when it
    runs, inside its transaction), whose migrations may also say which retired migration of the platform's set
    they take over: ``@MIGRATIONS(name="0001_sets", replaces="0005_rep")``. Where that one was applied, the
    new one is recorded as applied and its body does not run."""

    def __init__(self, name: str):
        super().__init__(name)
        #: the migrations' names, in order
        self.names: list[str] = []
        #: migration name -> the retired platform migration whose work it takes over
        self.replaces: dict[str, str] = {}

    def __call__(self, *, name: str | None = None, transactional: bool = True,
                 replaces: str | None = None) -> Callable:
        def inner(fn: Callable) -> Callable:
            migration_name = name or fn.__name__
            register = super(MigrationSet, self).__call__(name=migration_name, transactional=transactional)
            if replaces is None:
                register(fn)
            else:
                def run_unless_replaced(db: Database) -> None:
                    if not _applied(db, PLATFORM_SET, replaces):
                        fn(db)

                run_unless_replaced.__name__ = fn.__name__
                register(run_unless_replaced)
                self.replaces[migration_name] = replaces
            self.names.append(migration_name)
            return fn

        return inner


def _applied(db: Database, migration_set: str, name: str) -> bool:
    if not db[Migrations.migrations_table].exists():
        return False
    return db.execute(f"SELECT 1 FROM [{Migrations.migrations_table}] WHERE migration_set = ? AND name = ?",
                      [migration_set, name]).fetchone() is not None


def run_sql(db: Database, script: str) -> None:
    """Run several statements inside the migration's transaction (executescript would commit)."""
    for statement in script.split(";\n"):
        if statement.strip():
            db.execute(statement)


def migration_sets() -> list[MigrationSet]:
    """The platform's set, then each part's (``Part.migrations``) in ``PARTS`` order: the order they apply in."""
    sets = [MIGRATIONS]
    for part in parts.parts():
        if part.migrations:
            found = getattr(importlib.import_module(part.migrations), "MIGRATIONS", None)
            if not isinstance(found, MigrationSet):
                raise TypeError(f"{part.migrations} (the migrations of the part {part.name!r}) has no MIGRATIONS "
                                "MigrationSet")
            sets.append(found)
    names = [s.name for s in sets]
    if len(set(names)) != len(names):
        raise ValueError(f"two parts declare migration sets of one name: {names}")
    for s in sets:
        live = [old for old in s.replaces.values() if old in MIGRATIONS.names]
        if live:
            raise ValueError(f"{s.name} replaces {live}, which the platform's set still runs")
    return sets


def migration_names() -> list[str]:
    """Every migration this version knows, as ``set/name``: those it runs, then the retired ones it takes over."""
    sets = migration_sets()
    current = [f"{s.name}/{name}" for s in sets for name in s.names]
    retired = dict.fromkeys(f"{PLATFORM_SET}/{old}" for s in sets for old in s.replaces.values())
    return current + [name for name in retired if name not in current]


def applied_migrations(db: Database) -> list[str]:
    """The migrations recorded in the file, as ``set/name``, in the order they ran."""
    if not db[Migrations.migrations_table].exists():
        return []
    rows = db.execute(f"SELECT migration_set, name FROM [{Migrations.migrations_table}] ORDER BY rowid")
    return [f"{migration_set}/{name}" for migration_set, name in rows]


def unknown_migrations(db: Database) -> list[str]:
    """Migrations recorded in the file that this version does not know (a newer version's, or a part's that
    this one lacks), as ``set/name``."""
    known = set(migration_names())
    return [name for name in applied_migrations(db) if name not in known]


def pending(db: Database) -> list[str]:
    """The migrations ``apply`` would record, as ``set/name`` (a replaced one among them, though it runs nothing)."""
    return [f"{s.name}/{m.name}" for s in migration_sets() for m in s.pending(db)]


def apply(db: Database) -> None:
    """Apply every pending migration: the platform's set, then each part's, each migration in its own
    transaction with its record."""
    for s in migration_sets():
        s.apply(db)


MIGRATIONS = MigrationSet(PLATFORM_SET)


@MIGRATIONS(name="0001_library")
def library(db: Database) -> None:
    run_sql(
        db,
        """
        CREATE TABLE books (
            id INTEGER PRIMARY KEY,
            title TEXT NOT NULL DEFAULT '',
            author TEXT NOT NULL DEFAULT '',
            year INTEGER,
            language TEXT,
            source_kind TEXT NOT NULL,          -- text, gutenberg, epub, download, external
            source_name TEXT,                   -- file name or address the book came from
            external_id TEXT,                   -- Gutenberg number, or an id from imported results
            content_hash TEXT UNIQUE,           -- sha256 of the stored text; NULL for id-only books
            words INTEGER NOT NULL DEFAULT 0,
            added_at TEXT NOT NULL
        );
        CREATE TABLE book_texts (
            book_id INTEGER PRIMARY KEY REFERENCES books(id) ON DELETE CASCADE,
            text TEXT NOT NULL
        );
        CREATE TABLE book_tags (
            book_id INTEGER NOT NULL REFERENCES books(id) ON DELETE CASCADE,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            PRIMARY KEY (book_id, key)
        );
        CREATE TABLE book_sets (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            description TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL
        );
        CREATE TABLE book_set_members (
            set_id INTEGER NOT NULL REFERENCES book_sets(id) ON DELETE CASCADE,
            book_id INTEGER NOT NULL REFERENCES books(id) ON DELETE CASCADE,
            PRIMARY KEY (set_id, book_id)
        );
        CREATE TABLE settings (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL                 -- JSON
        )
        """,
    )


@MIGRATIONS(name="0002_models_and_runs")
def models_and_runs(db: Database) -> None:
    run_sql(
        db,
        """
        CREATE TABLE models (
            id INTEGER PRIMARY KEY,
            label TEXT NOT NULL UNIQUE,
            backend TEXT NOT NULL,              -- hf, gguf, openai, external
            ref TEXT NOT NULL DEFAULT '',       -- hub id or folder, GGUF path, API model name
            base_url TEXT,
            api_key_env TEXT,                   -- the NAME of an environment variable, never a key
            api_key_keyring TEXT,               -- the NAME of an OS keyring entry, never a key
            params TEXT NOT NULL DEFAULT '{}',  -- JSON: device, dtype, n_ctx, chat mode ...
            created_at TEXT NOT NULL
        );
        CREATE TABLE model_tags (
            model_id INTEGER NOT NULL REFERENCES models(id) ON DELETE CASCADE,
            key TEXT NOT NULL,
            value TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (model_id, key)
        );
        CREATE TABLE prompt_templates (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            version INTEGER NOT NULL,
            kind TEXT NOT NULL,                 -- cloze, rep-judge, summary, ...
            body TEXT NOT NULL,
            hash TEXT NOT NULL,                 -- sha256 of body
            origin TEXT NOT NULL DEFAULT 'user',-- shipped, user
            created_at TEXT NOT NULL,
            UNIQUE (name, version)
        );
        CREATE TABLE runs (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,                 -- cloze, cloze-mlm, rep, rep-judge, summary ...
            model_id INTEGER REFERENCES models(id),
            template_id INTEGER REFERENCES prompt_templates(id),
            params TEXT NOT NULL DEFAULT '{}',  -- JSON generation parameters, seed included
            config TEXT NOT NULL DEFAULT '{}',  -- JSON: what the run covers
            status TEXT NOT NULL DEFAULT 'pending',  -- pending, running, done, cancelled, interrupted
            code_version TEXT NOT NULL,
            created_at TEXT NOT NULL,
            started_at TEXT,
            finished_at TEXT,
            total INTEGER NOT NULL DEFAULT 0,   -- items x samples
            usage TEXT NOT NULL DEFAULT '{}',   -- JSON: tokens and cost so far
            note TEXT NOT NULL DEFAULT ''
        );
        CREATE TABLE responses (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            item_id INTEGER NOT NULL,
            sample INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL,               -- ok, failed
            prompt TEXT,
            raw TEXT,
            error TEXT,
            logprob REAL,
            seed INTEGER,
            prompt_tokens INTEGER,
            completion_tokens INTEGER,
            latency_ms REAL,
            cached INTEGER NOT NULL DEFAULT 0,
            extra TEXT,                         -- JSON: finish reason, top-k fills ...
            created_at TEXT NOT NULL,
            UNIQUE (run_id, item_id, sample)
        );
        CREATE INDEX responses_run_status ON responses (run_id, status);
        CREATE TABLE response_cache (
            key TEXT PRIMARY KEY,               -- sha256 of backend, model, parameters, prompt, sample
            backend TEXT NOT NULL,
            model TEXT NOT NULL,
            response TEXT NOT NULL,             -- JSON
            created_at TEXT NOT NULL
        );
        CREATE TABLE prices (
            model TEXT PRIMARY KEY,             -- API model name, or a prefix ending in '*'
            input_per_million REAL NOT NULL,
            output_per_million REAL NOT NULL
        )
        """,
    )


# Retired from this set (each now a part's migration, which names it with ``replaces``; a file that ran it
# keeps its record here): 0003_name_cloze, 0004_annotation, 0005_rep, 0006_reading, 0007_leakage,
# 0008_validity, 0009_cloze_passages_by_origin. Append new platform migrations below; never reuse those names.
