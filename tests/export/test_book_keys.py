"""Every CSV a registered table or chart writes names its books by a stable key beside the title: the project's
book id and where the book came from (file name, external id), since two books can share a title."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.fixtures.every_probe import project_with_every_probe
from workbench.corpus.book_keys import KEY_COLUMNS, title_column, with_book_keys
from workbench.export.registry import charts, export_chart, export_table, tables

#: what has no rows in the fixture project (nothing there to count), and why that is fine
EMPTY_HERE = {
    "cloze-extractions": "no book was extracted (imported passages only); its frame has book_id and title",
    "decop-accuracy": "no DE-COP run; its frame has book and book_id",
    "decop-decision": "no DE-COP run; its rows are models, not books",
    "annotation-adjudications": "no disputed item was settled; it names items, not books",
    "rep-shares": "REP rows are models, roles and decades, not books",
    "rep-spread": "REP", "rep-tests": "REP", "rep-trends": "REP",
    "rep-decade-shares": "REP", "rep-heatmap": "REP",
}


@pytest.fixture
def every_probe(project, tmp_path):
    return project, project_with_every_probe(project, tmp_path / "inputs")


def _book_rows(project) -> dict[int, tuple]:
    return {r[0]: r[1:] for r in project.db.execute("SELECT id, source_name, external_id FROM books")}


def _check_written(project, name: str, frame: pd.DataFrame, written: pd.DataFrame) -> None:
    """A written CSV of a frame that names books: title, then book_id, book_source and book_external_id, the
    sources those of the library's book of that id."""
    title = title_column(written)
    assert title is not None, f"{name}: the CSV has no title column"
    columns = list(written.columns)
    at = columns.index(title)
    assert columns[at + 1 : at + 4] == list(KEY_COLUMNS), f"{name}: {columns}"
    books = _book_rows(project)
    known = written[written["book_id"].notna()]
    assert len(known), f"{name}: no row names a book"
    for book_id, source, external in known[list(KEY_COLUMNS)].itertuples(index=False):
        expected = books[int(book_id)]
        assert (None if pd.isna(source) else str(source), None if pd.isna(external) else str(external)) == expected, name
    assert len(written) == len(frame)


# (no "table" in a test's name: its temporary folder holds a local n-gram index, and the infini-gram engine
# crashes on an index whose path contains that word)
def test_every_registered_frame_writes_book_keys_beside_the_title(every_probe, tmp_path):
    project, options = every_probe
    specs = [("table", name, spec) for name, spec in tables().items()]
    specs += [("chart", name, spec) for name, spec in charts().items()]
    checked = []
    for kind, name, spec in specs:
        frame = spec.frame(project, **options.get(name, {}))
        if title_column(frame) is not None:
            assert "book_id" in frame.columns, f"the {kind} {name} names books by title only: {list(frame.columns)}"
        if frame.empty:
            assert name in EMPTY_HERE, f"the {kind} {name} has no rows in the fixture project: give it some"
            continue
        if "book_id" not in frame.columns:
            continue
        out = tmp_path / kind / f"{name}.{'csv' if kind == 'table' else 'svg'}"
        out.parent.mkdir(exist_ok=True)
        if kind == "table":
            written = export_table(project, name, out, **options.get(name, {}))
        else:
            written = export_chart(project, name, out, **options.get(name, {}))[1]
        _check_written(project, name, frame, pd.read_csv(written, dtype={"book_source": str,
                                                                          "book_external_id": str}))
        checked.append((kind, name))
    # the tables and charts with per-book rows, all of them checked on rows (a new one joins this list)
    assert sorted(checked) == sorted(
        [("table", n) for n in ("annotation-items", "continuation-books", "continuation-passages", "cloze-book-accuracy", "cloze-error-names", "cloze-frequent-name",
                                "exposure-report",
                                "cloze-models-table", "cloze-passage-results",
                                "cloze-passages", "leakage-frequency", "leakage-overlap", "membership-scores",
                                "reading-answers", "reading-scene-sets", "validity-answers", "validity-passages",
                                "validity-unparsed")]
        + [("chart", n) for n in ("continuation-lengths", "continuation-ranked", "cloze-accuracy", "cloze-models", "cloze-year", "leakage-frequency", "leakage-overlap",
                                  "leakage-overlap-frequency", "membership-scores", "validity-narrative-time",
                                  "validity-year-error")])


def test_two_books_with_one_title_are_told_apart_in_the_accuracy_csv(every_probe, tmp_path):
    """The fixture's two files of one Gutenberg work, one title: two rows, two ids, two result files."""
    project, _ = every_probe
    written = pd.read_csv(export_table(project, "cloze-book-accuracy", tmp_path / "a.csv", model="gpt4"),
                          dtype={"book_external_id": str})
    tags = project.db.execute("SELECT book_id, value FROM book_tags WHERE key = 'same_work'").fetchall()
    assert len(tags) == 2 and len({v for _, v in tags}) == 1 and tags[0][1].startswith("Gutenberg ")
    twins = written[written["book_id"].isin([b for b, _ in tags])]
    assert len(twins) == 2 and twins["book"].nunique() == 1
    sources = sorted(twins["book_source"])
    assert sources[1].startswith("someone_") and sources[0].split("_")[0] == tags[0][1].split()[1]


def test_the_keys_come_from_the_book_id_and_a_frame_without_one_is_left_alone(project):
    from tests.fixtures.cloze_texts import add_book, novel

    first = add_book(project, novel(2), "one.txt", title="Same Title", external_id="11")
    second = add_book(project, novel(3), "two.txt", title="Same Title")
    frame = pd.DataFrame({"passage_id": [1, 2, 3], "book_id": [second, None, first], "n": [4, 5, 6]})
    keyed = with_book_keys(project, frame)
    assert list(keyed.columns) == ["passage_id", "book", "book_id", "book_source", "book_external_id", "n"]
    assert keyed["book"].tolist()[0::2] == ["Same Title", "Same Title"] and pd.isna(keyed["book"][1])
    assert keyed["book_source"].tolist()[0::2] == ["two.txt", "one.txt"]
    assert keyed["book_external_id"].tolist()[2] == "11" and list(frame.columns) == ["passage_id", "book_id", "n"]
    untitled = pd.DataFrame({"model": ["m"], "rho": [0.5]})
    assert with_book_keys(project, untitled) is untitled
