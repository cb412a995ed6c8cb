"""Reading CSV/TSV files made elsewhere: quotation marks as each kind of file uses them, and no row lost."""

from __future__ import annotations

import pandas as pd
import pytest

from workbench.errors import UserError
from workbench.tabular import read_rows

PASSAGES = ['"Come here,” she said. He came.', "An ordinary passage.", 'The third "passage".']


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def passages(path):
    _, rows = read_rows(path, ("book", "passage"))
    return [(row.line, row.values["book"], row.values["passage"]) for row in rows]


def test_a_tsv_from_another_program_keeps_its_quotation_marks_and_every_row(tmp_path):
    path = write(tmp_path / "passages.tsv", "book\tyear\tpassage\n"
                 + "".join(f"{book}\t1900\t{text}\n" for book, text in zip(("2_alpha", "5_beta", "9_gamma"), PASSAGES)))
    assert passages(path) == [(2, "2_alpha", PASSAGES[0]), (3, "5_beta", PASSAGES[1]), (4, "9_gamma", PASSAGES[2])]


def test_a_tsv_without_the_ending_is_read_the_same_way(tmp_path):
    path = write(tmp_path / "passages.txt", "book\tpassage\na\t\"Easily.” On one side.\nb\tPlain.\n")
    assert passages(path) == [(2, "a", '"Easily.” On one side.'), (3, "b", "Plain.")]


def test_a_tsv_written_by_pandas_is_unquoted_with_its_tabs_and_line_breaks(tmp_path):
    texts = PASSAGES + ["Two lines:\nthe second one.", "A tab\tinside."]
    path = tmp_path / "pandas.tsv"
    pd.DataFrame({"book": list("abcde"), "passage": texts}).to_csv(path, sep="\t", index=False)
    assert '"""Come here' in path.read_text(encoding="utf-8")  # pandas quoted the cell and doubled its quote
    assert [(book, text) for _, book, text in passages(path)] == list(zip("abcde", texts))
    assert [line for line, _, _ in passages(path)] == [2, 3, 4, 5, 7]


def test_a_csv_from_a_spreadsheet_keeps_commas_line_breaks_and_doubled_quotes(tmp_path):
    texts = PASSAGES + ["Two lines,\nthe second, with commas."]
    path = tmp_path / "excel.csv"
    pd.DataFrame({"book": list("abcd"), "passage": texts}).to_csv(path, index=False, lineterminator="\r\n")
    assert [(book, text.replace("\r\n", "\n")) for _, book, text in passages(path)] == list(zip("abcd", texts))


def test_a_quote_that_would_swallow_the_rows_after_it_is_refused_naming_its_line(tmp_path):
    # every cell looks as pandas writes it, yet the quote opened on line 2 closes only at the end of line 4
    path = write(tmp_path / "ambiguous.tsv", "book\tpassage\na\t\"Come here, she said.\nb\tPlain.\nc\tShe went.\"\n")
    with pytest.raises(UserError, match="ambiguous.tsv line 2: a quotation mark opens a cell that is not closed on "
                                        "that line, so everything up to line 4 would be read into that one cell"):
        read_rows(path, ("book", "passage"))


@pytest.mark.parametrize("text, where", [
    ('book,passage\na,"Come here," she said.\nb,Plain.\n', "line 2: a cell that begins with a quotation mark"),
    ('book,passage\na,"Come here, she said.\nb,Plain.\nc,"Quoted" again.\n', "lines 2 to 4: a cell that begins"),
    ('book,passage\na,Plain.\nb,"Never closed.\nc,Plain.\n', "line 3: a quotation mark opens a cell that is not closed"),
], ids=["text-after-the-closing-quote", "a-quote-running-on", "never-closed"])
def test_a_csv_that_breaks_the_quoting_rule_is_refused_naming_the_line(tmp_path, text, where):
    with pytest.raises(UserError, match=f"bad.csv {where}"):
        read_rows(write(tmp_path / "bad.csv", text), ("book", "passage"))
