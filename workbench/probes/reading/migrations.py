"""The reading probe's tables: scene sets and scenes, substituted names, question sets and questions.

This part's own migrations, in order (``workbench/project/schema.py`` says how they are found and applied).
Never edit one that has shipped; append a new one."""

from __future__ import annotations

from sqlite_utils import Database

from workbench.project.schema import MigrationSet, run_sql

MIGRATIONS = MigrationSet("reading")


@MIGRATIONS(name="0001_scenes_names_questions", replaces="0006_reading")
def scenes_names_questions(db: Database) -> None:
    run_sql(
        db,
        """
        CREATE TABLE reading_scene_sets (
            id INTEGER PRIMARY KEY,
            book_id INTEGER NOT NULL REFERENCES books(id) ON DELETE CASCADE,
            target_words INTEGER NOT NULL,      -- the scene length asked for
            content_hash TEXT,                  -- the book text the scenes were cut from
            scenes INTEGER NOT NULL,
            words INTEGER NOT NULL,             -- words in the whole book
            created_at TEXT NOT NULL,
            UNIQUE (book_id, target_words, content_hash)
        );
        CREATE TABLE reading_scenes (
            id INTEGER PRIMARY KEY,
            set_id INTEGER NOT NULL REFERENCES reading_scene_sets(id) ON DELETE CASCADE,
            scene INTEGER NOT NULL,             -- 0-based position in the book
            start_char INTEGER NOT NULL,        -- the scenes of a set cover the book's text exactly once
            end_char INTEGER NOT NULL,
            words INTEGER NOT NULL,
            word_start INTEGER NOT NULL,        -- words of the book before the scene
            UNIQUE (set_id, scene)
        );
        CREATE TABLE reading_substitutions (
            book_id INTEGER PRIMARY KEY REFERENCES books(id) ON DELETE CASCADE,
            seed INTEGER NOT NULL,
            content_hash TEXT,                  -- the book text the names were found in
            pipeline TEXT NOT NULL,             -- spaCy pipeline name and version
            edits TEXT NOT NULL,                -- JSON [[start, end, replacement], ...] into the original text
            created_at TEXT NOT NULL
        );
        CREATE TABLE reading_names (
            book_id INTEGER NOT NULL REFERENCES books(id) ON DELETE CASCADE,
            original TEXT NOT NULL,             -- one word of a character's name as the book writes it
            replacement TEXT NOT NULL,
            role TEXT NOT NULL,                 -- first (given name) or surname
            gender TEXT NOT NULL,               -- female, male or unknown
            mentions INTEGER NOT NULL,          -- PERSON mentions the word was part of
            scope TEXT NOT NULL,                -- everywhere (each capitalised use) or mentions (only where tagged)
            PRIMARY KEY (book_id, original)
        );
        CREATE TABLE reading_question_sets (
            id INTEGER PRIMARY KEY,
            book_id INTEGER REFERENCES books(id) ON DELETE CASCADE,
            scene_set_id INTEGER REFERENCES reading_scene_sets(id) ON DELETE SET NULL,
            variant TEXT NOT NULL,              -- original or substituted (names)
            summaries TEXT NOT NULL DEFAULT '', -- the model label whose summaries the questions use
            settings TEXT NOT NULL DEFAULT '{}',-- JSON: every, options, seed, kinds ...
            fingerprint TEXT NOT NULL,          -- sha256 of the questions: the same questions are stored once
            origin TEXT NOT NULL DEFAULT 'built', -- built, imported
            created_at TEXT NOT NULL
        );
        CREATE TABLE reading_questions (
            id INTEGER PRIMARY KEY,             -- the item_id of reading-answer runs
            set_id INTEGER NOT NULL REFERENCES reading_question_sets(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            key TEXT NOT NULL,                  -- the question id exports carry
            kind TEXT NOT NULL,                 -- lookahead, false-summary, other-book, reconstruct, reconstruct-passage
            checkpoint_scene INTEGER,           -- read-along: asked after this scene
            checkpoint_char INTEGER,            -- ... which ends here in the variant's text
            checkpoint_word INTEGER,
            scene INTEGER,                      -- the scene the true option (or the reconstruction) is about
            retention_words INTEGER,            -- words between that scene's end and the checkpoint
            retention_scenes INTEGER,
            options TEXT NOT NULL DEFAULT '[]', -- JSON list of option texts ("None of the above" not included)
            sources TEXT NOT NULL DEFAULT '[]', -- JSON: where each option came from
            answer INTEGER,                     -- index into options; NULL when none of them is true
            body TEXT NOT NULL DEFAULT '{}',    -- JSON: reconstruction texts, passage span ...
            UNIQUE (set_id, position)
        );
        CREATE INDEX reading_questions_set ON reading_questions (set_id)
        """,
    )
