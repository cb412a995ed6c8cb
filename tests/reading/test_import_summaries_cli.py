"""``palimpsest reading import-summaries``: a file whose rows cannot be used fails the command."""

import csv
import io

import pandas as pd

from tests.fixtures.annotation_data import add_book
from tests.fixtures.reading_books import named_story, summaries_csv
from workbench.cli import main
from workbench.project import Project


def _scenes(tmp_path, capsys):
    path = tmp_path / "reading.palimpsest"
    with Project.create(path) as project:
        book = add_book(project, "The Mill", "Someone", named_story(0))
    assert main(["reading", "scenes", str(path), "--book", str(book), "--words", "60", "--format", "csv"]) == 0
    scenes = len(pd.read_csv(io.StringIO(capsys.readouterr().out)))
    return path, book, scenes


def test_a_file_of_blank_summaries_fails_the_command_and_says_what_to_do(tmp_path, capsys):
    path, book, scenes = _scenes(tmp_path, capsys)
    blank = tmp_path / "blank.csv"
    with open(blank, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["scene", "summary", "false_summary"])
        writer.writerows([[scene, "", ""] for scene in range(scenes)])
    assert main(["reading", "import-summaries", str(path), "--book", str(book), str(blank)]) == 1
    err = capsys.readouterr().err
    assert f"{2 * scenes} summaries in blank.csv could not be used" in err and "import the file again" in err


def test_a_good_file_succeeds(tmp_path, capsys):
    path, book, scenes = _scenes(tmp_path, capsys)
    good = summaries_csv(tmp_path / "good.csv", scenes)
    assert main(["reading", "import-summaries", str(path), "--book", str(book), str(good)]) == 0
