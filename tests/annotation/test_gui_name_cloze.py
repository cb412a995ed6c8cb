"""A name-cloze session on screen: the masked passage and a field for the name, nothing about the book, every
answer in the file the moment Enter (or Ctrl+D, don't know) is pressed."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.annotation.test_blinding import leaks
from tests.fixtures.annotation_data import SECRET_AUTHOR, SECRET_TITLE
from tests.fixtures.annotation_gui import close, key, open_window, start
from tests.fixtures.cloze_books import write_gpt4books
from workbench.corpus.library import update_book
from workbench.probes.cloze.gpt4books import import_gpt4books
from workbench.probes.cloze.human import create_human_task, human_answers
from workbench.project import Project

GOLDS = ["Quentin", "Quentin", "Marguerite"]


@pytest.fixture
def cloze_study(tmp_path):
    path = tmp_path / "cloze-study.palimpsest"
    project = Project.create(path)
    rows = [(f"<name>{g}</name>", g, f"Scene {k}: at dusk [MASK] crossed the yard with the lamp.")
            for k, g in enumerate(GOLDS)]
    import_gpt4books(project, [write_gpt4books(tmp_path, "book", rows)], "gpt")
    book = project.db.execute("SELECT id FROM books").fetchone()[0]
    update_book(project, book, title=SECRET_TITLE, author=SECRET_AUTHOR)
    create_human_task(project, "people", seed=2)
    project.close()
    return path


def test_a_name_cloze_session_is_blinded_and_saves_each_answer_at_once(qtbot, tmp_path, cloze_study):
    window = open_window(qtbot, cloze_study, tmp_path)
    page = start(qtbot, window, "people", "Ann")
    view = page.session_view
    body = view.bodies["name-cloze"]
    assert view.body is body and "[MASK]" in body.passage.toPlainText()
    assert leaks(window) == [] and "Quentin" not in body.passage.toPlainText()
    window.grab().save(str(tmp_path / "name-cloze-session.png"))
    key(qtbot, body.field, Qt.Key.Key_Return)  # nothing typed: refused, nothing saved
    assert "Type the name" in view.message.text() and view.progress_label.text() == "0 / 3"
    qtbot.keyClicks(body.field, "quentin")
    key(qtbot, body.field, Qt.Key.Key_Return)
    key(qtbot, body.field, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier)  # don't know
    assert view.progress_label.text() == "2 / 3"
    with Project.open(cloze_study) as other:  # another connection sees both answers already
        saved = human_answers(other)
    assert sorted(saved["answer"]) == ["", "quentin"] and saved["dont_know"].sum() == 1
    close(qtbot, window)


@pytest.fixture
def two_books(tmp_path):
    """Two books with name-cloze passages (5 and 3) and a third with none."""
    path = tmp_path / "two-books.palimpsest"
    project = Project.create(path)
    files = [write_gpt4books(tmp_path, stem, [(f"<name>{g}</name>", g, f"{stem} {k}: [MASK] shut the gate at dusk.")
                                             for k, g in enumerate(golds)])
             for stem, golds in (("first", ["Ada", "Ben", "Cy", "Di", "Ed"]), ("second", ["Fay", "Gus", "Hal"]))]
    import_gpt4books(project, files, "gpt")
    ids = {stem: project.db.execute("SELECT id FROM books WHERE external_id = ?", [stem]).fetchone()[0]
           for stem in ("first", "second")}
    project.close()
    return path, ids


def test_the_new_task_dialog_makes_a_name_cloze_task_on_a_worker_as_the_command_does(qtbot, tmp_path, two_books):
    from ui.annotate.task_dialog import NewTaskDialog
    from workbench.annotation.items import list_items
    from workbench.annotation.tasks import get_task
    from workbench.probes.cloze.human import task_passages

    path, ids = two_books
    window = open_window(qtbot, path, tmp_path)
    page = window.show_page("annotate")
    dialog = page.new_task()
    assert isinstance(dialog, NewTaskDialog) and not dialog.cloze_box.isVisible()
    dialog.name.setText("people, pilot")
    dialog.choose_kind("name-cloze")
    assert dialog.cloze_box.isVisible() and dialog.cloze_books.table.rowCount() == 2  # books with passages only
    dialog.create_button.click()
    assert "Tick at least one book" in dialog.message.text()
    dialog.cloze_books.set_checked([ids["first"]])
    dialog.cloze_per_book.setValue(3)
    dialog.per_annotator.setValue(2)
    dialog.overlap.setValue(50)
    dialog.seed.setValue(5)
    assert "3 passages from 1 book" in dialog.cloze_hint.text()
    dialog.grab().save(str(tmp_path / "new-name-cloze-task.png"))
    dialog.create_button.click()
    assert dialog.work.operation is not None  # made on a worker, not on the window's thread
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=30_000)
    task = get_task(page.project, "people, pilot")
    assert (task.kind, task.blinded, task.per_annotator, task.overlap, task.seed) == ("name-cloze", True, 2, 0.5, 5)
    expected = task_passages(page.project, [ids["first"]], per_book=3, seed=5)  # what the command would take
    assert sorted(i.text for i in list_items(page.project, task)) == sorted(p["text"] for p in expected)
    assert page.task_combo.currentText() == "people, pilot"
    close(qtbot, window)
