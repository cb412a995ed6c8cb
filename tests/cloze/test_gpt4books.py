"""Importing results in the gpt4-books TSV format (files written here, not the published ones)."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.fixtures.cloze_texts import add_book, novel
from workbench.errors import UserError
from workbench.probes.cloze.analysis import book_accuracy, passage_results
from workbench.probes.cloze.gpt4books import import_gpt4books

ROWS_A = [
    ("<name>Harriet</name>", "Harriet", "Harriet", "The lamps were lit early, and [MASK] sat by the window."),
    ("<name>harriet</name>", "harriet", "Harriet", "[MASK] folded the letter and said nothing more."),
    ("<name>Tobias</name>", "Tobias", "Silas", "Nobody answered when [MASK] asked about the bridge."),
    ("", "", "Oswald", "The dogs barked until [MASK] went out to them."),
]
ROWS_B = [
    ("<name>Leopold</name>", "Leopold", "Leopold", "The road to the mill was deep in mud, and [MASK] turned back."),
    ("Margaret", "Margaret", "Alice", "[MASK] counted the plates twice before supper."),
]


def write_tsv(path, rows):
    path.write_text("".join("\t".join(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_import_creates_runs_books_and_passages_scored_by_our_scorer(tmp_path, project):
    gutenberg_id = add_book(project, novel(4), "pg84.txt", title="A Wet Week", external_id="84", year=1818)
    with project.db.conn:
        project.db.execute("UPDATE books SET source_kind = 'gutenberg' WHERE id = ?", [gutenberg_id])
    files = [write_tsv(tmp_path / "84_a_wet_week.tsv", ROWS_A), write_tsv(tmp_path / "unknown_book.tsv", ROWS_B)]
    summary = import_gpt4books(project, files, "gpt-4-published")
    assert list(summary["rows"]) == [4, 2]
    assert list(summary["correct"]) == [2, 1]  # case-insensitive; empty answer wrong; untagged answer parsed
    assert list(summary["parse_disagreements"]) == [0, 0]
    assert summary.loc[0, "book_id"] == gutenberg_id and not summary.loc[0, "new_book"]
    new_book = project.db.execute(
        "SELECT title, source_kind, external_id, content_hash FROM books WHERE id = ?", [int(summary.loc[1, "book_id"])]
    ).fetchone()
    assert new_book == ("", "external", "unknown_book", None)
    model = project.db.execute("SELECT backend FROM models WHERE label = 'gpt-4-published'").fetchone()
    assert model == ("external",)
    table = book_accuracy(project, "gpt-4-published").set_index("book")
    assert table.loc["A Wet Week", "accuracy"] == 0.5 and table.loc["A Wet Week", "n"] == 4
    assert table.loc["unknown_book", "accuracy"] == 0.5  # the external id stands in for the title
    assert pd.isna(table.loc["unknown_book", "flagged"])  # no extraction behind imported passages
    passages = project.db.execute("SELECT origin, start_char FROM cloze_passages").fetchall()
    assert passages and all(p == ("imported", None) for p in passages)


def test_importing_the_same_file_twice_adds_nothing(tmp_path, project):
    path = write_tsv(tmp_path / "book7.tsv", ROWS_A)
    first = import_gpt4books(project, [path], "published")
    second = import_gpt4books(project, [path], "published")
    assert first.loc[0, "run_id"] == second.loc[0, "run_id"]
    assert project.db.execute("SELECT COUNT(*) FROM cloze_passages").fetchone()[0] == 4
    assert project.db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 4
    assert project.db.execute("SELECT COUNT(*) FROM books").fetchone()[0] == 1
    assert len(passage_results(project, "published")) == 4


def test_bad_rows_are_reported_with_file_and_line_and_nothing_is_written(tmp_path, project):
    good = write_tsv(tmp_path / "good.tsv", ROWS_B)
    bad = tmp_path / "bad.tsv"
    bad.write_text(
        "\t".join(ROWS_A[0]) + "\n"
        + "only\ttwo\n"
        + "<name>X</name>\tX\t\tA passage with [MASK] here.\n"
        + "<name>X</name>\tX\tX\tNo mask in this passage.\n",
        encoding="utf-8",
    )
    with pytest.raises(UserError) as error:
        import_gpt4books(project, [good, bad], "published")
    message = str(error.value)
    assert "bad.tsv, line 2: expected 4 columns" in message
    assert "bad.tsv, line 3: the name (third column) is empty" in message
    assert "bad.tsv, line 4: the passage (fourth column) must contain [MASK] once" in message
    assert project.db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0
    assert project.db.execute("SELECT COUNT(*) FROM books").fetchone()[0] == 0


def test_an_empty_file_and_a_runnable_label_are_refused(tmp_path, project):
    from workbench.models.registry import ModelSpec, add_model

    empty = tmp_path / "empty.tsv"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(UserError, match="no rows"):
        import_gpt4books(project, [empty], "published")
    add_model(project, ModelSpec(label="local", backend="openai", ref="some-model", base_url="http://127.0.0.1:9/v1"))
    with pytest.raises(UserError, match="own label"):
        import_gpt4books(project, [write_tsv(tmp_path / "x.tsv", ROWS_B)], "local")
