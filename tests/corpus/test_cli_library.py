"""``palimpsest import / books / book / tag`` on a real project file."""

import csv
import io
import json
import subprocess
import sys

from tests.fixtures.books import gutenberg_text, novel_text
from workbench.cli import main
from workbench.corpus.library import books_frame
from workbench.project import Project


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "workbench", *map(str, args)], capture_output=True, text=True)


def make_project(tmp_path):
    path = tmp_path / "study.palimpsest"
    Project.create(path).close()
    return path


def test_import_then_list_books_as_csv_and_json(tmp_path, capsys):
    project = make_project(tmp_path)
    (tmp_path / "pg4242.txt").write_text(gutenberg_text(novel_text(101), number=4242))
    meta = tmp_path / "meta.csv"
    meta.write_text("file,year,genre\npg4242,1851,gothic\n")
    assert main(["import", str(project), str(tmp_path / "pg4242.txt"), "--metadata", str(meta)]) == 0
    assert "Added 1 book." in capsys.readouterr().out

    assert main(["books", str(project), "--format", "csv"]) == 0
    [row] = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {k: row[k] for k in ("id", "title", "author", "year", "tags")} == {
        "id": "1", "title": "The Lantern Road", "author": "Agnes Merriweather", "year": "1851", "tags": "genre=gothic"}
    assert int(row["words"]) > 100

    assert main(["books", str(project), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["external_id"] == "4242"


def test_importing_again_reports_the_duplicate_and_succeeds(tmp_path, capsys):
    project = make_project(tmp_path)
    (tmp_path / "a.txt").write_text(novel_text(102))
    main(["import", str(project), str(tmp_path / "a.txt")])
    capsys.readouterr()
    assert main(["import", str(project), str(tmp_path / "a.txt")]) == 0
    out = capsys.readouterr().out
    assert "No new books were added." in out and "1 book was already in the library" in out


def test_when_every_file_fails_the_exit_is_nonzero_and_each_is_named(tmp_path):
    project = make_project(tmp_path)
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "junk.txt").write_bytes(bytes(range(256)) * 20)
    result = run_cli("import", project, tmp_path / "empty.txt", tmp_path / "junk.txt")
    assert result.returncode == 1
    assert "empty.txt is empty" in result.stdout and "junk.txt does not look like a text file" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_a_bad_metadata_table_is_one_sentence_without_traceback(tmp_path):
    project = make_project(tmp_path)
    (tmp_path / "a.txt").write_text(novel_text(103))
    (tmp_path / "m.csv").write_text("title,author\nX,Y\n")
    result = run_cli("import", project, tmp_path / "a.txt", "--metadata", tmp_path / "m.csv")
    assert result.returncode == 1
    assert result.stderr.startswith("palimpsest: m.csv has no column to match")
    assert len(result.stderr.strip().splitlines()) == 1


def test_download_by_number_from_a_mirror(tmp_path, capsys, gutenberg_mirror):
    project = make_project(tmp_path)
    gutenberg_mirror.files["/files/11/11-0.txt"] = gutenberg_text(novel_text(104), title="Alice", number=11).encode()
    assert main(["import", str(project), "--gutenberg-id", "11", "--mirror", gutenberg_mirror.base_url]) == 0
    assert "Added 1 book." in capsys.readouterr().out


def test_tag_and_book_commands(tmp_path, capsys):
    project = make_project(tmp_path)
    (tmp_path / "a.txt").write_text(novel_text(105, chapters=4))
    main(["import", str(project), str(tmp_path / "a.txt")])
    assert main(["tag", str(project), "1", "genre=gothic", "decade=1890s"]) == 0
    assert main(["tag", str(project), "1", "--remove", "decade"]) == 0
    assert capsys.readouterr().out.strip().endswith("(a): genre=gothic.")
    assert main(["book", str(project), "1"]) == 0
    out = capsys.readouterr().out
    assert "Chapters detected:  4" in out and "Tags:               genre=gothic" in out
    assert main(["tag", str(project), "9", "a=b"]) == 1


def test_a_metadata_table_with_a_utf8_bom_and_invalid_bytes_is_one_sentence_and_imports_nothing(tmp_path):
    project = make_project(tmp_path)
    (tmp_path / "a.txt").write_text(novel_text(106))
    (tmp_path / "m.csv").write_bytes(b"\xef\xbb\xbffile,title\na.txt,Caf\xe9 Stories\n")
    result = run_cli("import", project, tmp_path / "a.txt", "--metadata", tmp_path / "m.csv")
    assert result.returncode == 1
    assert result.stderr.startswith("palimpsest: m.csv starts with a UTF-8 byte-order mark but is not all UTF-8")
    assert "line 2" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert run_cli("books", project).stdout.strip() == "(nothing yet)"


def test_import_takes_its_options_before_its_paths(tmp_path, capsys):
    project = make_project(tmp_path)
    (tmp_path / "a.txt").write_text(novel_text(107))
    (tmp_path / "b.txt").write_text(novel_text(108))
    meta = tmp_path / "m.csv"
    meta.write_text("file,title\na.txt,The First\nb.txt,The Second\n")
    assert main(["import", str(project), "--metadata", str(meta), str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]) == 0
    assert "Added 2 books." in capsys.readouterr().out
    assert main(["books", str(project), "--format", "csv"]) == 0
    assert [row["title"] for row in csv.DictReader(io.StringIO(capsys.readouterr().out))] == ["The First", "The Second"]


def test_books_known_only_from_imported_results_say_so_and_round_trip_as_metadata(tmp_path, capsys):
    project = make_project(tmp_path)
    results = tmp_path / "1342_pride_and_prejudice.txt"
    results.write_text("<name>Jane</name>\tJane\tElizabeth\tShe looked at [MASK] and smiled.\n", encoding="utf-8")
    assert main(["cloze", "import", str(project), str(results), "--model-label", "gpt4"]) == 0
    capsys.readouterr()
    assert main(["books", str(project)]) == 0
    listing = capsys.readouterr().out
    assert "Pride and Prejudice" in listing and "no text" in listing
    assert main(["book", str(project), "1"]) == 0
    details = capsys.readouterr().out
    assert "results only — no text" in details and "Gutenberg number:   1342" in details
    assert main(["books", str(project), "--format", "csv"]) == 0
    listed = capsys.readouterr().out
    [row] = list(csv.DictReader(io.StringIO(listed)))
    assert (row["words"], row["has_text"]) == ("", "False")  # missing, not 0
    # the listing, corrected in a spreadsheet, fills the book in (has_text is not taken for a tag)
    table = tmp_path / "books.csv"
    table.write_text(listed.replace("Pride and Prejudice", "Pride and Prejudice: A Novel"), encoding="utf-8")
    assert main(["import", str(project), "--metadata", str(table)]) == 0
    capsys.readouterr()
    with Project.open(project) as opened:
        book = books_frame(opened).iloc[0]
    assert (book["title"], book["tags"]) == ("Pride and Prejudice: A Novel", "")


def test_when_some_files_are_refused_the_others_are_imported_and_the_exit_is_nonzero(tmp_path, capsys):
    project = make_project(tmp_path)
    (tmp_path / "good.txt").write_text(novel_text(103))
    (tmp_path / "junk.txt").write_bytes(bytes(range(256)) * 20)
    assert main(["import", str(project), str(tmp_path / "good.txt"), str(tmp_path / "junk.txt")]) == 1
    captured = capsys.readouterr()
    assert "Added 1 book" in captured.out and "junk.txt does not look like a text file" in captured.out
    assert "1 file(s) could not be imported (listed above); the others were." in captured.err
    assert main(["books", str(project), "--format", "csv"]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 2
