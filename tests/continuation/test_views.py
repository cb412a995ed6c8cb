"""The Continuation page's results view as state (issue 21.6): ``ContinuationChoices`` (model, book, run settings,
how the runs are read) changed by the page's widgets; the table shown is ``continuation_table`` for those
choices, and ``palimpsest continuation scores`` prints the same frame for the same choices."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from workbench.cli import main
from workbench.models.catalog import ModelSpec, add_model
from workbench.probes.continuation.run import run_continuation
from workbench.probes.continuation.views import ContinuationChoices, continuation_table

SHORT = {"per_book": 3, "prefix_tokens": 8, "continue_tokens": 8}


@pytest.fixture
def answered(two_books, tiny_causal_dir):
    project, seen, unseen = two_books
    add_model(project, ModelSpec(label="tiny", backend="hf", ref=str(tiny_causal_dir)))
    assert run_continuation(project, "tiny", **SHORT).status == "done"
    return project, seen, unseen


def test_the_query_shows_the_book_chosen_with_the_numbers_of_every_book(answered):
    project, seen, unseen = answered
    every = continuation_table(project, ContinuationChoices(model="tiny"))
    assert sorted(every["book_id"]) == sorted([seen, unseen])
    one = continuation_table(project, ContinuationChoices(model="tiny", book_id=seen))
    assert one["book_id"].tolist() == [seen]
    # the baseline (the unseen book) and the Holm adjustment are those over every book, not over the one shown
    pd.testing.assert_frame_equal(one, every[every["book_id"] == seen].reset_index(drop=True))
    assert one["baseline_passages"].tolist() == [3]
    loose = continuation_table(project, ContinuationChoices(model="tiny", book_id=unseen, match_tokens=1))
    assert loose["book_id"].tolist() == [unseen] and loose["match_tokens"].tolist() == [1]
    assert continuation_table(project, ContinuationChoices(model="tiny", prefix_tokens=9)).empty  # no such run
    assert continuation_table(project, ContinuationChoices()).empty


def test_the_scores_command_prints_the_query_for_its_choices(answered, capsys):
    project, seen, _ = answered
    capsys.readouterr()
    assert main(["continuation", "scores", str(project.path), "--model", "tiny", "--book", str(seen),
                 "--match-tokens", "2", "--format", "csv"]) == 0
    printed = pd.read_csv(io.StringIO(capsys.readouterr().out)).drop(columns=["book_source", "book_external_id"])
    query = continuation_table(project, ContinuationChoices(model="tiny", book_id=seen, match_tokens=2))
    assert printed["book_id"].tolist() == [seen]
    pd.testing.assert_frame_equal(printed[list(query.columns)],
                                  pd.read_csv(io.StringIO(query.to_csv(index=False))), check_dtype=False)


pytest.importorskip("PySide6")


def test_the_page_shows_the_query_of_its_choices(qtbot, shown_page, answered, messages):
    from ui.continuation.page import ContinuationPage

    project, seen, unseen = answered
    page = shown_page(ContinuationPage, project, size=(1300, 850))
    tab = page.tab

    def settled():
        qtbot.waitUntil(lambda: not tab.work.busy and not tab.reading.busy and not tab.charts.drawing.busy,
                        timeout=120_000)

    settled()
    assert tab.choices.model == "tiny" and tab.choices.book_id is None
    pd.testing.assert_frame_equal(tab.table.frame, continuation_table(project, tab.choices))
    assert tab.table.rowCount() == 2
    tab.books.setCurrentIndex(tab.books.findData(seen))
    tab.per_book.setValue(7)
    tab.prefix.setValue(12)
    assert tab.choices == ContinuationChoices(model="tiny", book_id=seen, per_book=7, run_prefix_tokens=12)
    tab.refresh()
    settled()
    assert tab.table.rowCount() == 1 and tab.table.column_texts("Book") == ["Marrow Point"]
    pd.testing.assert_frame_equal(tab.table.frame, continuation_table(project, ContinuationChoices(
        model="tiny", book_id=seen)))
    page.grab().save("/tmp/state-leak-continuation.png")
    assert not messages["errors"]
