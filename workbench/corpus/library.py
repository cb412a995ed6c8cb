"""Reading and editing the books in a project (the library). Importers live beside this module."""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

import pandas as pd

from workbench.errors import UserError

if TYPE_CHECKING:
    from workbench.project import Project

EDITABLE_FIELDS = ("title", "author", "year", "language")


@dataclass
class Book:
    id: int
    title: str
    author: str
    year: int | None
    language: str | None
    source_kind: str
    source_name: str | None
    external_id: str | None
    words: int
    added_at: str
    #: False for a book known only from imported results (``source_kind`` 'external'): it has no stored
    #: text, so nothing can be read, counted or extracted from it; its results are analysed like any other.
    has_text: bool = True
    tags: dict[str, str] = field(default_factory=dict)

    @property
    def display_name(self) -> str:
        return self.title or self.external_id or f"Book {self.id}"

    @property
    def id_label(self) -> str:
        """What ``external_id`` is: a Gutenberg number, or the id results were imported under."""
        if self.has_text or (self.external_id or "").isdigit():
            return "Gutenberg number"
        return "Imported as"


RESULTS_ONLY = "results only — no text"
RESULTS_ONLY_HINT = ("Known only from imported results: there is no text to read, count or take passages from. "
                     "Import the book's text to use it with the other probes; a metadata table (Import → "
                     "Metadata table) can fill in its title, author, year and tags.")


def _tags_for(project: "Project", book_ids: Iterable[int] | None = None) -> dict[int, dict[str, str]]:
    sql = "SELECT book_id, key, value FROM book_tags"
    params: list = []
    if book_ids is not None:
        ids = list(book_ids)
        sql += f" WHERE book_id IN ({','.join('?' * len(ids))})"
        params = ids
    tags: dict[int, dict[str, str]] = {}
    for book_id, key, value in project.db.execute(sql + " ORDER BY key", params).fetchall():
        tags.setdefault(book_id, {})[key] = value
    return tags


# whether the text is stored is read from book_texts itself (its key only, never the text)
_BOOK_COLUMNS = ("id, title, author, year, language, source_kind, source_name, external_id, words, added_at,"
                 " EXISTS (SELECT 1 FROM book_texts t WHERE t.book_id = books.id)")


def _book(row: tuple, tags: dict[str, str]) -> Book:
    return Book(*row[:-1], has_text=bool(row[-1]), tags=tags)


def list_books(project: "Project") -> list[Book]:
    rows = project.db.execute(f"SELECT {_BOOK_COLUMNS} FROM books ORDER BY id").fetchall()
    tags = _tags_for(project)
    return [_book(row, tags.get(row[0], {})) for row in rows]


def get_book(project: "Project", book_id: int) -> Book:
    row = project.db.execute(f"SELECT {_BOOK_COLUMNS} FROM books WHERE id = ?", [book_id]).fetchone()
    if row is None:
        raise UserError(f"There is no book with id {book_id} in this project. 'palimpsest books' lists them.")
    return _book(row, _tags_for(project, [book_id]).get(book_id, {}))


def book_text(project: "Project", book_id: int) -> str:
    row = project.db.execute("SELECT text FROM book_texts WHERE book_id = ?", [book_id]).fetchone()
    if row is None:
        raise UserError(f"Book {book_id} has no stored text: it is known only from imported results. Import the "
                        "book's text to read it.")
    return row[0]


def book_preview(text: str, chars: int = 6000) -> str:
    """The beginning of a text for reading on screen: lines hard-wrapped inside a paragraph (as in
    Project Gutenberg files) are joined so the viewer can wrap them; short lines (verse, headings) stay."""
    paragraphs = []
    for block in re.split(r"\n[ \t]*\n", text[: chars * 2].strip("\n")):
        lines = [line.strip() for line in block.split("\n") if line.strip()]
        if not lines:
            continue
        prose = len(lines) > 1 and sum(len(line) >= 50 for line in lines[:-1]) >= (len(lines) - 1) * 0.75
        paragraphs.append(" ".join(lines) if prose else "\n".join(lines))
        if sum(len(p) for p in paragraphs) >= chars:
            break
    return "\n\n".join(paragraphs)[:chars]


def format_tags(tags: dict[str, str]) -> str:
    return "; ".join(f"{k}={v}" if v != "" else k for k, v in sorted(tags.items()))


def parse_tags(text: str) -> dict[str, str]:
    """'genre=gothic; decade=1890s' -> {'genre': 'gothic', 'decade': '1890s'}."""
    tags: dict[str, str] = {}
    for part in text.replace(",", ";").split(";"):
        part = part.strip()
        if not part:
            continue
        key, _, value = part.partition("=")
        key = key.strip()
        if not key:
            raise UserError(f"'{part}' is not a tag: write it as name=value, e.g. genre=gothic.")
        tags[key] = value.strip()
    return tags


def books_frame(project: "Project", *, expand_tags: bool = False) -> pd.DataFrame:
    """One row per book: id, title, author, year, words, tags (and each tag as a column if asked), language,
    source, external id and ``has_text`` (False for a book known only from imported results: its words
    are missing, not 0)."""
    books = list_books(project)
    frame = pd.DataFrame(
        [
            {
                "id": b.id,
                "title": b.title,
                "author": b.author,
                "year": b.year,
                "words": b.words if b.has_text else None,
                "tags": format_tags(b.tags),
                "language": b.language,
                "source": b.source_name,
                "external_id": b.external_id,
                "has_text": b.has_text,
            }
            for b in books
        ],
        columns=["id", "title", "author", "year", "words", "tags", "language", "source", "external_id", "has_text"],
    )
    frame["year"] = frame["year"].astype("Int64")
    frame["words"] = frame["words"].astype("Int64")
    frame["has_text"] = frame["has_text"].astype(bool)
    if expand_tags:
        keys = sorted({k for b in books for k in b.tags})
        for key in keys:
            frame[key] = [b.tags.get(key) for b in books]
    return frame


def update_book(project: "Project", book_id: int, **fields) -> None:
    """Edit title, author, year or language. Year must be a whole number or empty."""
    unknown = set(fields) - set(EDITABLE_FIELDS)
    if unknown:
        raise UserError(f"These fields cannot be edited: {', '.join(sorted(unknown))}.")
    if "year" in fields:
        fields["year"] = parse_year(fields["year"])
    fields = {k: clean_field(v) if isinstance(v, str) else v for k, v in fields.items()}
    get_book(project, book_id)
    with project.db.transaction():
        project.db["books"].update(book_id, fields)


_BEFORE_COMMON_ERA = re.compile(r"^(\d{1,4})\s*(?:BCE|B\.?\s?C\.?(?:E\.?)?)$", re.IGNORECASE)
OLDEST_YEAR = -3000


def parse_year(value) -> int | None:
    """A year of publication: a whole number from 1 to next year, or a year before the common era written as
    such ('750 BCE', '750 BC', stored as -750). A bare negative number (-5) is refused: it is far more often
    a slip than a text of 5 BCE."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = str(value).strip()
    ancient = _BEFORE_COMMON_ERA.match(text)
    if ancient:
        year = -int(ancient.group(1))
        if year < OLDEST_YEAR or year == 0:
            raise UserError(f"'{text}' does not look like a year of publication.")
        return year
    try:
        year = int(text)
    except ValueError:
        raise UserError(f"'{value}' is not a year. Write a whole number such as 1847 (or 750 BCE), or leave it "
                        "empty.") from None
    latest = datetime.date.today().year + 1
    if not 1 <= year <= latest:
        hint = " For a text from before the common era, write it as 750 BCE." if year <= 0 else ""
        raise UserError(f"{year} does not look like a year of publication: use a year from 1 to {latest}.{hint}")
    return year


_CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean_field(text: str) -> str:
    """A title, author or tag value without the control characters (NUL …) that damaged files carry: they
    cannot be seen, break exports, and make two equal-looking values differ."""
    return _CONTROL_CHARACTERS.sub("", str(text)).replace("\t", " ").replace("\r", " ").replace("\n", " ").strip()


def set_tags(project: "Project", book_id: int, tags: dict[str, str], *, replace: bool = False) -> None:
    get_book(project, book_id)
    with project.db.transaction():
        if replace:
            project.db.execute("DELETE FROM book_tags WHERE book_id = ?", [book_id])
        for key, value in tags.items():
            project.db.execute(
                "INSERT INTO book_tags (book_id, key, value) VALUES (?, ?, ?) "
                "ON CONFLICT(book_id, key) DO UPDATE SET value = excluded.value",
                [book_id, clean_field(key), clean_field(value)],
            )


def remove_tags(project: "Project", book_id: int, keys: Iterable[str]) -> None:
    get_book(project, book_id)
    with project.db.transaction():
        project.db.conn.executemany("DELETE FROM book_tags WHERE book_id = ? AND key = ?", [(book_id, k) for k in keys])


def delete_books(project: "Project", book_ids: Iterable[int]) -> int:
    ids = list(book_ids)
    with project.db.transaction():
        cur = project.db.execute(f"DELETE FROM books WHERE id IN ({','.join('?' * len(ids))})", ids)
    return cur.rowcount


def tag_values(project: "Project", key: str) -> list[str]:
    rows = project.db.execute("SELECT DISTINCT value FROM book_tags WHERE key = ? ORDER BY value", [key])
    return [r[0] for r in rows.fetchall()]


def tag_keys(project: "Project") -> list[str]:
    return [r[0] for r in project.db.execute("SELECT DISTINCT key FROM book_tags ORDER BY key").fetchall()]


def books_matching(project: "Project", tags: dict[str, str]) -> list[int]:
    """Ids of the books that carry every ``key=value`` in ``tags`` (a bare key: any value)."""
    sql = "SELECT id FROM books b WHERE 1 = 1"
    params: list = []
    for key, value in tags.items():
        if value:
            sql += " AND EXISTS (SELECT 1 FROM book_tags t WHERE t.book_id = b.id AND t.key = ? AND t.value = ?)"
            params += [key, value]
        else:
            sql += " AND EXISTS (SELECT 1 FROM book_tags t WHERE t.book_id = b.id AND t.key = ?)"
            params.append(key)
    return [r[0] for r in project.db.execute(sql + " ORDER BY id", params).fetchall()]


def books_with_tag(project: "Project", key: str, value: str) -> list[int]:
    rows = project.db.execute("SELECT book_id FROM book_tags WHERE key = ? AND value = ? ORDER BY book_id", [key, value])
    return [r[0] for r in rows.fetchall()]
