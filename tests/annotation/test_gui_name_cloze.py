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
