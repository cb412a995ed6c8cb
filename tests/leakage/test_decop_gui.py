"""The DE-COP tab: every order by default, the warning when the model tested writes its own paraphrases, the
score per book with the passage as the unit, and the decision (suspect against clean books) above the table."""

from __future__ import annotations

import pytest

from tests.leakage.test_decop import recognising, stored_answers, stored_books, stored_paraphrases

pytest.importorskip("PySide6")

from ui.leakage.page import LeakagePage  # noqa: E402


def api_model(project, label: str) -> int:
    from workbench.models.registry import ModelSpec, add_model

    return add_model(project, ModelSpec(label=label, backend="openai", ref="gpt-4o-mini",
                                        api_key_env="OPENAI_API_KEY")).id


@pytest.fixture
def page(shown_page, project, messages, qtbot):
    books = stored_books(project, [
        {"title": "Middlemarch", "author": "George Eliot", "year": 1871, "passages": 8},
        {"title": "Lanes", "author": "C. Writer", "year": 1990, "passages": 6},
        {"title": "Harbour Lights", "author": "A. Newcomer", "year": 2024, "passages": 6},
        {"title": "Orchard", "author": "B. Writer", "year": 2025, "passages": 6},
    ])
    reader, writer = api_model(project, "api"), api_model(project, "writer")
    items = [i for ids in books.values() for i in ids]
    stored_paraphrases(project, writer, items)
    stored_answers(project, reader, writer, items,
                   recognising(set(books["Middlemarch"][:6]) | set(books["Lanes"][:2]) | {books["Orchard"][0]}, 0.75))
    page = shown_page(LeakagePage, project, size=(1300, 800))
    page.tabs.setCurrentWidget(page.decop)
    return page


def wait_idle(qtbot, tab, timeout=60_000):
    qtbot.waitUntil(lambda: not tab.work.busy and not tab.reading.busy, timeout=timeout)


def test_the_tab_warns_scores_by_passage_and_decides_against_clean_books(qtbot, page, messages, tmp_path):
    tab = page.decop
    assert tab.orders.currentData() == 24 and tab.cutoff.text() == "none"
    tab.model.setCurrentIndex(tab.model.findText("api"))
    tab.paraphraser.setCurrentIndex(tab.paraphraser.findText("api"))
    assert tab.warning.isVisible() and "written by the model under test ('api')" in tab.warning.text()
    tab.paraphraser.setCurrentIndex(tab.paraphraser.findText("writer"))
    assert not tab.warning.isVisible()

    tab.refresh()
    qtbot.waitUntil(lambda: tab.table.rowCount() == 4, timeout=60_000)
    wait_idle(qtbot, tab)
    assert "No clean books, so no decision" in tab.decision.text()
    books = tab.table.column_texts("Book")
    scores = dict(zip(books, tab.table.column_texts("Score")))
    assert scores["Middlemarch"] == "56%" and scores["Harbour Lights"] == "0%"  # 6 of 8 passages in 3/4 of orders
    assert set(tab.table.column_texts("Orders")) == {"24"}

    tab.cutoff.setValue(2023)
    qtbot.waitUntil(lambda: "ROC AUC" in tab.decision.text(), timeout=60_000)
    wait_idle(qtbot, tab)
    groups = dict(zip(tab.table.column_texts("Book"), tab.table.column_texts("Suspect or clean")))
    assert groups["Orchard"] == "clean (published 2025, after the cutoff 2023)" and groups["Lanes"] == "suspect"
    assert "2 suspect" in tab.decision.text() and "2 clean" in tab.decision.text()
    assert "api: 2023 (given)" in tab.decision.text() and "set 'Training cutoff' above" in tab.decision.text()
    page.grab().save(str(tmp_path / "decop-tab.png"))
    assert not messages["errors"]
