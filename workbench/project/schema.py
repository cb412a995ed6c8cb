"""The project file's schema: one list of migrations, applied in order.

Never edit a migration that has shipped; append a new one. ``SCHEMA_VERSION`` is the number of
migrations and is written to ``PRAGMA user_version`` after migrating, so a file written by a newer
Palimpsest (more migrations than this one knows) can be recognised and refused.
"""

from __future__ import annotations

from sqlite_utils import Database, Migrations

MIGRATIONS = Migrations("palimpsest")

# "PALI" in ASCII: marks a SQLite file as a Palimpsest project.
APPLICATION_ID = 0x50414C49


def schema_version() -> int:
    return len(MIGRATIONS._migrations)


def migration_names() -> list[str]:
    return [m.name for m in MIGRATIONS._migrations]


def run_sql(db: Database, script: str) -> None:
    """Run several statements inside the migration's transaction (executescript would commit)."""
    for statement in script.split(";\n"):
        if statement.strip():
            db.execute(statement)


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


@MIGRATIONS(name="0003_name_cloze")
def name_cloze(db: Database) -> None:
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


# Append new migrations at the end of this file; never reorder or edit shipped ones.


@MIGRATIONS(name="0004_annotation")
def annotation(db: Database) -> None:
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


@MIGRATIONS(name="0005_rep")
def rep(db: Database) -> None:
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


@MIGRATIONS(name="0006_reading")
def reading(db: Database) -> None:
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


@MIGRATIONS(name="0007_leakage")
def leakage(db: Database) -> None:
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


@MIGRATIONS(name="0008_validity")
def validity(db: Database) -> None:
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


@MIGRATIONS(name="0009_cloze_passages_by_origin")
def cloze_passages_by_origin(db: Database) -> None:
    # the Probes page counts each book's extracted and imported passages whenever it reloads: from this index
    # alone (3 ms for 57,000 passages) instead of every passage row (20-30 ms, on the window's thread);
    # IF NOT EXISTS: this branch once numbered it 0008, so a project made then already has the index
    db.execute("CREATE INDEX IF NOT EXISTS cloze_passages_book_origin ON cloze_passages (book_id, origin)")
