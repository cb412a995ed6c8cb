"""The Name cloze page's tab of the paper's tables: models side by side per book (and the people who did the name
cloze), top N and years, the most-frequent-name baseline, and the export through the registry."""

from __future__ import annotations

import csv

import pytest

from tests.fixtures.cloze_books import write_gpt4books
from ui.cloze.page import ClozePage
from workbench.annotation.session import open_session
from workbench.corpus.library import update_book
from workbench.probes.cloze.gpt4books import import_gpt4books
from workbench.probes.cloze.human import create_human_task

WAIT_MS = 60_000


@pytest.fixture
def published(project, tmp_path):
    """Three books answered by 'gpt4' and 'chatgpt' (gpt4 right on 4, 2, 1 of 4; chatgpt on 1, 2, 3), and one
    person who answered every passage of the first book right."""
    golds = ["Ann", "Ann", "Bob", "Cid"]
    right = {"gpt4": {"alpha": 4, "beta": 2, "gamma": 1}, "chatgpt": {"alpha": 1, "beta": 2, "gamma": 3}}
    for model, books in right.items():
        folder = tmp_path / model
        folder.mkdir()
        files = [write_gpt4books(folder, book, [(f"<name>{g if k < n else 'Zed'}</name>", g,
                                                 f"{book} {k}: [MASK] lit the lamp in the hall.")
                                                for k, g in enumerate(golds)]) for book, n in books.items()]
        import_gpt4books(project, files, model)
    ids = dict(project.db.execute("SELECT external_id, id FROM books").fetchall())
    for book, year in (("alpha", 1813), ("beta", 1930), ("gamma", 1951)):
        update_book(project, ids[book], title=book.capitalize(), year=year)
    create_human_task(project, "people", [ids["alpha"]])
    session = open_session(project, "people", "ann")
    while not session.finished:
        text = session.current.text
        session.answer(golds[int(text.split(":")[0].split()[1])])
    return project


def rows(table) -> list[list[str]]:
    return [[table.item(r, c).text() for c in range(table.columnCount())] for r in range(table.rowCount())]


def headers(table) -> list[str]:
    return [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]


def test_the_tab_shows_models_side_by_side_with_people_and_the_baseline(qtbot, shown_page, published, messages,
                                                                        tmp_path):
    page = shown_page(ClozePage, published, size=(1300, 850))
    tab = page.models_tab
    page.results.setCurrentWidget(tab)
    qtbot.waitUntil(lambda: tab.table.rowCount() == 3, timeout=WAIT_MS)
    assert set(tab.chosen_models()) == {"gpt4", "chatgpt"}  # the first two models with results, ticked
    tab.sort_by.setCurrentIndex(tab.sort_by.findData("gpt4"))
    tab.humans.setChecked(True)
    tab.reload()
    qtbot.waitUntil(lambda: "humans" in headers(tab.table), timeout=WAIT_MS)
    shown = {row[0]: row for row in rows(tab.table)}
    assert [row[0] for row in rows(tab.table)] == ["Alpha", "Beta", "Gamma"]  # by gpt4: 4, 2, 1 of 4
    head = headers(tab.table)
    assert shown["Alpha"][head.index("gpt4")] == "100%" and shown["Gamma"][head.index("chatgpt")] == "75%"
    people = head.index("humans")
    assert shown["Alpha"][people] == "100%" and shown["Alpha"][people + 1] == "4"
    assert shown["Alpha"][people + 2].startswith("51%")  # Wilson 95% for 4 of 4: 51% - 100%
    assert shown["Beta"][people] == ""  # people never saw it
    assert "rests on 4 passages" in tab.note.text()
    assert tab.baseline.rowCount() == 4 and rows(tab.baseline)[0][0] == "all books"

    tab.top.setValue(1)
    tab.year_from.setValue(1900)
    tab.reload()
    qtbot.waitUntil(lambda: [r[0] for r in rows(tab.table)] == ["Beta"], timeout=WAIT_MS)
    assert "answered none of these books" in tab.note.text()
    page.grab().save(str(tmp_path / "models-tab.png"))

    out = tmp_path / "table.csv"
    tab.export(str(out))
    qtbot.waitUntil(out.exists, timeout=WAIT_MS)
    written = list(csv.DictReader(out.open(encoding="utf-8")))
    assert [r["book"] for r in written] == ["Beta"] and "accuracy: humans" in written[0]


def test_closing_the_project_empties_the_tab(qtbot, shown_page, published):
    page = shown_page(ClozePage, published, size=(1300, 850))
    tab = page.models_tab
    page.results.setCurrentWidget(tab)
    qtbot.waitUntil(lambda: tab.table.rowCount() == 3, timeout=WAIT_MS)
    page.set_project(None)
    assert tab.table.rowCount() == 0 and headers(tab.table)[:3] == ["Book", "Author", "Year"]
    page.set_project(published)
    qtbot.waitUntil(lambda: tab.table.rowCount() == 3, timeout=WAIT_MS)


def test_the_window_closes_with_the_tab_shown(qtbot, published, tmp_path):
    """Closing the window empties the tab's table in place (a table made anew while the window closed crashed)."""
    from PySide6.QtCore import QSettings

    from ui.main_window import MainWindow

    path = published.path
    published.close()
    window = MainWindow(settings=QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    assert window.open_project(path)
    page = window.show_page("cloze")
    tab = page.models_tab
    page.results.setCurrentWidget(tab)
    qtbot.waitUntil(lambda: tab.table.rowCount() == 3, timeout=WAIT_MS)
    shown = tab.table
    window.shutdown()
    assert tab.table is shown and tab.table.rowCount() == 0
