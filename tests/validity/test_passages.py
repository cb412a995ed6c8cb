"""Passages for the downstream tasks: sampled as whole spaCy sentences with offsets, or imported from a table."""

import pandas as pd
import pytest

from tests.fixtures.books import novel_text
from tests.fixtures.cloze_texts import add_book
from workbench.corpus.library import get_book, update_book
from workbench.errors import UserError
from workbench.jobs import Outcome, Unit, create_run, run_job
from workbench.probes.validity.passages import (
    import_passages,
    passage_usage,
    passages_frame,
    sample_passages,
    sampled_ids,
    tidy,
)
from workbench.probes.validity.predictions import import_predictions
from workbench.project import Project


def long_novel(seed: int) -> str:
    return novel_text(seed, chapters=4, paragraphs=12)


@pytest.fixture
def library(project):
    ids = [add_book(project, long_novel(s), f"novel-{s}.txt", title=f"Novel {s}") for s in (1, 2)]
    return project, ids


def test_sampled_passages_are_whole_sentences_of_about_the_length_asked(library):
    project, ids = library
    summary = sample_passages(project, words=120, per_book=3, seed=4)
    assert list(summary["status"]) == ["sampled", "sampled"] and list(summary["passages"]) == [3, 3]
    frame = passages_frame(project)
    assert len(frame) == 6 and set(frame["origin"]) == {"sampled"}
    for book_id, part in frame.groupby("book_id"):
        text = project.db.execute("SELECT text FROM book_texts WHERE book_id = ?", [book_id]).fetchone()[0]
        spans = sorted(zip(part["start_char"], part["end_char"]))
        for (_start, end), (next_start, _) in zip(spans, spans[1:]):
            assert end <= next_start  # no overlap
        for row in part.itertuples():
            piece = text[row.start_char : row.end_char]
            assert tidy(piece) == row.passage
            assert 96 <= row.words <= 144  # within 20% of 120
            assert row.passage[0].isupper() and row.passage.endswith(".")  # starts and ends a sentence
            assert text[row.start_char - 1].isspace() or row.start_char == 0
            assert "CHAPTER" not in piece  # never across a heading


def test_the_same_seed_gives_the_same_passages_in_any_project(library, tmp_path):
    project, ids = library
    sample_passages(project, words=100, per_book=2, seed=7)
    first = passages_frame(project)
    other = Project.create(tmp_path / "other.palimpsest")
    try:
        add_book(other, long_novel(2), "again.txt", title="Again")  # book 2's text, in another project
        sample_passages(other, words=100, per_book=2, seed=7)
        again = passages_frame(other)
        assert list(again["passage"]) == list(first[first["book_id"] == ids[1]]["passage"])
        sample_passages(other, words=100, per_book=2, seed=8, replace=True)
        assert list(passages_frame(other)["passage"]) != list(again["passage"])
    finally:
        other.close()


def test_books_with_passages_keep_them_unless_replaced_and_replacing_deletes_their_answers(library):
    project, ids = library
    sample_passages(project, ids[:1], words=100, seed=1)
    kept = passages_frame(project)
    run_id = create_run(project, "validity-year", config={"passage_ids": list(kept["passage_id"])})
    run_job(project, run_id, [Unit(int(i)) for i in kept["passage_id"]],
            lambda units, state: ((u, Outcome(raw="1850")) for u in units))
    assert passage_usage(project, sampled_ids(project, ids[:1])) == 1
    again = sample_passages(project, ids[:1], words=100, seed=2)
    assert list(again["status"]) == ["kept"] and list(passages_frame(project)["passage"]) == list(kept["passage"])
    sample_passages(project, ids[:1], words=100, seed=2, replace=True)
    assert list(passages_frame(project)["passage"]) != list(kept["passage"])
    assert project.db.execute("SELECT COUNT(*) FROM responses WHERE run_id = ?", [run_id]).fetchone()[0] == 0


def test_books_without_text_or_without_enough_prose_are_said(project, tmp_path):
    short = add_book(project, "CHAPTER I.\n\nIt rained. Then it stopped.\n", "short.txt", title="Short")
    project.db.execute("INSERT INTO books (title, source_kind, external_id, added_at) VALUES ('', 'external', 'x9', '')")
    summary = sample_passages(project, words=250)
    statuses = dict(zip(summary["book"], summary["status"]))
    assert statuses == {"Short": "too short", "x9": "no text"}
    assert passages_frame(project).empty and short


def test_too_short_passages_are_refused(library):
    project, _ = library
    with pytest.raises(UserError, match="too short"):
        sample_passages(project, words=5)


# ---------------------------------------------------------------------------------------------- importing
def write(tmp_path, text, name="passages.tsv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def named_books(project):
    one = add_book(project, long_novel(3), "one.txt", title="The Lantern Road")
    two = add_book(project, long_novel(4), "two.txt", title="Harbour Lights", year=1901)
    project.db.execute("UPDATE books SET external_id = 'ext-two' WHERE id = ?", [two])
    return project, one, two


def test_passages_import_by_id_external_id_or_title_with_years_and_minutes(named_books, tmp_path):
    project, one, two = named_books
    path = write(tmp_path, "id,book,year,minutes,passage\n"
                           f"p1,{one},1850,90,\"The lamps were lit, and the coach came.\"\n"
                           "p2,ext-two,1899,2 hours,The harbour was quiet.\n"
                           "p3,The Lantern Road,,,\"Another passage, with a comma.\"\n", "passages.csv")
    frame = import_passages(project, path)
    assert list(frame["new"]) == [True, True, True] and list(frame["line"]) == [2, 3, 4]
    stored = passages_frame(project).set_index("label")
    assert stored.loc["p1", "book_id"] == one and stored.loc["p1", "minutes"] == 90.0
    assert stored.loc["p2", "minutes"] == 120.0 and stored.loc["p2", "year"] == 1899
    assert stored.loc["p3", "passage"] == "Another passage, with a comma." and stored["origin"].eq("imported").all()
    assert get_book(project, one).year == 1850  # filled where the book had none
    assert get_book(project, two).year == 1901  # kept; the passage's 1899 is the truth of the year task
    again = import_passages(project, path)
    assert not again["new"].any() and len(passages_frame(project)) == 3


def test_a_bad_file_imports_nothing_and_names_every_line(named_books, tmp_path):
    project, one, _ = named_books
    update_book(project, one, year=None)
    path = write(tmp_path, "book\tyear\tminutes\tpassage\n"
                           f"{one}\t1850\t10\tGood passage.\n"
                           "Nowhere Book\t1850\t10\tUnknown book.\n"
                           f"{one}\tlong ago\t10\tBad year.\n"
                           f"{one}\t1850\ta while\tBad minutes.\n"
                           f"{one}\t1850\t-3\tNegative minutes.\n"
                           f"{one}\t1850\t10\t\n"
                           f"{one}\t1850\t10\tGood passage.\n")
    with pytest.raises(UserError) as error:
        import_passages(project, path)
    message = str(error.value)
    assert "was not imported (nothing was changed) because of 6 problem(s)" in message
    for line, words in ((3, "Nowhere Book"), (4, "long ago"), (5, "a while"), (6, "-3"), (7, "empty"), (8, "line 2")):
        assert f"line {line}:" in message and words in message
    assert passages_frame(project).empty and get_book(project, one).year is None


def test_missing_columns_ambiguous_titles_and_odd_files(named_books, tmp_path):
    project, one, _ = named_books
    with pytest.raises(UserError, match="lacks the column.s. passage"):
        import_passages(project, write(tmp_path, "book,text\n1,x\n", "a.csv"))
    add_book(project, long_novel(5), "three.txt", title="Harbour Lights")
    with pytest.raises(UserError, match="several books are called 'Harbour Lights'"):
        import_passages(project, write(tmp_path, "book,passage\nHarbour Lights,x\n", "b.csv"))
    with pytest.raises(UserError, match="empty"):
        import_passages(project, write(tmp_path, "", "c.csv"))
    path = tmp_path / "d.csv"
    path.write_bytes("book,passage\n1,caf\xe9\n".encode("latin-1"))
    with pytest.raises(UserError, match="not UTF-8"):
        import_passages(project, path)
    with pytest.raises(UserError, match="more cells than the header"):
        import_passages(project, write(tmp_path, f"book,passage\n{one},a, b\n", "e.csv"))


def test_a_tsv_passage_that_begins_with_a_quotation_mark_swallows_no_rows(named_books, tmp_path):
    project, one, two = named_books
    path = write(tmp_path, "book\tyear\tpassage\n"
                           f"{one}\t1850\t\"Come here,\u201d she said. He came.\n"
                           f"{two}\t1900\tAn ordinary passage.\n"
                           f"{one}\t1920\tThe third \"passage\".\n")
    assert list(import_passages(project, path)["line"]) == [2, 3, 4]
    assert list(passages_frame(project)["passage"]) == ['"Come here,\u201d she said. He came.', 'The third "passage".',
                                                        "An ordinary passage."]


def test_importing_again_without_a_column_keeps_what_that_column_stored(named_books, tmp_path):
    project, one, _ = named_books
    text = "The lamps were lit."
    years = write(tmp_path, f"id,book,year,passage\np1,{one},1850,{text}\n", "years.csv")
    import_passages(project, years)
    shown = import_passages(project, write(tmp_path, f"book,minutes,passage\n{one},90,{text}\n", "minutes.csv"))
    assert (shown.loc[0, "year"], shown.loc[0, "minutes"]) == (1850, 90.0)  # the passage as it now stands
    import_passages(project, years)
    stored = passages_frame(project)
    assert len(stored) == 1 and (stored.loc[0, "label"], stored.loc[0, "year"], stored.loc[0, "minutes"]) == ("p1", 1850, 90.0)
    import_passages(project, write(tmp_path, f"book,year,passage\n{one},,{text}\n", "cleared.csv"))
    stored = passages_frame(project)  # an empty cell in a column the file has clears that value only
    assert pd.isna(stored.loc[0, "year"]) and (stored.loc[0, "label"], stored.loc[0, "minutes"]) == ("p1", 90.0)


def test_a_number_that_is_one_books_id_and_another_books_external_id_is_refused(named_books, tmp_path):
    project, one, two = named_books
    project.db.execute("UPDATE books SET external_id = ? WHERE id = ?", [str(two), one])  # e.g. a Gutenberg number
    with pytest.raises(UserError) as error:
        import_passages(project, write(tmp_path, f"book,passage\n{two},For book {two}?\n", "ambiguous.csv"))
    message = str(error.value)
    assert (f"line 2: '{two}' names more than one book: book {one} (The Lantern Road) by its external id and "
            f"book {two} (Harbour Lights) by its id. Write the title or the file name of the book you mean") in message
    assert passages_frame(project).empty
    import_passages(project, write(tmp_path, f"book,passage\nHarbour Lights,By title.\n{one},By id.\n", "clear.csv"))
    assert dict(zip(passages_frame(project)["passage"], passages_frame(project)["book_id"])) == {
        "By id.": one, "By title.": two}
    with pytest.raises(UserError, match=f"line 2: '{two}' names more than one book"):
        import_predictions(project, "year", write(tmp_path, f"book,answer\n{two},1901\n", "answers.csv"), "m")
