"""The most-frequent-name baseline (chosen without the book it is scored on) and the paper's table of several
models side by side per book."""

from __future__ import annotations

import csv
import io

import pytest

from tests.fixtures.cloze_books import write_gpt4books
from workbench.cli import main
from workbench.corpus.library import update_book
from workbench.probes.cloze.baselines import frequent_name_baseline
from workbench.probes.cloze.gpt4books import import_gpt4books
from workbench.probes.cloze.models_table import models_table


def _passage(book: str, k: int) -> str:
    return f"In {book}, scene {k}: the lamp was lit before [MASK] came down the stairs."


@pytest.fixture
def named(project, tmp_path):
    """Three books whose gold names make the leak visible: 'Ann' is the commonest name overall only because of
    book A, whose every passage is Ann."""
    golds = {"book-a": ["Ann"] * 10, "book-b": ["Ann"] * 3 + ["Bob"] * 5, "book-c": ["Bob"] * 5 + ["ann"]}
    answers = {"alpha": {"book-a": 9, "book-b": 2, "book-c": 6}, "beta": {"book-a": 1, "book-b": 8}}
    for model, right in answers.items():
        folder = tmp_path / model
        folder.mkdir()
        files = [write_gpt4books(folder, book, [(f"<name>{gold if k < right[book] else 'Nobody'}</name>", gold,
                                                 _passage(book, k)) for k, gold in enumerate(names)])
                 for book, names in golds.items() if book in right]
        import_gpt4books(project, files, model)
    ids = {b: project.db.execute("SELECT id FROM books WHERE external_id = ?", [b]).fetchone()[0] for b in golds}
    for book, year in (("book-a", 1850), ("book-b", 1930)):
        update_book(project, ids[book], year=year)
    return project, ids


def test_the_baseline_name_of_a_book_comes_from_the_other_books(named):
    project, ids = named
    frame = frequent_name_baseline(project).set_index("book")
    assert frame.loc["all books", "passages"] == 24
    # book A: the other books hold more Bobs than Anns, so its own passages cannot tell the baseline 'Ann'
    assert (frame.loc["book-a", "baseline_name"], frame.loc["book-a", "correct"]) == ("bob", 0)
    assert (frame.loc["book-b", "baseline_name"], frame.loc["book-b", "correct"]) == ("ann", 3)
    assert (frame.loc["book-c", "baseline_name"], frame.loc["book-c", "correct"]) == ("ann", 1)  # case ignored
    assert frame.loc["all books", "correct"] == 4
    pooled = frequent_name_baseline(project, construction="pooled").set_index("book")
    assert set(pooled["baseline_name"]) == {"ann"} and pooled.loc["all books", "correct"] == 14  # the paper's way
    assert pooled.loc["book-a", "accuracy"] == 1.0  # told the answer by its own passages
    assert (pooled["construction"] == "pooled").all() and (frame["construction"] == "leave-book-out").all()
    low, high = frame.loc["book-b", ["ci_low", "ci_high"]]
    assert low < 3 / 8 < high


def test_several_models_side_by_side_sorted_by_the_first_with_top_and_years(named):
    project, ids = named
    table = models_table(project, ["alpha", "beta"])
    assert list(table.columns) == ["book", "book_id", "author", "year", "accuracy: alpha", "passages: alpha",
                                   "accuracy: beta", "passages: beta"]
    assert list(table["book"]) == ["book-c", "book-a", "book-b"]  # alpha: 6/6, 9/10, 2/8
    assert table.set_index("book")["accuracy: beta"].isna().to_dict() == {"book-c": True, "book-a": False,
                                                                          "book-b": False}  # beta never saw C
    by_beta = models_table(project, ["beta", "alpha"])
    assert list(by_beta["book"])[:2] == ["book-b", "book-a"]
    assert list(models_table(project, ["alpha"], top=1)["book"]) == ["book-c"]
    recent = models_table(project, ["alpha"], year_from=1900)
    assert list(recent["book"]) == ["book-b"]  # the undated book C is left out by a year bound


def test_the_commands(named, capsys):
    project, _ = named
    path = str(project.path)
    project.close()
    assert main(["cloze", "table", path, "--model", "alpha", "--model", "beta", "--top", "2", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["book"] for r in rows] == ["book-c", "book-a"]
    assert {"book_id", "book_source", "accuracy: alpha", "accuracy: beta"} <= set(rows[0])
    assert main(["cloze", "frequent-name", path, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows[0]["book"] == "all books" and {"baseline_name", "accuracy"} <= set(rows[0])
    assert main(["cloze", "table", path, "--model", "alpha", "--year-from", "1900"]) == 0
    assert "without a year of publication are left out" in capsys.readouterr().err
