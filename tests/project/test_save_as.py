"""Save as never destroys a file without being told to: an existing file (another project, a text file) is
replaced only with an explicit overwrite, and never the open project itself or its -wal / -shm files."""

from __future__ import annotations

import sqlite3

import pytest

from workbench.cli import main
from workbench.errors import ProjectError
from workbench.project import Project


@pytest.fixture
def notes_file(tmp_path):
    path = tmp_path / "notes.palimpsest"
    path.write_text("three years of reading notes")
    return path


def books_in(path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [r[0] for r in conn.execute("SELECT title FROM books ORDER BY id")]
    finally:
        conn.close()


def add_book(project: Project, title: str) -> None:
    with project.db.transaction():
        project.db["books"].insert({"title": title, "source_kind": "text", "added_at": "2024-01-01"})


def test_save_copy_refuses_to_replace_a_text_file_without_overwrite(project, notes_file):
    with pytest.raises(ProjectError, match="already exists"):
        project.save_copy(notes_file)
    assert notes_file.read_text() == "three years of reading notes"


def test_save_copy_refuses_to_replace_another_project_without_overwrite(project, tmp_path):
    other = Project.create(tmp_path / "other.palimpsest")
    add_book(other, "Middlemarch")
    other.close()
    with pytest.raises(ProjectError, match="already exists"):
        project.save_copy(tmp_path / "other")  # the suffix is added: still the other project
    assert books_in(tmp_path / "other.palimpsest") == ["Middlemarch"]


def test_save_copy_with_overwrite_replaces_the_file_and_its_stale_wal(project, tmp_path):
    target = tmp_path / "old.palimpsest"
    old = Project.create(target)
    add_book(old, "Old Book")
    old.close()
    stale_wal = target.with_name(target.name + "-wal")
    stale_wal.write_bytes(b"left over from the file that is replaced")
    add_book(project, "New Book")
    project.save_copy(target, overwrite=True)
    assert books_in(target) == ["New Book"]
    assert not stale_wal.exists()


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm"])
def test_save_copy_never_writes_onto_the_open_project_or_its_wal_and_shm(project, suffix):
    add_book(project, "Kept")
    target = project.path.with_name(project.path.name + suffix)
    with pytest.raises(ProjectError, match="open"):
        project.save_copy(target, overwrite=True)
    assert [r[0] for r in project.db.execute("SELECT title FROM books")] == ["Kept"]
    assert project.integrity_problems() == []


def test_save_as_onto_another_project_open_in_this_program_is_refused(project, tmp_path):
    other = Project.create(tmp_path / "other.palimpsest")
    try:
        with pytest.raises(ProjectError, match="open"):
            project.save_copy(other.path, overwrite=True)
    finally:
        other.close()


def test_cli_save_as_refuses_an_existing_file_and_says_how_to_replace_it(project, notes_file, capsys):
    path = project.path
    project.close()
    assert main(["save-as", str(path), str(notes_file)]) == 1
    err = capsys.readouterr().err
    assert "already exists" in err and "--overwrite" in err
    assert notes_file.read_text() == "three years of reading notes"
    assert main(["save-as", str(path), str(notes_file), "--overwrite"]) == 0
    assert books_in(notes_file) == []
