"""A metadata table (CSV or TSV) for books: title, author, year, and any other column kept as a tag.

Rows are matched to books by one of these columns, first that the row fills wins:
``id``/``book_id`` (the book's number in this project, as ``palimpsest books`` lists it),
``external_id`` (the id a book was imported under, e.g. the stem of a published results file),
``gutenberg_id`` (the Project Gutenberg number), or ``file`` (the file name, with or without extension).
A book known only from imported results is found by its results file's name too (with or without
extension): ``austen_pride_and_prejudice_Pride_and_Prejudice.txt`` in the ``file`` column finds the
book imported from that file.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

from workbench.corpus.decode import decode_text
from workbench.corpus.library import parse_tags, parse_year
from workbench.errors import UserError
from workbench.tabular import records as table_records

BOOK_ID_COLUMNS = ("id", "book_id")
GUTENBERG_COLUMNS = ("gutenberg_id", "gutenberg", "pg_id", "ebook_id", "external_id")
FILE_COLUMNS = ("file", "filename", "file_name", "path", "source")
YEAR_COLUMNS = ("year", "first_published_year", "publication_year", "pub_year", "published")
FIELD_COLUMNS = ("title", "author", "language")
TAGS_COLUMN = "tags"  # 'genre=gothic; decade=1890s', as 'palimpsest books' writes it
# Columns that 'palimpsest books --format csv' writes but that are computed, not metadata.
IGNORED_COLUMNS = ("words", "added_at", "has_text")
MAX_CSV_BYTES = 50 * 1024 * 1024


@dataclass
class MetadataRow:
    line: int
    values: dict[str, str]  # non-empty cells, by normalised column name

    def get(self, names: tuple[str, ...]) -> str:
        return next((self.values[n] for n in names if self.values.get(n)), "")


@dataclass
class BookMetadata:
    """What one row says about a book, checked: fields to set, tags to add, problems found."""

    fields: dict[str, object] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def normalise_column(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", name.strip().lower())


def _file_keys(name: str) -> set[str]:
    base = re.split(r"[\\/]", name.strip())[-1].casefold()
    return {base, Path(base).stem} if base else set()


# An id that is a Project Gutenberg number: 1342, pg1342, 1342_pride_and_prejudice (not austen_2_cities).
GUTENBERG_ID = re.compile(r"(?:pg)?(\d+)(?:[_\-.].*)?", re.IGNORECASE)


def _gutenberg_key(value: str) -> str:
    """'1342', 'PG1342', '1342.0' (a spreadsheet's number) -> '1342'."""
    value = value.strip()
    if re.fullmatch(r"\d+\.0", value):
        value = value[:-2]
    match = re.search(r"\d+", value)
    return str(int(match.group(0))) if match else ""


@dataclass
class MetadataTable:
    name: str
    columns: list[str]
    rows: list[MetadataRow]
    notes: list[str] = field(default_factory=list)
    matched_lines: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._by_book_id: dict[int, MetadataRow] = {}
        self._by_gutenberg: dict[str, MetadataRow] = {}
        self._by_external: dict[str, MetadataRow] = {}
        self._by_file: dict[str, MetadataRow] = {}
        for row in self.rows:
            book_id = row.get(BOOK_ID_COLUMNS)
            if book_id.isdigit():
                self._by_book_id.setdefault(int(book_id), row)
            if row.values.get("external_id"):
                self._by_external.setdefault(row.values["external_id"].casefold(), row)
            gutenberg = row.get(GUTENBERG_COLUMNS)
            if gutenberg == row.values.get("external_id") and not GUTENBERG_ID.fullmatch(gutenberg):
                gutenberg = ""  # an imported id such as b07 or dickens_2_cities is no Gutenberg number
            gutenberg = _gutenberg_key(gutenberg)
            if gutenberg:
                self._by_gutenberg.setdefault(gutenberg, row)
            for key in _file_keys(row.get(FILE_COLUMNS)):
                self._by_file.setdefault(key, row)

    @property
    def tag_columns(self) -> list[str]:
        known = set(BOOK_ID_COLUMNS + GUTENBERG_COLUMNS + FILE_COLUMNS + YEAR_COLUMNS + FIELD_COLUMNS + IGNORED_COLUMNS)
        return [c for c in self.columns if c not in known and c != TAGS_COLUMN]

    def match(
        self, *, book_id: int | None = None, external_id: str | None = None, source_name: str | None = None
    ) -> MetadataRow | None:
        row = None
        if book_id is not None:
            row = self._by_book_id.get(book_id)
        if row is None and external_id:
            row = self._by_external.get(external_id.strip().casefold())
        if row is None and external_id and GUTENBERG_ID.fullmatch(external_id.strip()):
            row = self._by_gutenberg.get(_gutenberg_key(external_id))
        for name in (source_name, external_id):  # an imported book's id is its results file's stem
            if row is None and name:
                row = next((self._by_file[k] for k in sorted(_file_keys(name)) if k in self._by_file), None)
        if row is not None:
            self.matched_lines.add(row.line)
        return row

    def unmatched_rows(self) -> list[MetadataRow]:
        return [row for row in self.rows if row.line not in self.matched_lines]

    def describe(self, row: MetadataRow) -> str:
        label = row.get(FILE_COLUMNS) or row.get(GUTENBERG_COLUMNS) or row.get(BOOK_ID_COLUMNS) or row.get(("title",))
        return f"line {row.line} ({label})" if label else f"line {row.line}"

    def book_metadata(self, row: MetadataRow) -> BookMetadata:
        meta = BookMetadata()
        for name in FIELD_COLUMNS:
            if row.values.get(name):
                meta.fields[name] = row.values[name]
        year = row.get(YEAR_COLUMNS)
        if year:
            try:
                meta.fields["year"] = parse_year(year.removesuffix(".0"))
            except UserError:
                meta.notes.append(f"{self.name} {self.describe(row)}: '{year}' is not a year, so the year was left empty.")
        if row.values.get(TAGS_COLUMN):
            try:
                meta.tags.update(parse_tags(row.values[TAGS_COLUMN]))
            except UserError as exc:
                meta.notes.append(f"{self.name} {self.describe(row)}: {exc}")
        for column in self.tag_columns:
            if row.values.get(column):
                meta.tags[column] = row.values[column]
        return meta


def _sniff_format(sample: str, suffix: str) -> dict[str, object]:
    """The delimiter and spacing are guessed; quoting is always the spreadsheets' own. (The sniffer's
    guesses about quoting are often wrong: it turns off the doubled quotation marks with which every
    spreadsheet writes a quotation mark inside a quoted cell.)"""
    try:
        dialect = csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        return {"delimiter": "\t" if suffix == ".tsv" else ","}
    return {"delimiter": dialect.delimiter, "skipinitialspace": dialect.skipinitialspace}


def read_metadata_csv(path: str | Path) -> MetadataTable:
    path = Path(path)
    if not path.is_file():
        raise UserError(f"There is no metadata file at {path}. Check the name and try again.")
    if path.stat().st_size > MAX_CSV_BYTES:
        raise UserError(f"{path.name} is too large for a metadata table (over 50 MB). Check that it is the right file.")
    text = decode_text(path.read_bytes(), path.name)
    if not text.strip():
        raise UserError(f"{path.name} is empty. A metadata table needs a header line (file, title, author, year, …) and one line per book.")
    records = list(table_records(path.name, text, _sniff_format(text[:8192], path.suffix.lower())))
    _, header = records.pop(0)
    columns = [normalise_column(c) for c in header]
    expected = "'file' (the book's file name, e.g. pg1342.txt), 'gutenberg_id', or 'id' (the book's number in this project)"
    if not any(c in BOOK_ID_COLUMNS + GUTENBERG_COLUMNS + FILE_COLUMNS for c in columns):
        shown = ", ".join(c for c in header if c.strip()) or "none"
        raise UserError(
            f"{path.name} has no column to match its lines to books. Add a column {expected}. "
            f"Its columns are: {shown}."
        )
    blank = [i + 1 for i, c in enumerate(columns) if not c]
    duplicated = sorted({c for c in columns if c and columns.count(c) > 1})
    if duplicated:
        raise UserError(f"{path.name} has the column {', '.join(duplicated)} more than once. Keep one and import it again.")
    notes: list[str] = []
    rows: list[MetadataRow] = []
    too_long: list[int] = []
    for number, record in records:
        if not any(cell.strip() for cell in record):
            continue
        if len(record) > len(columns):
            too_long.append(number)
        values = {c: v.strip() for c, v in zip(columns, record) if c and v.strip()}
        rows.append(MetadataRow(number, values))
    table = MetadataTable(path.name, [c for c in columns if c], rows, notes)
    if not rows:
        notes.append(f"{path.name} has a header but no lines of metadata.")
    if blank:
        notes.append(f"{path.name}: column(s) {', '.join(map(str, blank))} have no name and were ignored.")
    if too_long:
        notes.append(
            f"{path.name}: line(s) {', '.join(map(str, too_long[:10]))} have more values than there are columns; "
            "the extra values were ignored (check for unquoted commas)."
        )
    missing = [name for name, aliases in (("title", ("title",)), ("author", ("author",)), ("year", YEAR_COLUMNS))
               if not any(a in columns for a in aliases)]
    if missing:
        notes.append(f"{path.name} has no {', '.join(missing)} column; those stay as read from the books.")
    if table.tag_columns:
        notes.append(f"{path.name}: column(s) {', '.join(table.tag_columns)} are kept as tags.")
    return table
