"""The DE-COP tab: every order by default, the warning when the model tested writes its own paraphrases, the
score per book with the passage as the unit, and the decision (suspect against clean books) above the table."""

from __future__ import annotations

import pytest

from tests.leakage.test_decop import recognising, stored_answers, stored_books, stored_paraphrases

pytest.importorskip("PySide6")

from ui.leakage.page import LeakagePage  # noqa: E402


def api_model(project, label: str) -> int:
    from workbench.models.catalog import ModelSpec, add_model

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


def test_new_paraphrases_are_offered_for_the_passages_refused(qtbot, shown_page, project, messages, tmp_path,
                                                              monkeypatch):
    from ui.leakage.decop_tab import _for_the_tab
    from workbench.probes.leakage import decop

    items = stored_books(project, [{"title": "Letters", "author": "M. Tin", "passages": 3}])["Letters"]
    source = tmp_path / "test.csv"  # the same passages as a file the tab can be given
    source.write_text("passage_id,book,passage\n" + "".join(
        f"Letters-{n},Letters,Letters passage {n} tells of a quiet harbour town.\n" for n in range(3)), encoding="utf-8")
    writer = api_model(project, "writer")
    stored_paraphrases(project, writer, items, {(items[1], 0): "", (items[2], 1): "Same.", (items[2], 2): "same."})
    page = shown_page(LeakagePage, project, size=(1300, 800))
    page.tabs.setCurrentWidget(page.decop)
    tab = page.decop
    tab.paraphraser.setCurrentIndex(tab.paraphraser.findText("writer"))
    tab.source.choose_file(source)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # set, or the work is refused before any question
    messages["answer"] = False
    tab.rewrite()
    wait_idle(qtbot, tab)
    (question,) = messages["questions"]
    assert question.startswith("New paraphrases by writer.") and "writer is a paid API: 6 requests" in question, question
    assert project.db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 9  # nothing sent
    assert project.db.execute("SELECT COUNT(*) FROM leakage_passages").fetchone()[0] == 3  # the same passages

    note = _for_the_tab(decop.lacking_message(decop.lacking_paraphrases(project, "writer", items), "writer"))
    assert note.startswith("2 passage(s) lack three usable paraphrases by 'writer' and were not asked")
    assert note.endswith("Press 'New paraphrases' to write new ones, then 'Paraphrase and ask' again.")
    assert "palimpsest" not in note
