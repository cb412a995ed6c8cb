"""Importing results in the gpt4-books TSV format (files written here, not the published ones)."""

from __future__ import annotations

import csv
import io
import json

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
    assert new_book == ("unknown_book", "external", "unknown_book", None)  # its id names it until a title is known
    model = project.db.execute("SELECT backend FROM models WHERE label = 'gpt-4-published'").fetchone()
    assert model == ("external",)
    table = book_accuracy(project, "gpt-4-published").set_index("book")
    assert table.loc["A Wet Week", "accuracy"] == 0.5 and table.loc["A Wet Week", "n"] == 4
    assert table.loc["unknown_book", "accuracy"] == 0.5
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
    from workbench.models.catalog import ModelSpec, add_model

    empty = tmp_path / "empty.tsv"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(UserError, match="no rows"):
        import_gpt4books(project, [empty], "published")
    add_model(project, ModelSpec(label="local", backend="openai", ref="some-model", base_url="http://127.0.0.1:9/v1"))
    with pytest.raises(UserError, match="own label"):
        import_gpt4books(project, [write_tsv(tmp_path / "x.tsv", ROWS_B)], "local")


# ---------------------------------------------------------------------------------------------- runs and writes
def _counts(project):
    return {table: project.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            for table in ("runs", "responses", "cloze_passages", "books", "models")}


def _rows(book, right, passages=5):
    return [(f"<name>{'N%dx%d' % (book, k) if k < right else 'Nobody'}</name>", "", f"N{book}x{k}",
             f"Scene {k} of book {book}: [MASK] waited.") for k in range(passages)]


def _files(folder, count, first=1, right=lambda i: i % 6):
    folder.mkdir(exist_ok=True)
    return [write_tsv(folder / f"b{i:02d}.tsv", _rows(i, right(i))) for i in range(first, first + count)]


def test_one_import_is_one_run_that_lists_its_files_written_in_a_few_commits(tmp_path, project):
    from workbench.jobs import get_run

    files = _files(tmp_path / "gpt4", 8)
    statements = []
    project.db.conn.set_trace_callback(statements.append)
    summary = import_gpt4books(project, files, "gpt4")
    project.db.conn.set_trace_callback(None)
    assert summary["run_id"].nunique() == 1 and _counts(project)["runs"] == 1
    run = get_run(project, int(summary["run_id"].iloc[0]))
    assert (run["kind"], run["status"], run["total"]) == ("cloze", "done", 40)
    assert run["config"]["files"] == [{"file": f"b{i:02d}.tsv", "rows": 5, "book_id": int(book_id)}
                                      for i, book_id in zip(range(1, 9), summary["book_id"])]
    assert run["config"]["imported_from"] == "8 files in gpt4/"
    assert "passage_ids" not in run["config"]  # the responses say which passages it holds: no list of every item
    # all of it in one transaction, the rows in batches: not one commit per row or per file
    assert sum(s.strip().upper() == "COMMIT" for s in statements) == 1
    extra = project.db.execute("SELECT extra FROM responses ORDER BY id LIMIT 1").fetchone()[0]
    assert json.loads(extra) == {"file": "b01.tsv", "line": 1, "published_parsed": ""}


def test_a_second_import_of_more_files_adds_a_run_for_the_new_files_only(tmp_path, project):
    files = _files(tmp_path / "gpt4", 6)
    first = import_gpt4books(project, files[:4], "gpt4")
    second = import_gpt4books(project, files, "gpt4")  # the folder again, with two files added
    assert _counts(project)["runs"] == 2 and _counts(project)["responses"] == 30
    assert list(second["run_id"][:4]) == list(first["run_id"])  # the earlier files are where they were
    assert second["run_id"][4] == second["run_id"][5] != first["run_id"][0]
    assert list(second["rows"]) == [5] * 6
    table = book_accuracy(project, "gpt4").set_index("book")
    assert len(table) == 6 and table.loc["b05", "correct"] == 5 and table.loc["b02", "correct"] == 2


def test_a_corrected_file_goes_into_a_new_run_whose_answers_count(tmp_path, project):
    path = write_tsv(tmp_path / "b01.tsv", _rows(1, 1))
    import_gpt4books(project, [path], "gpt4")
    write_tsv(path, _rows(1, 4))  # a corrected release of the same file
    summary = import_gpt4books(project, [path], "gpt4")
    assert _counts(project)["runs"] == 2 and _counts(project)["cloze_passages"] == 5  # passages found again
    assert book_accuracy(project, "gpt4").loc[0, "correct"] == 4 and summary.loc[0, "correct"] == 4


def test_two_models_share_the_passages_of_the_same_books(tmp_path, project):
    import_gpt4books(project, _files(tmp_path / "a", 3), "model-a")
    import_gpt4books(project, _files(tmp_path / "b", 3, right=lambda i: 0), "model-b")
    counts = _counts(project)
    assert (counts["runs"], counts["cloze_passages"], counts["books"], counts["responses"]) == (2, 15, 3, 30)


def test_projects_with_one_run_per_file_keep_working(tmp_path, project):
    """Earlier versions made one run per file; importing those files again adds nothing, and the
    analyses read each book's answers across those runs."""
    from workbench.jobs import Outcome, Unit, create_run, run_job
    from workbench.probes.cloze.gpt4books import external_model, read_files

    files = _files(tmp_path / "gpt4", 3)
    model_id = external_model(project, "gpt4")
    for book_file in read_files(files):  # the old import, file by file
        with project.db.transaction():
            book_id = project.db.execute(
                "INSERT INTO books (title, source_kind, source_name, external_id, added_at) VALUES"
                " ('', 'external', ?, ?, 'then')", [f"{book_file.book_key} (imported results)", book_file.book_key]
            ).lastrowid
            ids = [project.db.execute("INSERT INTO cloze_passages (book_id, passage, gold, origin, created_at)"
                                      " VALUES (?, ?, ?, 'imported', 'then')", [book_id, r.passage, r.gold]).lastrowid
                   for r in book_file.rows]
        run_id = create_run(project, "cloze", model_id=model_id, params={},
                            config={"passage_ids": ids, "imported_from": book_file.path.name, "format": "gpt4books"})
        rows = dict(zip(ids, book_file.rows))
        run_job(project, run_id, [Unit(i) for i in ids], lambda units, state, rows=rows: [
            (u, Outcome(raw=rows[u.item_id].raw, extra={"published_parsed": rows[u.item_id].published_parsed,
                                                          "line": rows[u.item_id].line})) for u in units])
    before = book_accuracy(project, "gpt4")
    counts = _counts(project)
    summary = import_gpt4books(project, files, "gpt4")
    assert _counts(project) == counts and list(summary["run_id"]) == [1, 2, 3]
    assert set(zip(before["book"], before["correct"])) == {("b01", 1), ("b02", 2), ("b03", 3)}
    more = import_gpt4books(project, _files(tmp_path / "gpt4", 1, first=4), "gpt4")
    assert more.loc[0, "run_id"] == 4 and len(book_accuracy(project, "gpt4")) == 4


def test_a_cancelled_import_leaves_the_project_as_it_was(tmp_path, project):
    from workbench.errors import CancelledError
    from workbench.progress import TaskState

    def stop_when_saving(progress):
        if progress.message.startswith("Saving"):
            state.cancel()

    state = TaskState(on_progress=stop_when_saving, min_interval=0)
    counts = _counts(project)
    with pytest.raises(CancelledError):
        import_gpt4books(project, _files(tmp_path / "gpt4", 120), "gpt4", state=state)
    assert state.last.message.startswith("Saving")  # it got as far as writing, then took it all back
    assert _counts(project) == counts


# ---------------------------------------------------------------------------------------------- two files of one work
# The published outputs hold two files for Gutenberg 472, in the two name forms: the same passages, answered twice.
CEDARS = "472_the_house_behind_the_cedars.txt"
CHESNUTT = "chesnutt_the_house_behind_the_cedars_gutenberg_pg472_House_Behind_the_Cedars.txt"
PASSAGES = [("Rena", "The garden gate creaked, and [MASK] looked up from her book."),
            ("Tryon", "It was a long ride home, said [MASK], and the horse was tired."),
            ("John", "[MASK] had not written for a month."),
            ("Rena", "Nobody saw [MASK] leave the house that morning."),
            ("Frank", "The cart stood in the lane while [MASK] unloaded the barrels.")]


def _answered(answers):
    return [(f"<name>{a}</name>", a, gold, passage) for a, (gold, passage) in zip(answers, PASSAGES)]


def _work_folder(folder, first, second, more=()):
    folder.mkdir(parents=True, exist_ok=True)
    write_tsv(folder / CEDARS, _answered(first))
    write_tsv(folder / CHESNUTT, _answered(second))
    for name, rows in more:
        write_tsv(folder / name, rows)
    return folder


def _file_accuracy(path):
    """A file's accuracy computed from the file alone (case-insensitive exact match of the tagged answer)."""
    import re

    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    right = sum(re.sub(r"</?name>", "", raw).strip().lower() == gold.strip().lower() for raw, _, gold, _ in rows)
    return right / len(rows)


def test_two_files_of_one_work_are_imported_as_two_books_each_reproducible_from_the_csv(tmp_path, project, capsys):
    from workbench.cli import main

    gpt4 = _work_folder(tmp_path / "gpt4_results", ["Rena", "Tryon", "Paul", "Rena", "Frank"],
                        ["Julia", "Tryon", "John", "Miriam", "Frank"], more=[("105_persuasion.txt", ROWS_B)])
    (gpt4 / "README.md").write_text("not a results file\n", encoding="utf-8")
    assert main(["cloze", "import", str(project.path), "--model-label", "gpt4", str(gpt4)]) == 0  # the folder
    out = capsys.readouterr().out
    assert "each file was kept as a book of its own" in out
    assert _counts(project)["responses"] == 12 and _counts(project)["books"] == 3
    tags = dict(project.db.execute("SELECT book_id, value FROM book_tags WHERE key = 'same_work'").fetchall())
    assert sorted(tags.values()) == ["Gutenberg 472", "Gutenberg 472"]

    chatgpt = _work_folder(tmp_path / "chatgpt_results", ["Lucy", "Tryon", "John", "Rena", "Paul"],
                           ["Rena", "Tryon", "Orville", "Rena", "Frank"], more=[("105_persuasion.txt", ROWS_B)])
    assert main(["cloze", "import", str(project.path), "--model-label", "chatgpt", str(chatgpt)]) == 0
    assert _counts(project)["books"] == 3 and _counts(project)["cloze_passages"] == 12  # found again, by file
    capsys.readouterr()
    assert main(["cloze", "accuracy", str(project.path), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    by_file = {(r["model"], r["book_source"]): r for r in rows}
    assert len(by_file) == len(rows) == 6
    for folder in (gpt4, chatgpt):
        model = folder.name.removesuffix("_results")
        for name in (CEDARS, CHESNUTT, "105_persuasion.txt"):
            row = by_file[(model, name)]
            assert float(row["accuracy"]) == pytest.approx(_file_accuracy(folder / name)), (model, name)
            assert int(row["n"]) == (len(ROWS_B) if name == "105_persuasion.txt" else len(PASSAGES))
    assert {int(by_file[("gpt4", n)]["book_id"]) for n in (CEDARS, CHESNUTT)} == set(tags)
    # the folders again: nothing new, and each file's answers are where they were
    assert main(["cloze", "import", str(project.path), "--model-label", "gpt4", str(gpt4)]) == 0
    assert "Nothing new" in capsys.readouterr().out and _counts(project)["responses"] == 24
    # the methods text says that the work is counted once per file
    from workbench.export.methods import methods_text

    ids = ", ".join(str(b) for b in sorted(tags))
    assert methods_text(project).count(f"- **Same work, 2 books:** Gutenberg 472 (books {ids}): each results file") == 2


def test_a_second_file_of_a_work_imported_later_gets_its_own_book(tmp_path, project):
    """Files imported one at a time: the second file of the work, found only by its Gutenberg number, does
    not take over the book whose answers came from the first file."""
    first = import_gpt4books(project, [write_tsv(tmp_path / CEDARS, _answered(["Rena"] * 5))], "gpt4")
    second = import_gpt4books(project, [write_tsv(tmp_path / CHESNUTT, _answered(["Nobody"] * 5))], "gpt4")
    assert second.loc[0, "book_id"] != first.loc[0, "book_id"] and second.loc[0, "new_book"]
    assert second.loc[0, "same_work_as"] == first.loc[0, "book_id"]
    table = book_accuracy(project, "gpt4").set_index("book_id")
    assert table.loc[first.loc[0, "book_id"], "accuracy"] == 0.4  # Rena twice out of five: its own answers kept
    assert table.loc[second.loc[0, "book_id"], "accuracy"] == 0.0
    # another model's copy of the first file still finds the first book (a Gutenberg number, the same file)
    (tmp_path / "other").mkdir()
    other = import_gpt4books(project, [write_tsv(tmp_path / "other" / CEDARS, _answered(["Rena"] * 5))], "chatgpt")
    assert other.loc[0, "book_id"] == first.loc[0, "book_id"]


def test_files_with_one_stem_in_one_import_are_two_books(tmp_path, project):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    files = [write_tsv(tmp_path / "a" / "b07.tsv", ROWS_A), write_tsv(tmp_path / "b" / "b07.txt", ROWS_B)]
    summary = import_gpt4books(project, files, "published")
    assert summary["book_id"].nunique() == 2 and list(summary["correct"]) == [2, 1]
    again = import_gpt4books(project, files, "published")
    assert list(again["book_id"]) == list(summary["book_id"]) and not again["added"].any()


def test_a_folder_stands_for_its_results_files_and_a_folder_of_folders_is_explained(tmp_path, project):
    from workbench.probes.cloze.gpt4books import results_paths

    folder = tmp_path / "model_output"
    (folder / "gpt4_results").mkdir(parents=True)
    write_tsv(folder / "gpt4_results" / "b.txt", ROWS_B)
    write_tsv(folder / "gpt4_results" / "a.tsv", ROWS_A)
    (folder / "gpt4_results" / ".hidden.tsv").write_text("x", encoding="utf-8")
    (folder / "README.md").write_text("about the folders", encoding="utf-8")
    assert [p.name for p in results_paths([folder / "gpt4_results"])] == ["a.tsv", "b.txt"]
    with pytest.raises(UserError, match="holds no results files .* the folders gpt4_results: import each"):
        import_gpt4books(project, [folder], "gpt4")
    with pytest.raises(UserError, match="There is no file or folder"):
        import_gpt4books(project, [tmp_path / "missing"], "gpt4")


# ---------------------------------------------------------------------------------------------- books made by an import
@pytest.mark.parametrize("stem, title, author, number", [
    ("austen_pride_and_prejudice_Pride_and_Prejudice", "Pride and Prejudice", "Austen", None),
    ("1342_pride_and_prejudice", "Pride and Prejudice", "", 1342),
    ("pg1342", "", "", 1342),
    ("1342-0", "", "", 1342),
    ("84_frankenstein_or_the_modern_prometheus", "Frankenstein or the Modern Prometheus", "", 84),
    ("conan_doyle_the_hound_of_the_baskervilles_The_Hound_of_the_Baskervilles", "The Hound of the Baskervilles",
     "Conan Doyle", None),
    ("dickens_a_tale_of_two_cities_A_Tale_of_Two_Cities", "A Tale of Two Cities", "Dickens", None),
    ("b01", "", "", None),
    ("unknown_book", "", "", None),
    ("smith_the_end", "", "", None),  # no published form of the title: nothing is guessed
    # the published files' other names: a slug that does not spell the title (a collection, a word left out)
    ("butler_seed_to_harvest_Wild_Seed", "Wild Seed", "Butler", None),
    ("alvarez_in_the_time_of_butterflies_In_the_Time_of_the_Butterflies", "In the Time of the Butterflies",
     "Alvarez", None),
    ("orwell_1984_1984", "1984", "Orwell", None),
    ("lawrence_three_complete_novels_Lady_Chatterley_s_Lover", "Lady Chatterley's Lover", "Lawrence", None),
    ("clarke_jonathan_strange_and_mr_norrell_Jonathan_Strange___Mr_Norrell", "Jonathan Strange & Mr Norrell",
     "Clarke", None),
    ("hawkins_the_girl_on_the_train_The_Girl_on_the_Train__trade_paperback_",
     "The Girl on the Train (trade paperback)", "Hawkins", None),
    ("wilson_our_nig_gutenberg_pg584_Our_Nig", "Our Nig", "Wilson", 584),
    ("rowling_harry_potter_and_the_sorcerers_stone_Harry_Potter_and_the_Sorcerer_s_Stone",
     "Harry Potter and the Sorcerer's Stone", "Rowling", None),
    ("card_enders_game_Ender_s_Game", "Ender's Game", "Card", None),
    ("wesley_aint_nobodys_business_if_i_do_Ain_t_Nobody_s_Business_If_I_Do", "Ain't Nobody's Business If I Do",
     "Wesley", None),
    ("toomer_cane_gutenberg_60093-0_Cane", "Cane", "Toomer", 60093),
])
def test_a_results_file_name_gives_title_author_and_gutenberg_number(stem, title, author, number):
    from workbench.probes.cloze.gpt4books import ReadableId, readable_id

    assert readable_id(stem) == ReadableId(title, author, number)


def test_books_made_by_an_import_are_readable_and_marked_as_without_text(tmp_path, project):
    from workbench.corpus.library import get_book

    files = [write_tsv(tmp_path / "austen_pride_and_prejudice_Pride_and_Prejudice.txt", ROWS_A),
             write_tsv(tmp_path / "1342_pride_and_prejudice.txt", ROWS_B)]
    summary = import_gpt4books(project, files, "published")
    austen, gutenberg = (get_book(project, int(i)) for i in summary["book_id"])
    assert (austen.title, austen.author, austen.external_id, austen.source_kind) == (
        "Pride and Prejudice", "Austen", "austen_pride_and_prejudice_Pride_and_Prejudice", "external")
    assert (gutenberg.title, gutenberg.external_id, gutenberg.id_label) == ("Pride and Prejudice", "1342",
                                                                             "Gutenberg number")
    assert austen.id_label == "Imported as" and austen.source_name == files[0].name
    assert not austen.has_text and not gutenberg.has_text
    assert list(summary["book"]) == ["Pride and Prejudice", "Pride and Prejudice"]
    # found again by the Gutenberg number, whichever form the next file's name takes
    again = import_gpt4books(project, [write_tsv(tmp_path / "pg1342.tsv", ROWS_B)], "other-model")
    assert again.loc[0, "book_id"] == gutenberg.id and not again.loc[0, "new_book"]


def test_a_metadata_table_fills_in_books_made_by_an_import(tmp_path, project):
    from workbench.corpus.importer import import_paths
    from workbench.corpus.library import get_book

    files = [write_tsv(tmp_path / "austen_pride_and_prejudice_Pride_and_Prejudice.txt", ROWS_A),
             write_tsv(tmp_path / "1342_pride_and_prejudice.txt", ROWS_B),
             write_tsv(tmp_path / "b07.tsv", ROWS_B),
             write_tsv(tmp_path / "dickens_2_cities_2_Cities.tsv", ROWS_A)]
    ids = [int(i) for i in import_gpt4books(project, files, "published")["book_id"]]
    table = tmp_path / "metadata.csv"
    table.write_text(
        "file,external_id,gutenberg_id,title,author,year,genre\n"
        "austen_pride_and_prejudice_Pride_and_Prejudice.txt,,,Pride and Prejudice,Jane Austen,1813,romance\n"
        ",,1342,Pride and Prejudice (Gutenberg),Jane Austen,1813,romance\n"
        ",b07,,The Seventh Book,Anon,1901,\n"
        ",,2,A Different Book,Someone,1700,\n",  # Gutenberg 2: not the dickens_2_cities file
        encoding="utf-8")
    report = import_paths(project, [], metadata_csv=table)
    books = [get_book(project, i) for i in ids]
    assert [(b.title, b.author, b.year) for b in books[:3]] == [
        ("Pride and Prejudice", "Jane Austen", 1813), ("Pride and Prejudice (Gutenberg)", "Jane Austen", 1813),
        ("The Seventh Book", "Anon", 1901)]
    assert books[0].tags == {"genre": "romance"} and books[3].title == "2 Cities"
    assert sorted(report.updated) == ids[:3]
    assert any("line 5" in note and "matched no book" in note for note in report.notes)


def test_the_methods_record_names_the_files_of_an_import(tmp_path, project):
    from workbench.export.methods import methods_record, methods_text

    import_gpt4books(project, _files(tmp_path / "published", 3), "gpt4")
    [run] = methods_record(project)["runs"]
    assert run["cloze"]["imported_files"] == [{"file": f"b0{i}.tsv", "rows": 5} for i in (1, 2, 3)]
    assert "- **Passages:** 15 from 3 books, 15 of them imported (from 3 files in published/)." in methods_text(project)


def test_the_summary_says_what_an_import_added(tmp_path, project):
    from workbench.probes.cloze.gpt4books import import_summary_text

    files = _files(tmp_path / "gpt4", 3)
    first = import_gpt4books(project, files[:2], "gpt4")
    assert import_summary_text(first, "gpt4") == (
        "Imported 10 answers for 2 book(s) under 'gpt4' (run 1). 2 book(s) were not in the library and were added "
        "from their file names, without text (a metadata table can fill in their titles, authors and years).")
    more = import_gpt4books(project, files, "gpt4")
    assert list(more["added"]) == [False, False, True]
    assert import_summary_text(more, "gpt4").startswith(
        "Imported 5 answers for 1 book(s) under 'gpt4' (run 2). 2 file(s) had been imported before and added nothing.")
    again = import_gpt4books(project, files, "gpt4")
    assert import_summary_text(again, "gpt4") == (
        "Nothing new: these 3 files were imported before under 'gpt4', so nothing was added.")
