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
    assert "2 of 2 answered" in overlap.summary.text()
    assert sorted(overlap.table.column_texts("Book")) == ["Elsewhere", "Harbour"]
    row = overlap.table.column_texts("Book").index("Harbour")
    assert overlap.table.column_texts("Longest overlap")[row] == "12"  # "on deck spoke ... headland."
    overlap.open_passage(row)
    qtbot.waitUntil(lambda: overlap.dialog is not None, timeout=10_000)
    dialog = overlap.dialog
    start, end = dialog.detail["span"]
    assert dialog.detail["text"][start:end] == dialog.detail["longest_text"] == \
        "on deck spoke until the lighthouse had fallen behind the headland."
    assert "#f5b041" in dialog.text.toHtml() and "A run of 12 of its 15 tokens (80%, marked)" in dialog.facts.text()
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


def test_book_frequency_and_membership_tabs(qtbot, page, project, corpus_dir, tiny_causal_dir, messages, tmp_path):
    tab_png = tmp_path / "membership-tab.png"
    from workbench.corpus.library import set_tags
    from workbench.models.catalog import ModelSpec, add_model
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
    assert "rho =" in tab.note.text()
    plot = tab.charts.plots["leakage-frequency"]
    wait_drawn(qtbot, plot, "leakage-frequency")
    assert sorted(m.target["book"] for m in plot.marks) == ["Book 0", "Book 1", "Book 2"]
    assert "Spearman's ρ" in plot.caption.text()
    click(plot, "Book 1")
    assert tab.table.selected_keys() == [books[1][0]]
    tab.gram.setValue(2)  # no count with 2-word n-grams yet: nothing shown, never the 3-word counts
    qtbot.waitUntil(lambda: tab.table.rowCount() == 0, timeout=60_000)
    tab.gram.setValue(3)
    qtbot.waitUntil(lambda: tab.table.rowCount() == 3, timeout=60_000)
    wait_idle(qtbot, tab)

    page.tabs.setCurrentWidget(page.membership)
    tab = page.membership
    assert tab.model.currentText() == "tiny"
    tab.run()
    qtbot.waitUntil(lambda: tab.table.rowCount() == 3, timeout=120_000)
    wait_idle(qtbot, tab)
    assert sorted(tab.table.column_texts("Member tag")) == ["no", "yes", "yes"]
    assert "ROC AUC over 2 member and 1 non-member books" in tab.note.text()
    plot = tab.charts.plots["membership-scores"]
    wait_drawn(qtbot, plot, "membership-scores", timeout=120_000)
    assert sorted(m.target["book"] for m in plot.marks) == ["Book 0", "Book 1", "Book 2"]
    assert plot.caption.text().startswith("ROC AUC ")
    roc = tab.charts.plots["membership-roc"]
    wait_drawn(qtbot, roc, "membership-roc", timeout=120_000)
    units = [ax.get_title() for ax in roc.figure.axes]
    assert units[0].startswith("by book (book means): ") and units[1].startswith("by passage: ")
    assert all(any(t.startswith("perplexity: AUC") for t in legend_texts(ax)) for ax in roc.figure.axes)
    assert "over their 2 and 1 passages (interval: books redrawn)" in tab.note.text()
    score = tab.charts.controls.widget("score")
    score.setCurrentIndex(score.findData("min_k"))
    qtbot.waitUntil(lambda: not tab.charts.drawing.busy, timeout=120_000)
    assert plot.figure.axes[0].get_title().startswith("Min-K%\nAUC")
    assert all(legend_texts(ax)[0].startswith("Min-K%: AUC") for ax in roc.figure.axes)
    click(plot, "Book 2")
    assert tab.table.selected_keys() == [books[2][0]]
    tab.grab().save(str(tab_png))
    set_tags(project, books[2][0], {"member": "yes"})  # no non-member left: a note, not blank cells
    tab.refresh()
    wait_idle(qtbot, tab)
    qtbot.waitUntil(lambda: roc.kind == "message", timeout=60_000)
    assert tab.note.text().startswith("No ROC AUC: all 3 tagged books tiny read are members;")
    assert "member=no" in roc.message.text()
    assert not messages["errors"]


def test_surprisal_tab_reads_a_text_and_saves_the_csv(qtbot, page, project, tiny_causal_dir, tmp_path, messages):
    import csv

    from workbench.models.catalog import ModelSpec, add_model

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


def test_decop_with_a_paid_api_says_what_it_costs_first(qtbot, page, project, messages, monkeypatch):
    """One question in the one wording of planned work, the model asked about once though it both paraphrases
    and answers; No sends nothing."""
    from workbench.models.catalog import ModelSpec, add_model

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # set, or the work is refused before any question

    add_cloze_book(project, "Harbour", CORPUS[0].replace("Nobody", "Ada"), ["Ada"])
    add_model(project, ModelSpec(label="api", backend="openai", ref="gpt-4o-mini", api_key_env="OPENAI_API_KEY"))
    page.tabs.setCurrentWidget(page.decop)
    tab = page.decop
    assert tab.model.currentText() == "api" and tab.paraphraser.currentText() == "api"
    messages["answer"] = False
    tab.run()
    wait_idle(qtbot, tab)
    (question,) = messages["questions"]
    assert question.startswith("DE-COP on api (paraphrases by api).") and "api is a paid API: " in question, question
    assert question.count("is a paid API") == 1 and "requests" in question and "not paid for again" in question
    assert "Nothing was started." in tab.summary.text()
    assert project.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
    assert not messages["errors"]


# ---------------------------------------------------------------------------------------------- charts
def wait_drawn(qtbot, plot, kind, timeout=60_000):
    qtbot.waitUntil(lambda: plot.kind == kind and not plot.busy, timeout=timeout)


def legend_texts(ax) -> list[str]:
    legend = ax.get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend is not None else []


def click(plot, book: str):
    mark = next(m for m in plot.marks if m.target.get("book") == book)
    assert book in plot.hover_at(plot.pos_of(mark))
    return plot.click_at(plot.pos_of(mark))


def test_overlap_charts_are_drawn_and_a_click_opens_the_passage_marked(qtbot, page, mini_corpus, tmp_path, messages):
    from workbench.probes.leakage import overlap

    add_cloze_book(mini_corpus, "Harbour", CORPUS[0].replace("Nobody", "Nobody but Ada"), ["Ada"], year=1890)
    add_cloze_book(mini_corpus, "Elsewhere", "Cai painted seven purple volcanoes for nobody at all.", ["Cai"])
    overlap.run_overlap(mini_corpus, "mini")
    page.tabs.setCurrentWidget(page.overlap)
    tab = page.overlap
    figure_1, figure_2 = (tab.charts.plots[name] for name in ("leakage-overlap", "leakage-overlap-frequency"))
    wait_drawn(qtbot, figure_1, "leakage-overlap")
    wait_drawn(qtbot, figure_2, "leakage-overlap-frequency")
    assert sorted(m.target["book"] for m in figure_1.marks) == ["Elsewhere", "Harbour"]
    (passages,) = [screen.marks for screen in figure_1.sets]
    harbour = next(i for i in range(len(passages)) if passages.target(i)["book"] == "Harbour")
    assert passages.y[harbour] == 12 and passages.x[harbour] > 12  # longest overlap against passage length
    # the 12-token sentence found once is no coincidence once its own occurrence is out of the counts
    legend = legend_texts(figure_1.figure.axes[0])
    assert "y = x (the whole passage)" in legend and "could be chance (1)" in legend
    assert "chance of occurring < 0.05 (1)" in legend
    assert "Harbour" in {m.target["book"] for m in figure_2.marks}

    click(figure_2, "Harbour")
    qtbot.waitUntil(lambda: tab.dialog is not None, timeout=10_000)
    dialog = tab.dialog
    start, end = dialog.detail["span"]
    assert dialog.detail["text"][start:end] == "on deck spoke until the lighthouse had fallen behind the headland."
    assert dialog.windowTitle().startswith("Harbour, passage ") and "Harbour" in dialog.heading.text()
    assert "is found in the corpus once." in dialog.facts.text() and "1 times" not in dialog.facts.text()

    tab.charts.export_figure("leakage-overlap", tmp_path / "figure-1.svg")
    qtbot.waitUntil(lambda: tab.summary.isVisible() and "Saved" in tab.summary.text(), timeout=60_000)
    assert (tmp_path / "figure-1.svg").read_text(encoding="utf-8").lstrip().startswith("<?xml")
    assert (tmp_path / "figure-1.csv").exists()
    assert not messages["errors"]


def test_the_chance_can_come_from_a_background_corpus_and_the_tab_names_it(qtbot, page, mini_corpus, tmp_path,
                                                                            messages):
    from workbench.probes.leakage.corpora import build_corpus

    other = tmp_path / "other"
    other.mkdir()
    (other / "a.txt").write_text("The gulls followed the ferry over the water, and the harbour slept.\n")
    build_corpus(mini_corpus, "other", [other])
    add_cloze_book(mini_corpus, "Harbour", CORPUS[0].replace("Nobody", "Nobody but Ada"), ["Ada"], year=1890)
    page.tabs.setCurrentWidget(page.overlap)
    tab = page.overlap
    tab.corpus.setCurrentIndex(tab.corpus.findText("mini"))
    tab.refresh()
    # the corpus searched is never offered as its own background
    assert [tab.background.itemText(i) for i in range(tab.background.count())] == [
        "the same corpus, less the overlap's own copies", "other"]
    tab.run()
    wait_idle(qtbot, tab)
    qtbot.waitUntil(lambda: "Chance: 5-gram on the same corpus" in tab.note.text(), timeout=60_000)
    assert "an independent background corpus avoids this" in tab.note.text()
    tab.background.setCurrentIndex(1)
    tab.refresh()
    wait_idle(qtbot, tab)
    assert "has not been asked about this overlap" in tab.note.text()  # not counted there yet
    tab.run()
    wait_idle(qtbot, tab)
    assert "Counts of the overlaps in other" in tab.summary.text()
    qtbot.waitUntil(lambda: "Chance: 5-gram on the background corpus 'other'" in tab.note.text(), timeout=60_000)
    assert tab.table.column_texts("Chance")[0] != ""
    tab.open_passage(0)
    qtbot.waitUntil(lambda: tab.dialog is not None, timeout=10_000)
    assert "Chance model: 5-gram on the background corpus 'other'" in tab.dialog.facts.text()
    tab.grab().save(str(tmp_path / "overlap-tab.png"))
    assert not messages["errors"]


def test_the_longest_shared_text_is_shown_on_one_line(qtbot, page, mini_corpus, messages):
    from workbench.probes.leakage import overlap

    add_cloze_book(mini_corpus, "Ferry", "The ferry left the harbour at dawn, and the gulls\nfollowed it far out "
                   "over the grey water with Ada.", ["Ada"])
    overlap.run_overlap(mini_corpus, "mini")
    page.tabs.setCurrentWidget(page.overlap)
    tab = page.overlap
    qtbot.waitUntil(lambda: tab.table.rowCount() == 1, timeout=60_000)
    (shown,) = tab.table.column_texts("Longest shared sequence")
    assert shown == "The ferry left the harbour at dawn, and the gulls followed it far out over the grey water"


def test_passage_facts_are_plain_words():
    from ui.leakage.passage_dialog import overlap_facts

    detail = {"longest": 3, "tokens": 56, "covered_share": 3 / 56, "frequency": 7, "chance_p": 1.0,
              "unlikely_by_chance": False}
    assert overlap_facts(detail) == (
        "A run of 3 of its 56 tokens (5%, marked) is found in the corpus 7 times. A run this probable would turn up "
        "by accident in a corpus of this size with a chance of almost 1 (0.05 or more): it could be a coincidence, "
        "such as a common phrase.")
    once = overlap_facts({**detail, "longest": 56, "covered_share": 1.0, "frequency": 1, "chance_p": 4.6e-6,
                          "unlikely_by_chance": True})
    assert once.startswith("The whole passage (100%, marked) is found in the corpus once. ")
    assert "only 4.6e-06 (below 0.05)" in once
    assert "twice" in overlap_facts({**detail, "frequency": 2})
    assert overlap_facts({**detail, "longest": 0}) == "None of the passage's 56 tokens occurs in the corpus."


def test_without_models_or_corpora_each_tab_says_what_to_do(qtbot, page, project, corpus_dir, messages):
    for tab in (page.overlap, page.frequency, page.membership):
        page.tabs.setCurrentWidget(tab)
        plots = list(tab.charts.plots.values())
        assert all(p.kind == "message" and "Build a reference corpus" in p.message.text() for p in plots) \
            or tab is page.membership
        assert not any(button.isEnabled() for button in tab.charts.export_buttons.values())
    assert page.frequency.model.currentText() == "(no name-cloze results yet)"
    assert page.membership.model.currentText() == "(add a local model on the Models page)"
    assert "Add a local model on the Models page" in page.membership.charts.plots["membership-scores"].message.text()
    page.tabs.setCurrentWidget(page.surprisal)
    assert page.surprisal.model.currentText() == "(add a local model on the Models page)"
    page.tabs.setCurrentWidget(page.decop)
    assert page.decop.model.currentText() == "(add a model on the Models page)"

    from workbench.probes.leakage.corpora import build_corpus

    build_corpus(project, "mini", [corpus_dir])
    page.tabs.setCurrentWidget(page.frequency)
    assert "No model has name-cloze results yet" in page.frequency.charts.plots["leakage-frequency"].message.text()
    page.membership.run()
    assert messages["infos"][-1].startswith("Add a local model (Models page")


def test_every_tab_fits_a_laptop_window(qtbot, tmp_path, corpus_dir):
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QScrollArea

    from ui.main_window import MainWindow
    from workbench.probes.leakage.corpora import build_corpus
    from workbench.project import Project

    path = tmp_path / "fit.palimpsest"
    with Project.create(path) as project:
        build_corpus(project, "mini", [corpus_dir])
    window = MainWindow(settings=QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    try:
        assert window.open_project(path)
        page = window.show_page("leakage")
        window.resize(1280, 800)
        window.show()
        area = page.parentWidget()
        while not isinstance(area, QScrollArea):
            area = area.parentWidget()
        for index in range(page.tabs.count()):
            page.tabs.setCurrentIndex(index)
            qtbot.waitUntil(lambda: area.viewport().width() > 0)
            qtbot.wait(50)
            title = page.tabs.tabText(index)
            assert area.horizontalScrollBar().maximum() == 0, f"the {title} tab is wider than a laptop window"
            assert area.verticalScrollBar().maximum() == 0, f"the {title} tab is taller than a laptop window"
    finally:
        window.shutdown()


def test_the_corpora_tab_says_what_of_a_file_was_left_out_and_never_shows_a_secret(qtbot, page, project, tmp_path,
                                                                                 messages, infini_server):
    import json

    fake, url = infini_server
    folder = tmp_path / "lines"
    folder.mkdir()
    lines = [json.dumps({"text": CORPUS[0]}), json.dumps({"text": CORPUS[1]}), "{broken", json.dumps({"text": CORPUS[2]})]
    (folder / "part.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    tab = page.corpora
    tab.name.setText("lines")
    tab.add_paths([str(folder)])
    tab.build()
    wait_idle(qtbot, tab)
    assert "Indexed 'lines': 3 documents" in tab.summary.text()
    assert "Partly indexed" in tab.summary.text() and "Line 3 of part.jsonl is not" in tab.summary.text()
    tab.remote_name.setText("pile")
    tab.url.setText(url.replace("http://", "http://scholar:hunter2-secret@"))
    tab.add_remote()
    wait_idle(qtbot, tab)
    assert len(messages["errors"]) == 1 and "holds a user name, password or key" in messages["errors"][0]
    assert "hunter2" not in messages["errors"][0] and "hunter2" not in tab.summary.text()
    assert tab.table.column_texts("Corpus") == ["lines"]


def test_a_tab_shown_again_reads_the_project_again_only_when_something_was_written(qtbot, page, mini_corpus,
                                                                                    messages):
    from workbench.probes.leakage import overlap

    add_cloze_book(mini_corpus, "Harbour", CORPUS[0].replace("Nobody", "Nobody but Ada"), ["Ada"], year=1890)
    add_cloze_book(mini_corpus, "Elsewhere", "Cai painted seven purple volcanoes for nobody at all.", ["Cai"])
    overlap.run_overlap(mini_corpus, "mini")
    tab = page.overlap
    reads = []
    tab.reading.started.connect(reads.append)
    page.tabs.setCurrentWidget(tab)
    qtbot.waitUntil(lambda: tab.table.rowCount() == 2, timeout=60_000)
    wait_idle(qtbot, tab)
    assert len(reads) == 1
    for _ in range(2):  # another tab and back, the page shown again: nothing was written, nothing is read
        page.tabs.setCurrentWidget(page.corpora)
        page.tabs.setCurrentWidget(tab)
        page.on_shown()
    assert len(reads) == 1
    add_cloze_book(mini_corpus, "Third", "Ada walked on deck spoke until the lighthouse had fallen behind.", ["Ada"])
    overlap.run_overlap(mini_corpus, "mini")  # written meanwhile (here on the window's own connection)
    page.on_shown()
    qtbot.waitUntil(lambda: tab.table.rowCount() == 3, timeout=60_000)
    assert len(reads) == 2
    assert not messages["errors"]
