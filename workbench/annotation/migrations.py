"""Annotation's tables: tasks, items, annotators, their queues, answers and adjudications.

This part's own migrations, in order (``workbench/project/schema.py`` says how they are found and applied).
Never edit one that has shipped; append a new one."""

from __future__ import annotations

from sqlite_utils import Database

from workbench.project.schema import MigrationSet, run_sql

MIGRATIONS = MigrationSet("annotation")


@MIGRATIONS(name="0001_tasks_items_answers", replaces="0004_annotation")
def tasks_items_answers(db: Database) -> None:
    run_sql(
        db,
        """
        CREATE TABLE annotation_tasks (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL,                 -- narrative-time, summary-validity, label
            labels TEXT NOT NULL DEFAULT '[]',  -- JSON list: the fixed label set of a label task
            codebook TEXT NOT NULL DEFAULT '',  -- Markdown shown to annotators
            blinded INTEGER NOT NULL DEFAULT 1,
            per_annotator INTEGER,              -- NULL: every annotator gets every item
            overlap REAL NOT NULL DEFAULT 0.2,  -- share of each annotator's items that every annotator gets
            seed INTEGER NOT NULL DEFAULT 0,
            settings TEXT NOT NULL DEFAULT '{}',-- JSON: idle cap and other session settings
            created_at TEXT NOT NULL
        );
        CREATE TABLE annotation_items (
            id INTEGER PRIMARY KEY,
            task_id INTEGER NOT NULL REFERENCES annotation_tasks(id) ON DELETE CASCADE,
            item_key TEXT NOT NULL,             -- the id annotators and files use (opaque when generated)
            text TEXT NOT NULL,                 -- passage, scene, or response to label
            context_before TEXT NOT NULL DEFAULT '',
            context_after TEXT NOT NULL DEFAULT '',
            choices TEXT,                       -- JSON, summary validity: {"true": ..., "distorted": ...}
            gold TEXT,                          -- a known answer; never shown to annotators
            book_id INTEGER REFERENCES books(id) ON DELETE SET NULL,
            start_char INTEGER,                 -- span in the book's stored text
            end_char INTEGER,
            meta TEXT NOT NULL DEFAULT '{}',    -- JSON, hidden when blinded: title, author, model, condition ...
            origin TEXT NOT NULL,               -- passage, scene, imported, added
            created_at TEXT NOT NULL,
            UNIQUE (task_id, item_key)
        );
        CREATE INDEX annotation_items_task ON annotation_items (task_id);
        CREATE TABLE annotators (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            created_at TEXT NOT NULL
        );
        CREATE TABLE annotation_assignments (
            task_id INTEGER NOT NULL REFERENCES annotation_tasks(id) ON DELETE CASCADE,
            annotator_id INTEGER NOT NULL REFERENCES annotators(id) ON DELETE CASCADE,
            item_id INTEGER NOT NULL REFERENCES annotation_items(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,          -- this annotator's own order
            slot INTEGER NOT NULL,              -- the order in which annotators joined the task
            PRIMARY KEY (task_id, annotator_id, item_id)
        );
        CREATE TABLE annotations (
            id INTEGER PRIMARY KEY,
            task_id INTEGER NOT NULL REFERENCES annotation_tasks(id) ON DELETE CASCADE,
            item_id INTEGER NOT NULL REFERENCES annotation_items(id) ON DELETE CASCADE,
            annotator_id INTEGER NOT NULL REFERENCES annotators(id) ON DELETE CASCADE,
            status TEXT NOT NULL,               -- answered, skipped, open (flagged, not answered yet)
            value TEXT,                         -- as entered ('2 hours'), the summary chosen ('true'/'distorted'), a label
            amount REAL,                        -- narrative time: the number and unit entered, and minutes
            unit TEXT,
            minutes REAL,
            chosen_side INTEGER,                -- summary validity: side picked (1/2) and side the true summary was on
            true_side INTEGER,
            confidence INTEGER,
            seconds REAL,                       -- time on the item, idle stretches capped
            flagged INTEGER NOT NULL DEFAULT 0,
            comment TEXT NOT NULL DEFAULT '',
            origin TEXT NOT NULL DEFAULT 'session',  -- session, import
            seq INTEGER NOT NULL,               -- order of this annotator's actions (undo takes the latest)
            answered_at TEXT,
            updated_at TEXT NOT NULL,
            UNIQUE (task_id, item_id, annotator_id)
        );
        CREATE INDEX annotations_annotator ON annotations (task_id, annotator_id, seq);
        CREATE TABLE annotation_adjudications (
            task_id INTEGER NOT NULL REFERENCES annotation_tasks(id) ON DELETE CASCADE,
            item_id INTEGER NOT NULL REFERENCES annotation_items(id) ON DELETE CASCADE,
            value TEXT NOT NULL,
            minutes REAL,
            adjudicator TEXT NOT NULL DEFAULT '',
            note TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            PRIMARY KEY (task_id, item_id)
        )
        """,
    )
