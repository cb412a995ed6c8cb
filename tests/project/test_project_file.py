"""The project file: create, reopen, migrate with a backup, refuse newer files, integrity, save-as, threads."""

import sqlite3
import threading

import pytest

from tests.fixtures.projects import first_version_project
from workbench.errors import ProjectError
from workbench.project import Project, schema


def _tables(path):
    conn = sqlite3.connect(path)
    try:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        conn.close()


def test_create_records_schema_and_reopens(tmp_path):
    path = tmp_path / "a.palimpsest"
    Project.create(path).close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.FORMAT
    assert conn.execute("PRAGMA application_id").fetchone()[0] == schema.APPLICATION_ID
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    with Project.open(path) as project:
        assert {"books", "runs", "responses"} <= set(project.db.table_names())


def test_create_adds_suffix_and_refuses_to_overwrite(tmp_path):
    project = Project.create(tmp_path / "study")
    assert project.path.name == "study.palimpsest"
    project.close()
    with pytest.raises(ProjectError, match="already exists"):
        Project.create(tmp_path / "study.palimpsest")


def test_close_checkpoints_so_the_file_stands_alone(tmp_path):
    path = tmp_path / "a.palimpsest"
    project = Project.create(path)
    project.set_setting("note", "kept")
    project.close()
    wal = path.with_name(path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    # A copy of the main file alone holds the data.
    copy = tmp_path / "copy.palimpsest"
    copy.write_bytes(path.read_bytes())
    with Project.open(copy) as reopened:
        assert reopened.get_setting("note") == "kept"


def test_older_file_is_backed_up_then_migrated(tmp_path):
    path = tmp_path / "old.palimpsest"
    db = first_version_project(path)
    db.execute("PRAGMA user_version = 1")
    db["books"].insert({"title": "Old Book", "source_kind": "text", "added_at": "2020-01-01"})
    db.conn.commit()
    db.conn.close()
    assert "models" not in _tables(path)

    project = Project.open(path)
    backup = project.migration_backup
    assert backup.exists() and backup != path
    assert "models" in set(project.db.table_names())
    assert project.db.execute("SELECT title FROM books").fetchone()[0] == "Old Book"
    assert project.db.execute("PRAGMA user_version").fetchone()[0] == schema.FORMAT
    project.close()
    # The backup is the file as it was: old schema, same data.
    backup_tables = _tables(backup)
    assert "books" in backup_tables and "models" not in backup_tables
    conn = sqlite3.connect(backup)
    assert conn.execute("SELECT title FROM books").fetchone()[0] == "Old Book"
    conn.close()


def test_file_from_a_newer_version_is_refused(tmp_path):
    path = tmp_path / "new.palimpsest"
    Project.create(path).close()
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) VALUES ('palimpsest', '9999_future', 'x')"
    )
    conn.execute(f"PRAGMA user_version = {schema.FORMAT + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(ProjectError, match="newer version of Palimpsest"):
        Project.open(path)


def test_non_project_files_get_plain_messages(tmp_path):
    junk = tmp_path / "junk.palimpsest"
    junk.write_bytes(b"\x00\xffrandom bytes" * 100)
    with pytest.raises(ProjectError, match="not a Palimpsest project"):
        Project.open(junk)
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    with pytest.raises(ProjectError, match="not a Palimpsest project"):
        Project.open(other)
    with pytest.raises(ProjectError, match="no project file"):
        Project.open(tmp_path / "missing.palimpsest")


def test_damaged_file_is_reported_in_plain_words(tmp_path):
    path = tmp_path / "damaged.palimpsest"
    project = Project.create(path)
    with project.db.conn:
        for i in range(400):
            project.db.execute(
                "INSERT INTO books (title, author, source_kind, added_at) VALUES (?, ?, 'text', 'x')",
                [f"Title {i} " * 20, f"Author {i}"],
            )
    project.db.execute("CREATE INDEX books_title ON books (title)")
    project.close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = DELETE")
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'books_title'").fetchone()[0]
    conn.close()
    data = bytearray(path.read_bytes())
    # Scribble over the index's pages: the table stays readable, the index no longer matches it.
    start = (root - 1) * page_size
    data[start + 100 : start + page_size] = bytes([0x55]) * (page_size - 100)
    path.write_bytes(bytes(data))
    with pytest.raises(ProjectError) as excinfo:
        Project.open(path)
    message = str(excinfo.value)
    assert "damaged" in message or "could not be read" in message
    assert "backup" in message


def test_save_as_writes_a_consistent_copy_and_switches_to_it(tmp_path):
    project = Project.create(tmp_path / "a.palimpsest")
    project.set_setting("x", 1)
    copy = project.save_as(tmp_path / "b")
    assert copy.path.name == "b.palimpsest"
    assert project.closed
    assert copy.get_setting("x") == 1
    assert copy.integrity_problems() == []
    copy.close()


def test_each_thread_gets_its_own_connection(project):
    seen = {}

    def work(name):
        seen[name] = project.db
        with project.db.conn:
            project.db.execute("INSERT INTO settings (key, value) VALUES (?, '1')", [name])
        project.release_thread_connection()

    threads = [threading.Thread(target=work, args=(f"t{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(db) for db in seen.values()}) == 4
    assert project.db not in seen.values()
    assert project.db.execute("SELECT COUNT(*) FROM settings WHERE key LIKE 't%'").fetchone()[0] == 4
