"""Importing books into a project: files, folders and Gutenberg numbers in one go, with a report.

Each book is stored in one transaction (its row, its text and its tags together), so a crash or a
cancel never leaves half a book behind. A book whose text is already in the library (same SHA-256
of the stored text) is not added again. One bad file never stops the others: it is listed in the
report with what went wrong and what to do.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from workbench.corpus.library import clean_field, list_books, set_tags, update_book
from workbench.corpus.metadata import MetadataTable, read_metadata_csv
from workbench.corpus.sources import BookDraft, Source, expand_paths, read_source
from workbench.corpus.stats import count_words
from workbench.errors import CancelledError, UserError
from workbench.progress import TaskState
from workbench.project import now

if TYPE_CHECKING:
    from workbench.project import Project

log = logging.getLogger(__name__)
MAX_LISTED = 10  # failures and duplicates listed one by one in a summary before "and N more"


@dataclass
class AddedBook:
    book_id: int
    title: str
    author: str
    source: str


@dataclass
class Duplicate:
    source: str
    book_id: int
    title: str


@dataclass
class Failure:
    source: str
    message: str


@dataclass
class ImportReport:
    added: list[AddedBook] = field(default_factory=list)
    duplicates: list[Duplicate] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # files in folders that are not books
    updated: list[int] = field(default_factory=list)  # books already in the library given new metadata
    notes: list[str] = field(default_factory=list)
    cancelled: bool = False

    @property
    def everything_failed(self) -> bool:
        return bool(self.failures) and not (self.added or self.duplicates or self.updated)

    def summary(self) -> str:
        """Plain sentences for the scholar: what was added, what was there already, what failed and why."""
        lines = []
        if self.cancelled:
            lines.append("Import stopped at your request. The books below were imported before it stopped.")
        lines.append(f"Added {_books(len(self.added))}." if self.added else "No new books were added.")
        if self.duplicates:
            lines.append(f"{_books(len(self.duplicates), capital=True)} already in the library, so not added again:")
            lines += [f"  • {d.source} (same text as “{d.title}”, book {d.book_id})" for d in self.duplicates[:MAX_LISTED]]
            lines += _more(len(self.duplicates))
        if self.updated:
            lines.append(f"Updated the metadata of {_books(len(self.updated))}.")
        if self.failures:
            count = len(self.failures)
            lines.append(f"{count} {'file' if count == 1 else 'files'} could not be imported:")
            lines += [f"  • {f.message}" for f in self.failures[:MAX_LISTED]]
            lines += _more(count)
        if self.skipped:
            shown = ", ".join(self.skipped[:MAX_LISTED]) + (", …" if len(self.skipped) > MAX_LISTED else "")
            lines.append(f"Skipped {len(self.skipped)} other file(s) in the folder(s), as only .txt and .epub files are books: {shown}.")
        lines += self.notes
        return "\n".join(lines)


def _books(n: int, capital: bool = False) -> str:
    text = f"{n} book" + ("" if n == 1 else "s")
    if capital:
        return text + (" was" if n == 1 else " were")
    return text


def _more(count: int) -> list[str]:
    return [f"  • and {count - MAX_LISTED} more"] if count > MAX_LISTED else []


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _find_by_hash(project: "Project", digest: str) -> tuple[int, str] | None:
    row = project.db.execute("SELECT id, title FROM books WHERE content_hash = ?", [digest]).fetchone()
    return (row[0], row[1]) if row else None


def store_book(project: "Project", draft: BookDraft) -> tuple[int, bool]:
    """Store one book in one transaction. Returns (book id, True) or, for a known text, (its id, False)."""
    digest = content_hash(draft.text)
    existing = _find_by_hash(project, digest)
    if existing:
        return existing[0], False
    db = project.db
    try:
        with db.transaction():
            book_id = db.execute(
                "INSERT INTO books (title, author, year, language, source_kind, source_name, external_id, "
                "content_hash, words, added_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [draft.title and clean_field(draft.title), draft.author and clean_field(draft.author), draft.year, draft.language,
                 draft.source_kind, draft.source_name, draft.external_id, digest, count_words(draft.text), now()],
            ).lastrowid
            db.execute("INSERT INTO book_texts (book_id, text) VALUES (?, ?)", [book_id, draft.text])
            db.conn.executemany(
                "INSERT INTO book_tags (book_id, key, value) VALUES (?, ?, ?)",
                [(book_id, clean_field(key), clean_field(value)) for key, value in draft.tags.items()],
            )
    except sqlite3.IntegrityError:
        existing = _find_by_hash(project, digest)  # another import stored the same text a moment ago
        if existing is None:
            raise
        return existing[0], False
    return book_id, True


def _apply_to_draft(table: MetadataTable, draft: BookDraft, report: ImportReport) -> None:
    row = table.match(external_id=draft.external_id, source_name=draft.source_name)
    if row is None:
        return
    meta = table.book_metadata(row)
    for name, value in meta.fields.items():
        setattr(draft, name, value)
    draft.tags.update(meta.tags)
    report.notes += meta.notes


def _apply_to_existing(project: "Project", table: MetadataTable, book_id: int, *, external_id, source_name,
                       report: ImportReport) -> None:
    row = table.match(book_id=book_id, external_id=external_id, source_name=source_name)
    if row is None:
        return
    meta = table.book_metadata(row)
    if meta.fields:
        update_book(project, book_id, **meta.fields)
    if meta.tags:
        set_tags(project, book_id, meta.tags)
    report.notes += meta.notes
    if meta.fields or meta.tags:
        report.updated.append(book_id)


def apply_metadata(project: "Project", metadata_csv: str | Path, state: TaskState | None = None) -> ImportReport:
    """Give the books already in the library the titles, authors, years and tags of a metadata table."""
    table = read_metadata_csv(metadata_csv)
    report = ImportReport(notes=list(table.notes))
    books = list_books(project)
    for i, book in enumerate(books):
        if state is not None:
            state.check()
            state.progress(i, len(books), f"Applying {table.name}")
        _apply_to_existing(project, table, book.id, external_id=book.external_id, source_name=book.source_name,
                           report=report)
    _note_unmatched(table, report)
    return report


def _note_unmatched(table: MetadataTable, report: ImportReport) -> None:
    unmatched = table.unmatched_rows()
    if unmatched:
        shown = "; ".join(table.describe(r) for r in unmatched[:MAX_LISTED])
        if len(unmatched) > MAX_LISTED:
            shown += f" and {len(unmatched) - MAX_LISTED} more"
        report.notes.append(
            f"{len(unmatched)} line(s) of {table.name} matched no book: {shown}. "
            "Check the file names or numbers in those lines."
        )


def _import_one(project: "Project", source: Source, table: MetadataTable | None, report: ImportReport,
                mirror: str | None, state: TaskState) -> None:
    draft = read_source(source, mirror=mirror, state=state)
    if table is not None:
        _apply_to_draft(table, draft, report)
    state.check()  # last chance to stop before writing
    book_id, added = store_book(project, draft)
    report.notes += draft.notes
    if added:
        report.added.append(AddedBook(book_id, draft.title, draft.author, source.label))
        return
    title = project.db.execute("SELECT title FROM books WHERE id = ?", [book_id]).fetchone()[0]
    report.duplicates.append(Duplicate(source.label, book_id, title))
    if table is not None:
        _apply_to_existing(project, table, book_id, external_id=draft.external_id, source_name=draft.source_name,
                           report=report)


def import_paths(
    project: "Project",
    paths: Iterable[str | Path],
    metadata_csv: str | Path | None = None,
    state: TaskState | None = None,
    *,
    gutenberg_ids: Iterable[int | str] = (),
    mirror: str | None = None,
) -> ImportReport:
    """Import files, folders (searched for .txt and .epub) and Project Gutenberg numbers.

    With only a metadata table, its titles, authors, years and tags are given to the books already in
    the library. A metadata table that cannot be used stops the import before anything is stored.
    """
    from workbench.corpus.download import parse_gutenberg_id

    state = state or TaskState()
    paths = list(paths)
    ids = [parse_gutenberg_id(n) for n in gutenberg_ids]
    if not paths and not ids:
        if metadata_csv is None:
            raise UserError("Nothing to import: give files, folders or Project Gutenberg numbers.")
        return apply_metadata(project, metadata_csv, state)
    table = read_metadata_csv(metadata_csv) if metadata_csv is not None else None
    expanded = expand_paths(paths, ids)
    report = ImportReport(skipped=expanded.skipped, notes=list(table.notes) if table else [])
    report.failures += [
        Failure(p, f"There is no file or folder at {p}. Check the name and try again.") for p in expanded.missing
    ]
    total = len(expanded.sources)
    try:
        for i, source in enumerate(expanded.sources):
            state.check()
            state.progress(i, total, f"Importing {source.label}", failed=len(report.failures))
            try:
                _import_one(project, source, table, report, mirror, state)
            except UserError as exc:
                report.failures.append(Failure(source.label, str(exc)))
            except OSError as exc:
                report.failures.append(Failure(
                    source.label, f"{source.label} could not be read ({exc.strerror or exc}). Check that you may open it."
                ))
            except (CancelledError, MemoryError):
                raise
            except Exception as exc:  # a bug; the other books still deserve importing
                log.exception("Importing %s failed", source.label)
                report.failures.append(Failure(
                    source.label,
                    f"{source.label} could not be imported because of an unexpected problem ({exc}). "
                    "Please report it; the other books are not affected.",
                ))
        state.progress(total, total, "Import finished", failed=len(report.failures))
    except CancelledError:
        report.cancelled = True
    if table is not None:
        _note_unmatched(table, report)
    return report
