"""The Leakage page's results views as state (issue 21.6): each tab's choices are a Qt-free ``...Choices`` of the
core, changed by its widgets; the table it shows is the core's query for that state, and the command that prints
the same table builds the same choices and prints the same frame."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from tests.fixtures.leakage import CORPUS, add_cloze_answers, add_cloze_book
from workbench.cli import main
from workbench.probes.leakage import frequency, overlap
from workbench.probes.leakage.views import FrequencyChoices, OverlapChoices, frequency_table, overlap_table

KEYS = ["book_source", "book_external_id"]  # what the CLI's CSV adds beside book_id


@pytest.fixture
def counted(mini_corpus, tmp_path):
    """Three books compared with 'mini' (chance from the same corpus and from 'other'), their 3-word n-grams
    counted, and name-cloze answers of 'gpt-x' for each."""
    from workbench.probes.leakage.corpora import build_corpus

    made = [add_cloze_book(mini_corpus, "Harbour", CORPUS[0].replace("Nobody", "Nobody but Ada"), ["Ada"], year=1890),
            add_cloze_book(mini_corpus, "Orchard", CORPUS[1].replace("Then the rain", "Then Bea saw the rain"),
                           ["Bea"], year=1930),
            add_cloze_book(mini_corpus, "Elsewhere", "Cai painted seven purple volcanoes for nobody.", ["Cai"],
                           year=1910)]
    add_cloze_answers(mini_corpus, "gpt-x", {made[0][1][0]: "<name>Ada</name>", made[1][1][0]: "<name>x</name>",
                                             made[2][1][0]: "<name>Cai</name>"})
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.txt").write_text("The gulls followed the ferry over the water, and the harbour slept.\n")
    build_corpus(mini_corpus, "other", [other])
    overlap.run_overlap(mini_corpus, "mini")
    ids = [int(i) for i in overlap.overlap_frame(mini_corpus, "mini")["item_id"]]
    overlap.run_background(mini_corpus, "mini", "other", passage_ids=ids)
    frequency.run_frequency(mini_corpus, "mini", per_book=1, gram=3)
    return mini_corpus, {title: book_id for (book_id, _), title in zip(made, ["Harbour", "Orchard", "Elsewhere"])}


def _same(shown: pd.DataFrame, query: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(shown.reset_index(drop=True), query.reset_index(drop=True))
    assert shown.attrs.get("note") == query.attrs.get("note")


def _printed(out: str) -> pd.DataFrame:
    """The CLI's CSV less the book keys it adds (it sets them, with book_id, beside the book's title)."""
    return pd.read_csv(io.StringIO(out)).drop(columns=KEYS)


def _as_printed(frame: pd.DataFrame) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(frame.to_csv(index=False)))


# ---------------------------------------------------------------------------------------------- core
def test_the_overlap_query_keeps_the_books_chosen_and_the_chance_chosen(counted):
    project, books = counted
    every = overlap_table(project, OverlapChoices(corpus="mini"))
    assert sorted(every["book"]) == ["Elsewhere", "Harbour", "Orchard"]
    harbour = overlap_table(project, OverlapChoices(corpus="mini", book_ids=(books["Harbour"],)))
    assert harbour["book"].tolist() == ["Harbour"] and harbour["book_id"].tolist() == [books["Harbour"]]
    pd.testing.assert_frame_equal(harbour, every[every["book"] == "Harbour"].reset_index(drop=True))
    assert harbour.attrs["note"].startswith("Chance: 5-gram on the same corpus")
    background = overlap_table(project, OverlapChoices(corpus="mini", background="other",
                                                        book_ids=(books["Harbour"],)))
    assert background.attrs["note"].startswith("Chance: 5-gram on the background corpus 'other'")
    assert overlap_table(project, OverlapChoices()).empty  # no corpus chosen: nothing, with the columns


def test_the_frequency_query_keeps_the_books_model_and_settings_chosen(counted):
    project, books = counted
    every = frequency_table(project, FrequencyChoices(corpus="mini", model="gpt-x", per_book=1, gram=3))
    assert sorted(every["book"]) == ["Elsewhere", "Harbour", "Orchard"]
    assert every.attrs["rho"] is not None and every.attrs["note"].startswith("Frequency against cloze accuracy")
    two = (books["Harbour"], books["Orchard"])
    chosen = frequency_table(project, FrequencyChoices(corpus="mini", model="gpt-x", per_book=1, gram=3, book_ids=two))
    assert sorted(chosen["book"]) == ["Harbour", "Orchard"]
    assert chosen.set_index("book_id")["accuracy"].to_dict() == {books["Harbour"]: 1.0, books["Orchard"]: 0.0}
    assert chosen.attrs["note"] == "Spearman's rho needs name-cloze accuracy for at least three books."
    # counts made with other settings are never shown for these
    assert frequency_table(project, FrequencyChoices(corpus="mini", model="gpt-x", per_book=1, gram=2)).empty


# ---------------------------------------------------------------------------------------------- CLI
def test_the_overlap_command_prints_the_query_for_its_choices(counted, capsys):
    project, books = counted
    path = str(project.path)
    capsys.readouterr()
    assert main(["leakage", "overlap", path, "--corpus", "mini", "--background", "other", "--book",
                 str(books["Orchard"]), "--format", "csv"]) == 0
    printed = _printed(capsys.readouterr().out)
    ids = tuple(int(i) for i in printed["item_id"])
    query = overlap_table(project, OverlapChoices(corpus="mini", background="other", passage_ids=ids,
                                                  book_ids=(books["Orchard"],)))
    assert printed["book"].tolist() == ["Orchard"]
    pd.testing.assert_frame_equal(printed[list(query.columns)], _as_printed(query), check_dtype=False)


def test_the_frequency_command_prints_the_query_for_its_choices(counted, capsys):
    project, books = counted
    path = str(project.path)
    capsys.readouterr()
    two = [books["Harbour"], books["Elsewhere"]]
    assert main(["leakage", "frequency", path, "--corpus", "mini", "--per-book", "1", "--gram", "3", "--model", "gpt-x",
                 "--book", str(two[0]), "--book", str(two[1]), "--format", "csv"]) == 0
    printed = _printed(capsys.readouterr().out)
    query = frequency_table(project, FrequencyChoices(corpus="mini", model="gpt-x", per_book=1, gram=3,
                                                      book_ids=tuple(two)))
    assert sorted(printed["book"]) == ["Elsewhere", "Harbour"]
    pd.testing.assert_frame_equal(printed[list(query.columns)], _as_printed(query), check_dtype=False)


def test_the_frequency_command_says_the_note_the_tab_shows_on_standard_error(counted, capsys):
    project, _ = counted
    capsys.readouterr()
    assert main(["leakage", "frequency", str(project.path), "--corpus", "mini", "--per-book", "1", "--gram", "3",
                 "--model", "gpt-x", "--format", "csv"]) == 0
    note = frequency_table(project, FrequencyChoices(corpus="mini", model="gpt-x", per_book=1, gram=3)).attrs["note"]
    assert note and note in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- the page
pytest.importorskip("PySide6")


@pytest.fixture
def page(shown_page, counted, messages):
    from ui.leakage.page import LeakagePage

    project, _ = counted
    return shown_page(LeakagePage, project, size=(1300, 800))


def _settled(qtbot, tab):
    qtbot.waitUntil(lambda: not tab.work.busy and not tab.reading.busy, timeout=60_000)
    qtbot.waitUntil(lambda: tab.charts is None or not tab.charts.drawing.busy, timeout=60_000)


def test_the_overlap_tab_shows_the_query_of_its_choices(qtbot, page, counted, messages):
    project, _ = counted
    page.tabs.setCurrentWidget(page.overlap)
    tab = page.overlap
    _settled(qtbot, tab)
    assert tab.choices == OverlapChoices(corpus="mini")  # the first corpus; the chance from the same corpus
    _same(tab.table.frame, overlap_table(project, tab.choices))
    tab.background.setCurrentIndex(tab.background.findText("other"))
    assert tab.choices.background == "other"
    tab.refresh()
    _settled(qtbot, tab)
    _same(tab.table.frame, overlap_table(project, OverlapChoices(corpus="mini", background="other")))
    assert tab.note.text() == tab.table.frame.attrs["note"]
    assert "background corpus 'other'" in tab.note.text()
    tab.grab().save("/tmp/state-leak-overlap.png")
    assert not messages["errors"]


def test_the_frequency_tab_shows_the_query_of_its_choices(qtbot, page, counted, messages):
    project, _ = counted
    page.tabs.setCurrentWidget(page.frequency)
    tab = page.frequency
    _settled(qtbot, tab)
    assert tab.choices == FrequencyChoices(corpus="mini", model="gpt-x", per_book=1, gram=3)  # the newest count's
    assert tab.table.rowCount() == 3
    _same(tab.table.frame, frequency_table(project, tab.choices))
    tab.gram.setValue(2)
    assert tab.choices.gram == 2
    _settled(qtbot, tab)
    assert tab.table.rowCount() == 0  # no count with 2-word n-grams
    tab.gram.setValue(3)
    _settled(qtbot, tab)
    _same(tab.table.frame, frequency_table(project, FrequencyChoices(corpus="mini", model="gpt-x", per_book=1, gram=3)))
    assert tab.note.text() == tab.table.frame.attrs["note"]
    tab.grab().save("/tmp/state-leak-frequency.png")
    assert not messages["errors"]


def test_the_other_tabs_widgets_change_their_choices(qtbot, page, counted, tiny_causal_dir, tmp_path, messages):
    from workbench.models.catalog import ModelSpec, add_model
    from workbench.probes.leakage.views import (
        DecopChoices,
        MembershipChoices,
        SurprisalChoices,
        decop_table,
        membership_table,
    )

    project, _ = counted
    add_model(project, ModelSpec(label="tiny", backend="hf", ref=str(tiny_causal_dir), params={"device": "cpu"}))
    add_model(project, ModelSpec(label="tiny-2", backend="hf", ref=str(tiny_causal_dir), params={"device": "cpu"}))
    page.tabs.setCurrentWidget(page.membership)
    tab = page.membership
    _settled(qtbot, tab)
    assert tab.choices == MembershipChoices(model="tiny")
    tab.reference.setCurrentIndex(tab.reference.findData("tiny-2"))
    tab.k.setValue(10)
    passages = tmp_path / "passages.txt"
    passages.write_text("One passage.\n\nAnother passage.\n", encoding="utf-8")
    tab.source.choose_file(passages)
    assert tab.choices == MembershipChoices(model="tiny", reference="tiny-2", k_percent=10.0, source=str(passages))
    _settled(qtbot, tab)
    _same(tab.table.frame, membership_table(project, tab.choices))  # nothing read yet: what to do, in the note
    assert tab.note.text() == tab.table.frame.attrs["note"] and "has read no passages yet" in tab.note.text()

    page.tabs.setCurrentWidget(page.decop)
    tab = page.decop
    _settled(qtbot, tab)
    tab.paraphraser.setCurrentIndex(tab.paraphraser.findData("tiny-2"))
    tab.orders.setCurrentIndex(tab.orders.findData(8))
    tab.cutoff.setValue(1950)
    assert tab.choices == DecopChoices(model="tiny", paraphraser="tiny-2", orders=8, cutoff_year=1950)
    _settled(qtbot, tab)
    _same(tab.table.frame, decop_table(project, tab.choices))

    page.tabs.setCurrentWidget(page.surprisal)
    tab = page.surprisal
    tab.model.setCurrentIndex(tab.model.findData("tiny-2"))
    assert tab.choices == SurprisalChoices(model="tiny-2")  # no text read yet: no item, nothing to show
    assert tab.results_query() is None
    assert not messages["errors"]
