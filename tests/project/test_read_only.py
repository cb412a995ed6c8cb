"""A read-only project (the file, or the folder it is in) opens for reading; a change says it is read-only
and what to do, never "may be damaged" or a traceback.

The files are made read-only for real with chmod. A file or folder that nobody may write (no write
permission bit) counts as read-only even for an administrator, so these tests mean the same when the suite
runs as root, who could write it anyway.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.cloze_texts import BOOKS, gpt4books_rows
from tests.fixtures.projects import first_version_project
from workbench.cli import main
from workbench.errors import ProjectError
from workbench.project import Project

ROOT = Path(__file__).resolve().parents[2]
WRITE_BITS = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH


def add_book(project: Project, title: str) -> None:
    with project.db.transaction():
        project.db["books"].insert({"title": title, "source_kind": "text", "added_at": "2024-01-01"})


@pytest.fixture
def folder(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    yield folder
    for path in [folder, *folder.iterdir()]:  # so that pytest can clean up
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


@pytest.fixture
def saved(folder):
    """A project with one book, closed, in ``folder``."""
    project = Project.create(folder / "colleague.palimpsest")
    add_book(project, "Villette")
    project.close()
    return project.path


def without_write(path: Path) -> None:
    path.chmod(path.stat().st_mode & ~WRITE_BITS)


def make_read_only(path: Path, how: str) -> None:
    without_write(path if how == "file" else path.parent)


@pytest.mark.parametrize("how", ["file", "folder"])
def test_a_read_only_project_opens_for_reading_and_leaves_nothing_beside_it(saved, how):
    make_read_only(saved, how)
    before = sorted(p.name for p in saved.parent.iterdir())
    with Project.open(saved) as project:
        assert project.read_only
        assert [r[0] for r in project.db.execute("SELECT title FROM books")] == ["Villette"]
    assert sorted(p.name for p in saved.parent.iterdir()) == before


@pytest.mark.parametrize("how", ["file", "folder"])
def test_changing_a_read_only_project_says_it_is_read_only_and_what_to_do(saved, how):
    make_read_only(saved, how)
    with Project.open(saved) as project:
        with pytest.raises(ProjectError) as caught:
            add_book(project, "Shirley")
        with pytest.raises(ProjectError, match="read-only"):
            project.set_setting("last_page", "library")
    message = str(caught.value)
    assert "read-only" in message and "colleague.palimpsest" in message
    assert "copy" in message.lower() and "permission" in message
    assert "damaged" not in message


def test_a_read_only_project_that_needs_updating_is_not_changed_and_says_what_to_do(folder):
    path = folder / "old.palimpsest"
    db = first_version_project(path)
    db.conn.close()
    without_write(path)
    before = path.read_bytes()
    with pytest.raises(ProjectError, match="read-only") as caught:
        Project.open(path)
    assert "earlier version" in str(caught.value) and "copy" in str(caught.value).lower()
    assert path.read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == ["old.palimpsest"]


def test_save_as_from_a_read_only_project_makes_a_copy_that_can_be_changed(saved, tmp_path):
    make_read_only(saved, "folder")
    with Project.open(saved) as project:
        copy = project.save_as(tmp_path / "mine.palimpsest")
    try:
        assert not copy.read_only
        add_book(copy, "Shirley")
        assert copy.db.execute("SELECT COUNT(*) FROM books").fetchone()[0] == 2
    finally:
        copy.close()


@pytest.fixture
def results_project(folder):
    """A project with imported name-cloze results for two models (read commands have something to show)."""
    from workbench.probes.cloze.gpt4books import import_gpt4books

    project = Project.create(folder / "results.palimpsest")
    for model, right in (("alpha", lambda i: i), ("beta", lambda i: 10 - i)):
        files = folder.parent / model
        files.mkdir()
        paths = []
        for i in range(1, BOOKS + 1):
            path = files / f"b{i:02d}.tsv"
            path.write_text(gpt4books_rows(i, right(i)), encoding="utf-8")
            paths.append(path)
        import_gpt4books(project, paths, model)
    project.close()
    return project.path


def test_the_read_commands_work_on_a_project_in_a_read_only_folder(results_project, tmp_path, capsys):
    make_read_only(results_project, "folder")
    path = str(results_project)
    assert main(["info", path]) == 0
    assert "responses" in capsys.readouterr().out
    assert main(["books", path]) == 0
    assert main(["cloze", "accuracy", path, "--format", "csv"]) == 0
    assert "alpha" in capsys.readouterr().out
    out = tmp_path / "ranked.png"
    assert main(["chart", path, "cloze-accuracy", "--out", str(out)]) == 0
    assert out.exists()
    assert main(["methods", path]) == 0
    assert sorted(p.name for p in results_project.parent.iterdir()) == ["results.palimpsest"]


def test_a_change_from_the_command_line_on_a_read_only_project_is_one_plain_sentence(saved):
    make_read_only(saved, "file")
    result = subprocess.run([sys.executable, "-m", "workbench", "tag", str(saved), "1", "genre=gothic"],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 1, result.stdout
    assert "Traceback" not in result.stderr
    assert "read-only" in result.stderr and "damaged" not in result.stderr


def test_an_administrator_who_could_write_still_gets_a_read_only_open_of_a_file_marked_read_only(saved):
    """The permission bits decide, not only whether this account could override them."""
    make_read_only(saved, "file")
    assert os.access(saved, os.R_OK)
    with Project.open(saved) as project:
        assert project.read_only


def test_the_window_opens_a_read_only_project_and_shows_every_page_without_an_error(folder, qtbot, tmp_path,
                                                                                    messages):
    from PySide6.QtCore import QSettings

    from ui.main_window import MainWindow
    from workbench import parts
    saved = folder / "fresh.palimpsest"
    Project.create(saved).close()  # never shown before: the shipped templates and sets are not stored in it yet
    make_read_only(saved, "folder")
    window = MainWindow(settings=QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    assert window.open_project(saved)
    assert window.project.read_only
    for page in parts.pages():
        window.show_page(page.key)
        qtbot.wait(50)
    window.shutdown()
    assert messages["errors"] == []
