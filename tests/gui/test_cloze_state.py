"""The Name cloze pages bind to state (issue 21.6): a widget changes the page's choices, and the table on screen is
the core query's view for exactly those choices."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.fixtures.cloze_texts import gpt4books_rows
from ui.cloze.charts_page import ChartsPage
from ui.cloze.page import ClozePage
from workbench.corpus.library import update_book
from workbench.probes.cloze.gpt4books import import_gpt4books
from workbench.probes.cloze.views import (
    AccuracyChoices,
    ModelsTableChoices,
    PassagesChoices,
    accuracy_view,
    models_table_view,
    passages_view,
    runs_view,
)

WAIT_MS = 60_000


@pytest.fixture
def answered(project, tmp_path):
    """Three books of ten passages: 'alpha' names i of them right in book i, 'beta' 4 - i."""
    for model, right in (("alpha", lambda i: i), ("beta", lambda i: 4 - i)):
        folder = tmp_path / model
        folder.mkdir()
        paths = []
        for i in (1, 2, 3):
            path = folder / f"b{i}.tsv"
            path.write_text(gpt4books_rows(i, right(i)), encoding="utf-8")
            paths.append(path)
        import_gpt4books(project, paths, model)
    ids = dict(project.db.execute("SELECT external_id, id FROM books").fetchall())
    for i in (1, 2, 3):
        update_book(project, ids[f"b{i}"], title=f"Book {i}", year=1900 + i)
    return project, {i: ids[f"b{i}"] for i in (1, 2, 3)}


def shown(table) -> pd.DataFrame:
    return table.frame.reset_index(drop=True)


def test_the_accuracy_tab_shows_the_view_of_the_pages_choices(qtbot, shown_page, answered, messages):
    project, _ = answered
    page = shown_page(ClozePage, project, size=(1300, 850))
    accuracy = page.results.accuracy
    qtbot.waitUntil(lambda: accuracy.rowCount() == 6, timeout=WAIT_MS)
    assert page.choices == AccuracyChoices()
    pd.testing.assert_frame_equal(shown(accuracy), accuracy_view(project, page.choices))
    pd.testing.assert_frame_equal(shown(page.results.runs), runs_view(project, page.runs_choices))

    page.results.model_filter.setCurrentIndex(page.results.model_filter.findData("beta"))
    assert page.choices.models == ("beta",)
    qtbot.waitUntil(lambda: accuracy.rowCount() == 3, timeout=WAIT_MS)
    assert set(accuracy.column_texts("Model")) == {"beta"}
    pd.testing.assert_frame_equal(shown(accuracy), accuracy_view(project, page.choices))

    page.results.flagged.setChecked(True)
    assert page.choices == AccuracyChoices(models=("beta",), exclude_flagged=True)
    qtbot.waitUntil(lambda: not page.reading.busy, timeout=WAIT_MS)
    pd.testing.assert_frame_equal(shown(accuracy), accuracy_view(project, page.choices))


def test_the_models_tab_shows_the_view_of_its_choices(qtbot, shown_page, answered, messages):
    project, _ = answered
    page = shown_page(ClozePage, project, size=(1300, 850))
    tab = page.models_tab
    page.results.setCurrentWidget(tab)
    qtbot.waitUntil(lambda: tab.table.rowCount() == 3, timeout=WAIT_MS)
    assert tab.choices.models == ("alpha", "beta")
    tab.sort_by.setCurrentIndex(tab.sort_by.findData("beta"))
    tab.top.setValue(2)
    assert tab.choices == ModelsTableChoices(models=("alpha", "beta"), sort_by="beta", top=2)
    tab.reload()
    qtbot.waitUntil(lambda: tab.table.rowCount() == 2, timeout=WAIT_MS)
    view = models_table_view(project, tab.choices)
    pd.testing.assert_frame_equal(shown(tab.table), view.table)
    pd.testing.assert_frame_equal(shown(tab.baseline), view.baseline)
    assert tab.table.column_texts("Book") == ["Book 1", "Book 2"]  # beta knows book 1 best (3 of 10)
    assert [c.title for c in tab.table.columns] == [c.title for c in view.columns]


def test_the_passages_dialog_shows_the_view_of_its_choices(qtbot, shown_page, answered, messages):
    project, ids = answered
    page = shown_page(ChartsPage, project)
    page.open_passages({"book_id": ids[2], "book": "Book 2", "models": ["alpha"]})
    qtbot.waitUntil(lambda: page.passages_dialog is not None, timeout=WAIT_MS)
    dialog = page.passages_dialog
    assert dialog.choices == PassagesChoices(book_id=ids[2], models=("alpha",))
    pd.testing.assert_frame_equal(shown(dialog.table), passages_view(project, dialog.choices))
    assert dialog.table.rowCount() == 10

    dialog.filter.setCurrentIndex(dialog.filter.findData("wrong"))
    assert dialog.choices.show == "wrong"
    pd.testing.assert_frame_equal(shown(dialog.table), passages_view(project, dialog.choices))
    assert dialog.table.rowCount() == 8 and set(dialog.table.column_texts("Correct")) == {"wrong"}
    dialog.close()
