"""The continuation probe's table: its passages, as offsets into each book's stored text.

A passage is sampled for one tokenization (a local model's tokenizer, or words), one seed, one number of
passages per book and one prefix and continuation length; ``continuation`` holds the true continuation's tokens
(token ids, or words) so that answers are scored without reading the book again. Never edit a migration that has
shipped; append a new one."""

from __future__ import annotations

from sqlite_utils import Database

from workbench.project.schema import MigrationSet, run_sql

MIGRATIONS = MigrationSet("continuation")


@MIGRATIONS(name="0001_continuation_passages")
def continuation_passages(db: Database) -> None:
    run_sql(
        db,
        """
        CREATE TABLE continuation_passages (
            id INTEGER PRIMARY KEY,
            book_id INTEGER NOT NULL REFERENCES books(id) ON DELETE CASCADE,
            tokenizer TEXT NOT NULL,            -- 'words', or the local model's tokenizer ('hf:...', 'gguf:...')
            seed INTEGER NOT NULL,
            per_book INTEGER NOT NULL,
            prefix_tokens INTEGER NOT NULL,
            continue_tokens INTEGER NOT NULL,
            position INTEGER NOT NULL,          -- which stretch of the book (0 .. per_book - 1)
            start_char INTEGER NOT NULL,        -- the prefix starts here in the book's stored text
            prefix_end INTEGER NOT NULL,        -- ... and ends here, where the true continuation starts
            end_char INTEGER NOT NULL,          -- the true continuation ends here
            continuation TEXT NOT NULL,         -- JSON: the true continuation's tokens
            created_at TEXT NOT NULL,
            UNIQUE (book_id, tokenizer, seed, per_book, prefix_tokens, continue_tokens, position)
        );
        CREATE INDEX continuation_passages_setting
            ON continuation_passages (tokenizer, seed, per_book, prefix_tokens, continue_tokens, book_id)
        """,
    )
