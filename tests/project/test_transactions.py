"""``db.transaction()`` makes a group of writes all-or-nothing (a bare ``with db.conn:`` would not)."""

import subprocess
import sys

import pytest


def _insert_book(db, title):
    return db.execute(
        "INSERT INTO books (title, source_kind, added_at) VALUES (?, 'text', 'x')", [title]
    ).lastrowid


def test_an_error_rolls_back_every_statement(project):
    db = project.db
    with pytest.raises(RuntimeError), db.transaction():
        book_id = _insert_book(db, "Half")
        db.execute("INSERT INTO book_texts (book_id, text) VALUES (?, 'text')", [book_id])
        raise RuntimeError("stop")
    assert db.execute("SELECT COUNT(*) FROM books").fetchone()[0] == 0
    assert db.execute("SELECT COUNT(*) FROM book_texts").fetchone()[0] == 0


def test_nested_blocks_are_savepoints(project):
    db = project.db
    with db.transaction():
        _insert_book(db, "Kept")
        with pytest.raises(ValueError), db.transaction():
            _insert_book(db, "Dropped")
            raise ValueError
    titles = [r[0] for r in db.execute("SELECT title FROM books").fetchall()]
    assert titles == ["Kept"]


def test_a_process_killed_inside_a_transaction_leaves_nothing_of_it(project):
    path = project.path
    script = (
        "import os, sys\n"
        "from workbench.project import Project\n"
        "p = Project.open(sys.argv[1])\n"
        "db = p.db\n"
        "with db.transaction():\n"
        "    db.execute(\"INSERT INTO books (title, source_kind, added_at) VALUES ('Ghost', 'text', 'x')\")\n"
        "    os.kill(os.getpid(), 9)\n"
    )
    result = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True)
    assert result.returncode == -9
    assert project.db.execute("SELECT COUNT(*) FROM books WHERE title = 'Ghost'").fetchone()[0] == 0
    assert project.integrity_problems() == []
