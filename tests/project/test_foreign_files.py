"""Opening a file that is not a Palimpsest project leaves it exactly as it was.

A project is recognised before anything is written: by the application id Palimpsest has set in every
project since the first version ("PALI"), or by Palimpsest's own migration records. Any other SQLite file
(another program's library with a table called ``books``, a WAL-mode database, an empty file) is refused
byte for byte untouched, with nothing left beside it (no -wal, -shm or backup file).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.fixtures.projects import first_version_project
from workbench.errors import ProjectError
from workbench.project import Project, schema


def files_beside(path: Path) -> set[str]:
    return {p.name for p in path.parent.iterdir()}


def refused_untouched(path: Path, match: str) -> None:
    before, beside = path.read_bytes(), files_beside(path)
    with pytest.raises(ProjectError, match=match):
        Project.open(path)
    assert path.read_bytes() == before
    assert files_beside(path) == beside


def another_programs_library(path: Path, *, wal: bool = False) -> Path:
    conn = sqlite3.connect(path)
    if wal:
        conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT, shelf TEXT)")
    conn.executemany("INSERT INTO books (title, shelf) VALUES (?, ?)", [("Emma", "A1"), ("Persuasion", "A2")])
    conn.commit()
    conn.close()
    return path


def test_another_programs_library_with_a_books_table_is_refused_untouched(tmp_path):
    path = another_programs_library(tmp_path / "calibre-library.db")
    refused_untouched(path, "not a Palimpsest project")


def test_a_wal_mode_database_of_another_program_is_refused_untouched(tmp_path):
    path = another_programs_library(tmp_path / "library.palimpsest", wal=True)
    refused_untouched(path, "not a Palimpsest project")


def test_an_empty_file_does_not_become_a_database(tmp_path):
    path = tmp_path / "empty.palimpsest"
    path.write_bytes(b"")
    refused_untouched(path, "empty")
    assert path.stat().st_size == 0


def test_a_project_left_by_a_crash_before_its_first_checkpoint_opens(tmp_path):
    """Its marker and tables are still only in the -wal file beside it: they must be read, not missed."""
    import shutil

    import sqlite_utils

    made = tmp_path / "made"
    made.mkdir()
    path = made / "fresh.palimpsest"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute(f"PRAGMA application_id = {schema.APPLICATION_ID}")
    schema.apply(sqlite_utils.Database(conn))
    crashed = tmp_path / "crashed"
    shutil.copytree(made, crashed)  # the files as a crash leaves them, while the connection is still open
    conn.close()
    with Project.open(crashed / "fresh.palimpsest") as project:
        assert "runs" in project.db.table_names()


def test_a_file_of_an_earlier_palimpsest_still_opens_and_is_migrated(tmp_path):
    """Every earlier version wrote the application id; a file with it and an older schema is migrated."""
    path = tmp_path / "old.palimpsest"
    db = first_version_project(path)
    db.conn.close()
    with Project.open(path) as project:
        assert project.migration_backup.exists()
        assert "runs" in project.db.table_names()


def test_palimpsests_migration_records_mark_a_project_without_the_application_id(tmp_path):
    """Belt and braces: a file whose header lost the marker but holds Palimpsest's own migration records."""
    path = tmp_path / "no-marker.palimpsest"
    Project.create(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA application_id = 0")
    conn.commit()
    conn.close()
    with Project.open(path) as project:
        assert "books" in project.db.table_names()
