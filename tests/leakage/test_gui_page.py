"""The Leakage page: corpora built and chosen, each analysis run with progress and results, click-through."""

from __future__ import annotations

import pytest

from tests.fixtures.leakage import CORPUS, add_cloze_answers, add_cloze_book

pytest.importorskip("PySide6")

from ui.leakage.page import LeakagePage  # noqa: E402
from ui.leakage.passage_dialog import marked_html  # noqa: E402


@pytest.fixture
def page(shown_page, project, messages):
    return shown_page(LeakagePage, project, size=(1300, 800))


def wait_idle(qtbot, tab, timeout=60_000):
    qtbot.waitUntil(lambda: not tab.work.busy and not tab.reading.busy, timeout=timeout)


def test_build_a_corpus_and_find_overlaps_then_open_a_passage(qtbot, page, project, corpus_dir, messages):
    add_cloze_book(project, "Harbour", CORPUS[0].replace("Nobody", "Nobody but Ada"), ["Ada"], year=1890)
    add_cloze_book(project, "Elsewhere", "Cai painted seven purple volcanoes for nobody at all.", ["Cai"])
    tab = page.corpora
    tab.name.setText("mini")
    tab.add_paths([str(corpus_dir)])
    tab.build()
    wait_idle(qtbot, tab)
    assert "Indexed 'mini': 4 documents" in tab.summary.text()
    assert tab.table.column_texts("Corpus") == ["mini"]

    page.tabs.setCurrentWidget(page.overlap)
    overlap = page.overlap
    assert overlap.corpus.currentText() == "mini"
    overlap.run()
    qtbot.waitUntil(lambda: overlap.table.rowCount() == 2, timeout=60_000)
    wait_idle(qtbot, overlap)
    assert "2 of 2 done" in overlap.summary.text()
    assert sorted(overlap.table.column_texts("Book")) == ["Elsewhere", "Harbour"]
    row = overlap.table.column_texts("Book").index("Harbour")
    assert overlap.table.column_texts("Longest overlap")[row] == "12"  # "on deck spoke ... headland."
    overlap.open_passage(row)
    qtbot.waitUntil(lambda: overlap.dialog is not None, timeout=10_000)
    dialog = overlap.dialog
    start, end = dialog.detail["span"]
    assert dialog.detail["text"][start:end] == dialog.detail["longest_text"] == \
        "on deck spoke until the lighthouse had fallen behind the headland."
    assert "#f5b041" in dialog.text.toHtml() and "Longest overlap:" in dialog.facts.text()
    assert not messages["errors"]


def test_marked_html_escapes_the_text():
    assert marked_html("a <b> c", (2, 5)) == ('<p style="white-space: pre-wrap; line-height: 140%;">a '
                                              '<span style="background-color: #f5b041;">&lt;b&gt;</span> c</p>')


def test_cancel_stops_an_index_build(qtbot, page, tmp_path, messages):
    folder = tmp_path / "many"
    folder.mkdir()
    for n in range(200):
        (folder / f"{n:03d}.txt").write_text(CORPUS[n % 4] * 20 + "\n", encoding="utf-8")
    tab = page.corpora
    tab.name.setText("many")
    tab.add_paths([str(folder)])
    tab.build()
    tab.progress.cancel()
    wait_idle(qtbot, tab)
    assert tab.table.rowCount() == 0
    assert "Stopped" in tab.summary.text() or tab.summary.isHidden()
    assert not messages["errors"]


def test_book_frequency_and_membership_tabs(qtbot, page, project, corpus_dir, tiny_causal_dir, messages):
    from workbench.corpus.library import set_tags
    from workbench.models.registry import ModelSpec, add_model
    from workbench.probes.leakage.corpora import build_corpus

    build_corpus(project, "mini", [corpus_dir])
    add_model(project, ModelSpec(label="tiny", backend="hf", ref=str(tiny_causal_dir), params={"device": "cpu"}))
    books = [add_cloze_book(project, f"Book {n}", text, [name], year=year)
             for n, (text, name, year) in enumerate([(CORPUS[0].replace("Nobody", "Ada"), "Ada", 1890),
                                                     (CORPUS[1].replace("Then the", "Then Bea saw the"), "Bea", 1900),
                                                     ("Cai painted seven purple volcanoes.", "Cai", 1990)])]
    add_cloze_answers(project, "gpt-x", {books[0][1][0]: "<name>Ada</name>", books[1][1][0]: "<name>x</name>",
                                         books[2][1][0]: "<name>x</name>"})
    for (book_id, _), member in zip(books, ["yes", "yes", "no"]):
        set_tags(project, book_id, {"member": member})

    page.tabs.setCurrentWidget(page.frequency)
    tab = page.frequency
    tab.per_book.setValue(1)
    tab.gram.setValue(3)
    tab.run()
    qtbot.waitUntil(lambda: tab.table.rowCount() == 3, timeout=60_000)
    wait_idle(qtbot, tab)
    assert tab.table.column_texts("Group").count("before 1928") == 2
    assert "rho =" in tab.rho.text()

    page.tabs.setCurrentWidget(page.membership)
    tab = page.membership
    assert tab.model.currentText() == "tiny"
    tab.run()
    qtbot.waitUntil(lambda: tab.table.rowCount() == 3, timeout=120_000)
    wait_idle(qtbot, tab)
    assert sorted(tab.table.column_texts("Member tag")) == ["no", "yes", "yes"]
    assert "ROC AUC over 2 member and 1 non-member books" in tab.auc.text()
    assert not messages["errors"]


def test_surprisal_tab_reads_a_text_and_saves_the_csv(qtbot, page, project, tiny_causal_dir, tmp_path, messages):
    import csv

    from workbench.models.registry import ModelSpec, add_model

    add_model(project, ModelSpec(label="tiny", backend="hf", ref=str(tiny_causal_dir), params={"device": "cpu"}))
    text = tmp_path / "stimulus.txt"
    text.write_text("The gulls followed the ferry out.", encoding="utf-8")
    page.tabs.setCurrentWidget(page.surprisal)
    tab = page.surprisal
    tab.choose_file(text)
    tab.run()
    qtbot.waitUntil(lambda: tab.table.rowCount() == 6, timeout=60_000)
    wait_idle(qtbot, tab)
    assert tab.table.column_texts("Word") == ["The", "gulls", "followed", "the", "ferry", "out."]
    tab.save_csv(tmp_path / "out.csv")
    rows = list(csv.DictReader((tmp_path / "out.csv").open(encoding="utf-8")))
    assert list(rows[0])[:4] == ["word", "position", "surprisal", "tokens"] and len(rows) == 6
    assert not messages["errors"]


def test_without_a_corpus_the_analysis_says_what_to_do(qtbot, page, messages):
    page.tabs.setCurrentWidget(page.overlap)
    page.overlap.run()
    assert messages["infos"] == ["Build a reference corpus (Corpora tab) or add a remote one first."]
