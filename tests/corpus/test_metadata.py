"""Metadata tables: matched by file name or number, extra columns kept as tags, problems named plainly."""

import pytest

from tests.fixtures.books import gutenberg_text, novel_text
from workbench.corpus.importer import import_paths
from workbench.corpus.library import get_book, list_books
from workbench.corpus.metadata import read_metadata_csv
from workbench.errors import UserError


@pytest.fixture
def two_books(tmp_path):
    folder = tmp_path / "books"
    folder.mkdir()
    (folder / "pg4242.txt").write_text(gutenberg_text(novel_text(31), number=4242), encoding="utf-8")
    (folder / "the-orchard.txt").write_text(novel_text(32), encoding="utf-8")
    return folder


def write_csv(tmp_path, text, name="meta.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_rows_match_by_file_name_without_extension_and_by_gutenberg_id(project, tmp_path, two_books):
    csv = write_csv(tmp_path, "file,gutenberg_id,title,author,year,genre,decade\n"
                              ",4242,The Lantern Road (1st ed.),A. Merriweather,1851,gothic,1850s\n"
                              "the-orchard,,The Orchard,H. Vale,1899,pastoral,1890s\n")
    report = import_paths(project, [two_books], metadata_csv=csv)
    books = {b.source_name: b for b in list_books(project)}
    lantern, orchard = books["pg4242.txt"], books["the-orchard.txt"]
    assert (lantern.title, lantern.author, lantern.year, lantern.tags) == (
        "The Lantern Road (1st ed.)", "A. Merriweather", 1851, {"genre": "gothic", "decade": "1850s"})
    assert (orchard.title, orchard.year, orchard.tags["genre"]) == ("The Orchard", 1899, "pastoral")
    assert any("genre, decade are kept as tags" in note for note in report.notes)


def test_a_table_without_a_column_to_match_is_refused_before_anything_is_imported(project, tmp_path, two_books):
    csv = write_csv(tmp_path, "title,author,year\nThe Orchard,H. Vale,1899\n", name="authors.csv")
    with pytest.raises(UserError) as info:
        import_paths(project, [two_books], metadata_csv=csv)
    message = str(info.value)
    assert "authors.csv" in message and "'file'" in message and "gutenberg_id" in message
    assert "title, author, year" in message
    assert list_books(project) == []


def test_a_bad_year_is_left_empty_with_a_note(project, tmp_path, two_books):
    csv = write_csv(tmp_path, "file,year\nthe-orchard.txt,about 1890\n")
    report = import_paths(project, [two_books], metadata_csv=csv)
    orchard = next(b for b in list_books(project) if b.source_name == "the-orchard.txt")
    assert orchard.year is None
    assert any("'about 1890' is not a year" in note and "meta.csv" in note for note in report.notes)


def test_missing_and_extra_columns_and_unmatched_rows_are_explained(tmp_path):
    csv = write_csv(tmp_path, "file,genre\na.txt,gothic,EXTRA\nnowhere.txt,sea\n")
    table = read_metadata_csv(csv)
    notes = " ".join(table.notes)
    assert "no title, author, year column" in notes
    assert "line(s) 2 have more values than there are columns" in notes
    assert table.match(source_name="a.txt").values == {"file": "a.txt", "genre": "gothic"}
    assert [r.line for r in table.unmatched_rows()] == [3]


def test_semicolons_and_tabs_are_recognised(tmp_path):
    semi = read_metadata_csv(write_csv(tmp_path, "file;title\nx.txt;Ex\n", name="semi.csv"))
    tabs = read_metadata_csv(write_csv(tmp_path, "file\ttitle\ny.txt\tWhy\n", name="tabs.tsv"))
    assert semi.match(source_name="x.txt").values["title"] == "Ex"
    assert tabs.match(source_name="y").values["title"] == "Why"


def test_an_empty_table_is_refused_naming_it(tmp_path):
    with pytest.raises(UserError, match="nothing.csv is empty"):
        read_metadata_csv(write_csv(tmp_path, "", name="nothing.csv"))


def test_a_table_alone_updates_the_books_already_in_the_library(project, tmp_path, two_books):
    import_paths(project, [two_books])
    orchard = next(b for b in list_books(project) if b.source_name == "the-orchard.txt")
    csv = write_csv(tmp_path, f"id,year,tags\n{orchard.id},1899,genre=pastoral; source=library\n")
    report = import_paths(project, [], metadata_csv=csv)
    assert report.updated == [orchard.id] and not report.added
    updated = get_book(project, orchard.id)
    assert updated.year == 1899 and updated.tags == {"genre": "pastoral", "source": "library"}


def test_reimporting_with_a_table_updates_the_duplicates(project, tmp_path, two_books):
    import_paths(project, [two_books])
    csv = write_csv(tmp_path, "gutenberg_id,category\n4242,obscure\n")
    report = import_paths(project, [two_books], metadata_csv=csv)
    assert len(report.duplicates) == 2 and not report.added
    lantern = next(b for b in list_books(project) if b.external_id == "4242")
    assert report.updated == [lantern.id] and lantern.tags == {"category": "obscure"}


UNCLOSED_TO_THE_END = (
    "file,title,author,year\n"
    "pg4242.txt,The Lantern Road,A. Merriweather,1851\n"
    'the-orchard.txt,"The Orchard,H. Vale,1899\n'
    "third.txt,The Third Book,C. Nobody,1900\n"
)
UNCLOSED_UNTIL_A_LATER_QUOTE = (
    "file,title,author,year\n"
    'the-orchard.txt,"The Orchard,H. Vale,1899\n'
    "third.txt,The Third Book,C. Nobody,1900\n"
    'fourth.txt,"Fourth, Revised",D. Nobody,1901\n'
)


@pytest.mark.parametrize("text", [UNCLOSED_TO_THE_END, UNCLOSED_UNTIL_A_LATER_QUOTE], ids=["to-the-end", "until-a-later-quote"])
def test_an_unclosed_quote_is_refused_naming_its_line_and_imports_nothing(project, tmp_path, two_books, text):
    csv = write_csv(tmp_path, text, name="titles.csv")
    line = 3 if text is UNCLOSED_TO_THE_END else 2
    with pytest.raises(UserError) as info:
        import_paths(project, [two_books], metadata_csv=csv)
    message = str(info.value)
    assert message.startswith(f"titles.csv line {line}: a quotation mark opens a cell that is not closed on that line")
    assert "so everything up to line 4 would be read into that one cell" in message
    assert list_books(project) == []


def test_an_unclosed_quote_on_the_last_line_is_refused(tmp_path):
    csv = write_csv(tmp_path, 'file,title,author\na.txt,"Unfinished,B. Writer\n', name="last.csv")
    with pytest.raises(UserError, match="last.csv line 2: a quotation mark opens a cell"):
        read_metadata_csv(csv)


def test_quoted_commas_and_doubled_quotes_stay_inside_their_cell(tmp_path):
    csv = write_csv(tmp_path, 'file,title,author\na.txt,"Ships, Sails and ""Wind""",B. Writer\nb.txt,Plain,C\n')
    table = read_metadata_csv(csv)
    assert table.match(source_name="a.txt").values["title"] == 'Ships, Sails and "Wind"'
    assert [row.line for row in table.rows] == [2, 3]


def test_a_quoted_cell_after_a_comma_and_a_space_stays_whole(tmp_path):
    csv = write_csv(tmp_path, 'file, title, author\na.txt, "Ships, Sails", B. Writer\nb.txt, "Plain", C\n')
    assert read_metadata_csv(csv).match(source_name="a.txt").values["title"] == "Ships, Sails"


def test_nul_and_other_control_characters_never_reach_titles_or_tags(project, tmp_path, two_books):
    path = tmp_path / "damaged.csv"
    note = b"a long note about the edition, " * 200  # a few stray bytes in a table of ordinary length
    path.write_bytes(b"file,title,genre,decade,note\nthe-orchard,The Orch\x00ard,goth\x00ic\x07,1890s\x00," + note + b"\n")
    import_paths(project, [two_books], metadata_csv=path)
    orchard = next(b for b in list_books(project) if b.source_name == "the-orchard.txt")
    assert (orchard.title, orchard.tags["genre"], orchard.tags["decade"]) == ("The Orchard", "gothic", "1890s")
    stored = project.db.execute("SELECT group_concat(value, '|') FROM book_tags").fetchone()[0]
    assert "\x00" not in stored and "\x07" not in stored


@pytest.mark.parametrize(("written", "year"), [("1847", 1847), ("1847.0", 1847), ("750 BCE", -750), ("750 B.C.", -750),
                                               ("-5", None), ("0", None), ("2999", None), ("-99999", None)])
def test_a_year_is_a_year_of_publication(project, tmp_path, two_books, written, year):
    csv = write_csv(tmp_path, f"file,year\nthe-orchard.txt,{written}\n")
    report = import_paths(project, [two_books], metadata_csv=csv)
    orchard = next(b for b in list_books(project) if b.source_name == "the-orchard.txt")
    assert orchard.year == year
    if year is None:
        assert any(f"'{written}' is not a year" in note for note in report.notes)


def test_a_bare_negative_year_says_how_to_write_one_before_the_common_era():
    from workbench.corpus.library import parse_year

    with pytest.raises(UserError) as caught:
        parse_year("-5")
    assert "750 BCE" in str(caught.value)
